"""Every PromQL expression uxmon ships, run on a real Prometheus that scrapes a real worker.

The worker (real UX-Judge, the GRM cascade with a small budget and a stand-in GRM, periodic
validation on the bundled held-out set) scores a quarter of the bundled sample traffic plus
a few malformed records; a
real Prometheus scrapes it every second with uxmon's recording and alert rules loaded.
Then every rule expression in deploy/prometheus/rules/*.yml and every `expr` of the
dashboards in dashboards/json/*.json is sent to its HTTP API.

A failure names every expression that errors, every recording/dashboard expression that
returns no series although every metric it reads has data, every selector that matches
nothing although its metric has data (a typo in a label name or value), and every metric
read that has no data at all unless NO_DATA_HERE explains why it cannot have any here.
Alert expressions normally return nothing (nothing is wrong), so for them only errors and
selectors are checked.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from stream.local import LocalWorker
from tests.deploy.test_prometheus_rules import (
    REPO,
    load_rules,
    recorded_exprs,
    rule_files,
    selectors,
    series_names,
    underlying_metrics,
)
from tests.support.prometheus import Prometheus
from tests.support.services import produce, read_topic

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]

DASHBOARDS = REPO / "dashboards" / "json"
SAMPLE_TRAFFIC = REPO / "stream" / "data" / "sample_traffic.jsonl"
# Validation data whose labels the shipped judge agrees with (it was trained on this
# writer): the corrected-rate rules need a scorer better than chance (Youden J > 0), and
# this test is about the plumbing from validation to rules, not about quality.
HELDOUT = REPO / "benchmark" / "data" / "writers" / "task1" / "w04.jsonl"

# Grafana's built-in intervals, as a dashboard would send them for a short time range.
GRAFANA_INTERVALS = {"__rate_interval": "1m", "__interval": "1m", "__range": "5m"}

# Metrics that cannot have data in this test, and why. Everything else must have series.
NO_DATA_HERE = {
    "uxmon_scorer_errors_total": "no scorer fails in a healthy run; the counter is "
    "labelled by scorer, so it appears with the first error",
}

# Selectors that may match nothing here although their metric has data, and why; keyed
# by metric and a matcher the selector contains. An expression whose only gap is such a
# selector may return nothing.
EMPTY_SELECTORS_HERE = {
    ("uxmon_benchmark_metric", 'metric=~"good_pct|recovery_rate"'): "the worker validates "
    "on task 1 only; task-2/3 metrics need a set of generated replies to judge",
}


def allowed_empty(selector: str) -> bool:
    name = selector.split("{", 1)[0]
    return any(name == metric and matcher in selector for metric, matcher in EMPTY_SELECTORS_HERE)


@dataclass(frozen=True)
class Expression:
    source: str  # file and rule name or panel
    expr: str
    kind: str  # "record", "alert", "dashboard" or "exemplars" (a panel query asking for them)


def rule_expressions() -> Iterator[Expression]:
    for path in rule_files():
        for rule in load_rules(path):
            kind = "record" if "record" in rule else "alert"
            yield Expression(
                f"{path.name}:{rule.get('record') or rule['alert']}", rule["expr"], kind
            )


def grafana_to_promql(expr: str, variables: dict[str, str]) -> str:
    """A dashboard query as Prometheus would receive it from Grafana."""
    for name, value in {**GRAFANA_INTERVALS, **variables}.items():
        expr = expr.replace(f"${{{name}}}", value).replace(f"${name}", value)
    return expr


_LABEL_VALUES = re.compile(r"label_values\(\s*(?:(.+?)\s*,\s*)?(\w+)\s*\)$")


def label_values(prometheus: Prometheus, query: str) -> list[str]:
    """Grafana's `label_values([series,] label)` variable query, through the HTTP API."""
    match = _LABEL_VALUES.match(query.strip())
    if match is None:
        raise ValueError(f"expected label_values([series,] label), got {query!r}")
    series, label = match.groups()
    params = {"match[]": series} if series else {}
    response = httpx.get(f"{prometheus.url}/api/v1/label/{label}/values", params=params, timeout=10)
    values: list[str] = response.json()["data"]
    return sorted(values)


def dashboard_variables(
    prometheus: Prometheus, dashboard: dict[str, Any], source: str
) -> tuple[dict[str, str], list[str]]:
    """Each template variable's value as Grafana would first send it: 'All' where the
    variable allows it, else its saved current value if the query finds it, else the
    first value the query finds. Also the problems: a variable whose query finds nothing."""
    values: dict[str, str] = {}
    problems = []
    for variable in dashboard.get("templating", {}).get("list", []):
        name = variable["name"]
        query = variable.get("query")
        if variable.get("type") != "query":
            values[name] = str((variable.get("current") or {}).get("value", ""))
            continue
        text = query.get("query", "") if isinstance(query, dict) else str(query or "")
        found = label_values(prometheus, text)
        if not found:
            problems.append(f"{source}: variable ${name} ({text}) finds no values")
        saved = str((variable.get("current") or {}).get("value", ""))
        if variable.get("includeAll"):
            values[name] = variable.get("allValue") or ".*"
        elif saved in found:
            values[name] = saved
        else:
            values[name] = found[0] if found else ""
    return values, problems


