"""Which metrics the dashboards query, checked against the metric catalogue both ways.

A panel must not query a metric the worker does not export (the panel would stay empty),
and every exported metric must be on some dashboard or declared in INTERNAL with a reason
(and documented in docs/metrics.md), so a new metric is never silently invisible.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

#: Exported metrics deliberately on no dashboard: metric name -> why. Each must also be in
#: docs/metrics.md. Empty today: every metric the worker exports is on a dashboard.
INTERNAL: dict[str, str] = {}

HISTOGRAM_SERIES_SUFFIXES = ("_bucket", "_sum", "_count")
_METRIC_NAME = re.compile(r"\buxmon_[a-zA-Z0-9_]+")
_RECORDED_NAME = re.compile(r"\buxmon:[a-zA-Z0-9_:]+")


def panel_queries(dashboard: Mapping[str, Any]) -> Iterator[str]:
    """Every PromQL expression of a dashboard's panels (rows' nested panels included)."""
    for panel in dashboard.get("panels", []):
        for target in panel.get("targets", []):
            if target.get("expr"):
                yield target["expr"]
        yield from panel_queries(panel)


def variable_queries(dashboard: Mapping[str, Any]) -> Iterator[str]:
    for variable in dashboard.get("templating", {}).get("list", []):
        query = variable.get("query")
        if variable.get("type") == "query" and isinstance(query, str):
            yield query


def metric_names(expr: str) -> set[str]:
    """uxmon series names in a PromQL expression."""
    return set(_METRIC_NAME.findall(expr))


def recorded_series(dashboards: Iterable[Mapping[str, Any]]) -> set[str]:
    """Recording-rule series (`uxmon:...`) the dashboards query."""
    return {
        name
        for dashboard in dashboards
        for expr in panel_queries(dashboard)
        for name in _RECORDED_NAME.findall(expr)
    }


def exported_name(series: str, exported: Iterable[str]) -> str:
    """The exported metric a series belongs to: a histogram's _bucket/_sum/_count series
    belong to the histogram; any other series is its own metric."""
    known = set(exported)
    for suffix in HISTOGRAM_SERIES_SUFFIXES:
        if series.endswith(suffix) and series.removesuffix(suffix) in known:
            return series.removesuffix(suffix)
    return series


def queried_metrics(dashboards: Iterable[Mapping[str, Any]], exported: Iterable[str]) -> set[str]:
    known = set(exported)
    return {
        exported_name(series, known)
        for dashboard in dashboards
        for expr in (*panel_queries(dashboard), *variable_queries(dashboard))
        for series in metric_names(expr)
    }


def unknown_metrics(dashboards: Iterable[Mapping[str, Any]], exported: Iterable[str]) -> set[str]:
    """Metrics the dashboards query that the worker does not export."""
    known = set(exported)
    return queried_metrics(dashboards, known) - known


def uncovered_metrics(
    dashboards: Iterable[Mapping[str, Any]],
    exported: Iterable[str],
    internal: Mapping[str, str] = INTERNAL,
) -> set[str]:
    """Exported metrics on no dashboard and not declared internal."""
    known = set(exported)
    return known - queried_metrics(dashboards, known) - set(internal)


def undocumented_internal(internal: Mapping[str, str], catalogue: str) -> set[str]:
    """INTERNAL entries missing from the metrics catalogue text (docs/metrics.md), or
    declared without a reason."""
    return {
        name
        for name, reason in internal.items()
        if f"`{name}`" not in catalogue or not reason.strip()
    }
