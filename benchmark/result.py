"""What one benchmark run produced (`Report`), and its JSON form.

The JSON is the contract between a run, its rendered report and the gate, so it is
versioned (`schema`) and strict on load. NaN (a metric undefined on the data) is written
as null, because JSON has no NaN, and read back as NaN.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from benchmark.errors import BenchmarkError
from benchmark.metrics import Confusion, Interval, ReliabilityBin
from benchmark.provenance import DataSource

SCHEMA = 1

Status = Literal["scored", "unparseable", "missing"]
Metric = float | int | None
_STATUSES = ("scored", "unparseable", "missing")


class ReportFormatError(BenchmarkError):
    """A file that is not a benchmark report this version of uxmon can read."""


@dataclass(frozen=True, slots=True)
class ItemResult:
    """One item's outcome.

    `status` is "scored" (a valid Score), "unparseable" (the scorer raised, returned no
    score for it, or an invalid one) or "missing" (no reply was supplied, tasks 2 and 3).
    `outcome` is the task's success (task 1: verdict matches label; tasks 2 and 3: verdict
    good) as 1/0, or None when the item is outside the headline's denominator.
    """

    cid: str
    label: int | None
    score: float | None
    verdict: str | None
    status: Status
    outcome: int | None
    groups: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cid": self.cid,
            "label": self.label,
            "score": self.score,
            "verdict": self.verdict,
            "status": self.status,
            "outcome": self.outcome,
            "groups": dict(self.groups),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ItemResult:
        status = data.get("status")
        if status not in _STATUSES:
            raise ReportFormatError(
                f"item {data.get('cid')!r}: expected status one of {', '.join(_STATUSES)}, "
                f"got {status!r}"
            )
        score = data.get("score")
        return cls(
            cid=str(data["cid"]),
            label=None if data.get("label") is None else int(data["label"]),
            score=None if score is None else float(score),
            verdict=None if data.get("verdict") is None else str(data["verdict"]),
            status=cast(Status, status),
            outcome=None if data.get("outcome") is None else int(data["outcome"]),
            groups={str(k): str(v) for k, v in (data.get("groups") or {}).items()},
        )


@dataclass(slots=True)
class Report:
    """A benchmark run: which task and scorer, the task's metrics, and every item."""

    task: str
    task_version: str
    headline: str  # the metric the gate compares, e.g. "avg_acc"
    scorer: str
    scorer_version: str
    n: int
    metrics: dict[str, Metric]
    intervals: dict[str, Interval]
    breakdowns: dict[str, list[dict[str, Any]]]
    reliability: list[ReliabilityBin]
    confusion: Confusion | None
    source: DataSource
    created: str  # ISO 8601, UTC
    elapsed_s: float
    errors: dict[str, int]  # scorer failures by kind and by exception type
    items: list[ItemResult]
    schema: int = SCHEMA

    def to_dict(self) -> dict[str, Any]:
        data = {
            "schema": self.schema,
            "task": self.task,
            "task_version": self.task_version,
            "headline": self.headline,
            "scorer": self.scorer,
            "scorer_version": self.scorer_version,
            "n": self.n,
            "metrics": dict(self.metrics),
            "intervals": {k: _interval_dict(v) for k, v in self.intervals.items()},
            "breakdowns": self.breakdowns,
            "reliability": [_bin_dict(b) for b in self.reliability],
            "confusion": None if self.confusion is None else _confusion_dict(self.confusion),
            "source": self.source.to_dict(),
            "created": self.created,
            "elapsed_s": self.elapsed_s,
            "errors": dict(self.errors),
            "items": [item.to_dict() for item in self.items],
        }
        return cast(dict[str, Any], _json_safe(data))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, indent=2) + "\n"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Report:
        if not isinstance(data, Mapping):
            raise ReportFormatError(f"expected a report object, got {type(data).__name__}")
        missing = [k for k in _REQUIRED if k not in data]
        if missing:
            raise ReportFormatError(
                f"expected a uxmon benchmark report (schema {SCHEMA}); missing keys: "
                f"{', '.join(missing)}"
            )
        if data["schema"] != SCHEMA:
            raise ReportFormatError(f"expected report schema {SCHEMA}, got {data['schema']!r}")
        try:
            confusion = data.get("confusion")
            return cls(
                task=str(data["task"]),
                task_version=str(data["task_version"]),
                headline=str(data["headline"]),
                scorer=str(data["scorer"]),
                scorer_version=str(data["scorer_version"]),
                n=int(data["n"]),
                metrics=dict(data["metrics"]),
                intervals={k: _interval(v) for k, v in data.get("intervals", {}).items()},
                breakdowns=dict(data.get("breakdowns", {})),
                reliability=[_bin(b) for b in data.get("reliability", [])],
                confusion=None if confusion is None else Confusion(**confusion),
                source=DataSource.from_dict(data["source"]),
                created=str(data["created"]),
                elapsed_s=float(data.get("elapsed_s", 0.0)),
                errors={str(k): int(v) for k, v in data.get("errors", {}).items()},
                items=[ItemResult.from_dict(i) for i in data["items"]],
            )
        except ReportFormatError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ReportFormatError(
                f"expected a uxmon benchmark report (schema {SCHEMA}); a field has the wrong "
                f"shape: {type(exc).__name__}"
            ) from None


_REQUIRED = (
    "schema",
    "task",
    "task_version",
    "headline",
    "scorer",
    "scorer_version",
    "n",
    "metrics",
    "source",
    "created",
    "items",
)


def load_report(path: str | os.PathLike[str]) -> Report:
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportFormatError(f"could not read report {file}: {type(exc).__name__}") from None
    except json.JSONDecodeError as exc:
        raise ReportFormatError(
            f"expected a JSON report in {file}; JSON error at char {exc.pos}"
        ) from None
    return Report.from_dict(data)


def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def _nan(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _interval_dict(interval: Interval) -> dict[str, float]:
    return {
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
    }


def _interval(data: Mapping[str, Any]) -> Interval:
    return Interval(
        _nan(data["estimate"]), _nan(data["low"]), _nan(data["high"]), float(data["level"])
    )


def _bin_dict(b: ReliabilityBin) -> dict[str, float | int]:
    return {
        "low": b.low,
        "high": b.high,
        "count": b.count,
        "mean_score": b.mean_score,
        "frac_liked": b.frac_liked,
    }


def _bin(data: Mapping[str, Any]) -> ReliabilityBin:
    return ReliabilityBin(
        float(data["low"]),
        float(data["high"]),
        int(data["count"]),
        _nan(data["mean_score"]),
        _nan(data["frac_liked"]),
    )


def _confusion_dict(c: Confusion) -> dict[str, int]:
    return {
        "liked_as_liked": c.liked_as_liked,
        "liked_as_disliked": c.liked_as_disliked,
        "liked_unparsed": c.liked_unparsed,
        "disliked_as_liked": c.disliked_as_liked,
        "disliked_as_disliked": c.disliked_as_disliked,
        "disliked_unparsed": c.disliked_unparsed,
    }