def _exprs_in(document: Any, *, exemplars_only: bool = False) -> Iterator[str]:
    """The `expr` of every query in `document`; only those that ask for exemplars."""
    if isinstance(document, dict):
        asks = document.get("exemplar") is True or not exemplars_only
        for key, value in document.items():
            if key == "expr" and isinstance(value, str):
                if asks:
                    yield value
            else:
                yield from _exprs_in(value, exemplars_only=exemplars_only)
    elif isinstance(document, list):
        for item in document:
            yield from _exprs_in(item, exemplars_only=exemplars_only)


def dashboard_expressions(prometheus: Prometheus) -> tuple[list[Expression], list[str]]:
    """Every panel query of dashboards/json/*.json (none before that directory exists)."""
    expressions: list[Expression] = []
    problems: list[str] = []
    for path in sorted(DASHBOARDS.glob("*.json")) if DASHBOARDS.is_dir() else []:
        dashboard = json.loads(path.read_text())
        variables, unset = dashboard_variables(prometheus, dashboard, path.name)
        problems += unset
        panels = dashboard.get("panels", [])
        for i, expr in enumerate(_exprs_in(panels)):
            query = grafana_to_promql(expr, variables)
            expressions.append(Expression(f"{path.name}#{i}", query, "dashboard"))
        for expr in _exprs_in(panels, exemplars_only=True):
            query = grafana_to_promql(expr, variables)
            expressions.append(Expression(f"{path.name} exemplars", query, "exemplars"))
    return expressions, problems


def live_traffic(path: Path, end: datetime, every: int) -> list[dict[str, Any]]:
    """Every `every`-th conversation of the sample, shifted in time so the last event
    happens at `end`; gaps between turns (which reactions read) stay as recorded."""
    events = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    order = list(dict.fromkeys(e["conversation_id"] for e in events))
    kept = set(order[::every])
    events = [e for e in events if e["conversation_id"] in kept]
    last = max(datetime.fromisoformat(e["ts"]) for e in events)
    shift = end - last
    for event in events:
        event["ts"] = (datetime.fromisoformat(event["ts"]) + shift).isoformat()
    return events


MALFORMED: list[tuple[bytes | None, bytes]] = [
    (b"broken-1", b'{"schema_version": 1, "type": '),
    (b"broken-2", b"[1, 2, 3]"),
    (b"broken-3", json.dumps({"schema_version": 2, "type": "turn"}).encode()),
]


def wait_until(check: Callable[[], bool], what: str, worker: LocalWorker, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if not worker.alive():
            raise RuntimeError(f"worker exited while waiting for {what}:\n{worker.log_tail()}")
        if time.monotonic() > deadline:
            progress = {
                name: worker.total(name)
                for name in ("uxmon_events_consumed_total", "uxmon_turns_scored_total")
            }
            raise TimeoutError(
                f"no {what} after {timeout_s}s ({progress}); log:\n{worker.log_tail()}"
            )
        time.sleep(0.5)


# The series that carry the ids of the turns behind them (stream/accounting.py).
EXEMPLAR_SERIES = (
    "uxmon_turn_verdicts_total",
    "uxmon_turns_scored_total",
    "uxmon_reactions_total",
    "uxmon_recovery_episodes_closed_total",
    "uxmon_score_bucket",
)


def exemplar_problems(
    prometheus: Prometheus, events: list[dict[str, Any]], panels: list[Expression]
) -> list[str]:
    """Series, and dashboard queries that ask for exemplars, without stored exemplars; and
    exemplars that are not the ids of an assistant turn sent."""
    turns = {(e["conversation_id"], e["turn_id"]) for e in events if e.get("role") == "assistant"}
    found = []
    for name in [*EXEMPLAR_SERIES, *(e.expr for e in panels if e.kind == "exemplars")]:
        exemplars = prometheus.exemplars(name)
        if not exemplars:
            found.append(f"{name}: no exemplar stored")
        for ids in exemplars:
            if ids.keys() != {"conversation_id", "turn_id"}:
                found.append(f"{name}: exemplar labels {sorted(ids)}, expected the two ids")
            elif (ids["conversation_id"], ids["turn_id"]) not in turns:
                found.append(f"{name}: exemplar {ids} is no assistant turn of the traffic")
    return found


def rule_health(prometheus: Prometheus) -> list[str]:
    """Rules Prometheus failed to evaluate (e.g. many-to-many matching on real data)."""
    body = httpx.get(f"{prometheus.url}/api/v1/rules", timeout=10).json()
    return [
        f"{rule['name']}: {rule.get('lastError')}"
        for group in body["data"]["groups"]
        for rule in group["rules"]
        if rule.get("health") == "err"
    ]


class Checker:
    def __init__(self, prometheus: Prometheus) -> None:
        self.prometheus = prometheus
        self.recorded = recorded_exprs()
        self._has_data: dict[str, bool] = {}

    def has_data(self, selector: str) -> bool:
        if selector not in self._has_data:
            self._has_data[selector] = bool(self.prometheus.query(f"count({selector})"))
        return self._has_data[selector]

    def problems(self, expression: Expression) -> list[str]:
        where = f"{expression.source} ({expression.kind})"
        try:
            result = self.prometheus.query(expression.expr)
        except ValueError as error:
            return [f"{where}: error: {error}"]
        found = []
        metrics = underlying_metrics(expression.expr, self.recorded)
        without = {m for m in metrics if not self.has_data(m)}
        found += [f"{where}: metric {m} has no data" for m in sorted(without - NO_DATA_HERE.keys())]
        # A window in the past (`offset 1d`) has no data in a run that started minutes ago,
        # nor does a guard on a minimum count (`>= 100` thumbs in a week) pass in one.
        cannot_fill_here = any(
            re.search(pattern, text)
            for pattern in (r"\boffset\b", r">=\s*\d{2,}\b")
            for text in [
                expression.expr,
                *(self.recorded[n] for n in series_names(expression.expr) if n in self.recorded),
            ]
        )
        explained = bool(without) or cannot_fill_here
        for selector in sorted(selectors(expression.expr)):
            name = selector.split("{", 1)[0]
            if name in self.recorded or not self.has_data(name) or self.has_data(selector):
                continue
            if allowed_empty(selector):
                explained = True
            else:
                found.append(f"{where}: selector {selector} matches nothing")
        if expression.kind != "alert" and not explained and not result:
            found.append(f"{where}: no series although its metrics have data")
        return found


def test_every_rule_and_dashboard_expression_runs_on_live_data(
    broker: str, names: dict[str, str], start_worker: Start, workdir: Path
) -> None:
    expressions = list(rule_expressions())
    assert any(e.kind == "record" for e in expressions)
    worker = start_worker(
        # The cascade's metrics are what is tested here, not the GRM's judgement: an instant
        # stand-in takes the GRM's place (the real one needs ~1 s a verdict on 2 busy cores).
        grm="tests.support.scorers:Keyword",
        # A budget far below the offered load, so budget skips happen too.
        grm_rate=0.2,
        grm_burst=2,
        grm_max_per_batch=1,
        validation_data=str(HELDOUT),
        validation_scorers="ux_judge",
        validation_limit="40",
        validation_initial_delay_s="0",
        validation_interval_s="3600",
        validation_report_dir=str(workdir / "reports"),
        labels_topic=f"labels-{names['app_id']}",  # so the labels panel has data too
    )
    target = f"127.0.0.1:{worker.metrics_port}"
    with Prometheus(workdir / "prometheus", [target], rule_files=rule_files()) as prometheus:
        # A quarter of the sample (60 conversations) shows every reaction and outcome.
        events = live_traffic(SAMPLE_TRAFFIC, datetime.now(UTC) - timedelta(seconds=5), 4)
        records = [
            (e["conversation_id"].encode(), json.dumps(e, ensure_ascii=False).encode())
            for e in events
        ]
        produce(broker, names["turns_topic"], [*records, *MALFORMED])
        assistant_turns = sum(e.get("role") == "assistant" for e in events)

        wait_until(
            lambda: worker.total("uxmon_turns_scored_total", scorer="ux_judge") >= assistant_turns,
            "judge verdict on every assistant turn",
            worker,
            timeout_s=150,
        )
        wait_until(
            lambda: bool(prometheus.query("uxmon_benchmark_last_success_timestamp_seconds")),
            "successful validation run in Prometheus",
            worker,
            timeout_s=120,
        )
        # Every series scraped at least twice more and every rule evaluated since.
        time.sleep(4)

        checker = Checker(prometheus)
        problems = rule_health(prometheus)
        panels, problems_of_variables = dashboard_expressions(prometheus)
        expressions += panels
        problems += problems_of_variables
        for expression in expressions:
            if expression.kind != "exemplars":
                problems += checker.problems(expression)
        problems += exemplar_problems(prometheus, events, panels)
        assert not problems, "\n".join(["PromQL problems on live data:", *problems])

        # The live validation counts equal those computed offline from the labels topic.
        labelled = {
            r["label_id"]: r
            for r in read_topic(broker, f"labels-{names['app_id']}", 1, timeout_s=30)
        }
        offline = Counter(
            (scorer, verdict, "liked" if r["ground_truth"] == 1 else "disliked", r["label_source"])
            for r in labelled.values()
            for scorer, verdict in r.get("verdicts", {}).items()
        )
        live = prometheus.query(
            "sum by (scorer, verdict, label, source) (uxmon_label_verdicts_total)"
        )
        counted = {
            tuple(s["metric"][k] for k in ("scorer", "verdict", "label", "source")): float(
                s["value"][1]
            )
            for s in live
        }
        assert {"explicit", "implicit"} <= {source for *_, source in offline}
        assert counted == {key: float(n) for key, n in offline.items()}
