"""Rogan–Gladen correction: the true share of dissatisfied turns from the share a scorer
flags, given how well the scorer is known to judge (from a Task-1 report).

With "positive" meaning dissatisfied,

    sensitivity = P(flagged bad | disliked) = Bad-Acc
    specificity = P(flagged good | liked)   = Good-Acc
    observed    = p·sens + (1 − p)·(1 − spec)
    ⇒ p = (observed + spec − 1) / (sens + spec − 1)

The denominator J = sens + spec − 1 (Youden's J) is how far the scorer is from chance.
When J ≤ 0 the observed rate says nothing about p (J = 0: it is the same for every p; J < 0:
the scorer is worse than a coin and the inversion would reward it for being inverted), so
the prevalence is not identifiable and `prevalence` is None, with the reason. Unknown
inputs (None or NaN, e.g. Bad-Acc from a report without disliked items) give None too.
Sampling noise can push the estimate outside [0, 1]; it is clipped and `clipped` says so.
As J falls the estimate's variance grows like 1/J², so a small J deserves little trust.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from benchmark.errors import BenchmarkError
from benchmark.result import Report


class CorrectionError(BenchmarkError, ValueError):
    """An input rate outside [0, 1], or a report that does not give sensitivity."""


@dataclass(frozen=True, slots=True)
class CorrectedPrevalence:
    """The corrected share of dissatisfied turns, with every input it used."""

    observed: float
    sensitivity: float
    specificity: float
    youden_j: float  # sensitivity + specificity − 1 (NaN when an input is unknown)
    prevalence: float | None  # None when not identifiable or an input is unknown
    clipped: bool
    reason: str  # why prevalence is None, else ""


def rogan_gladen(
    observed: float | None, sensitivity: float | None, specificity: float | None
) -> CorrectedPrevalence:
    """Corrected prevalence of dissatisfaction (see the module docstring)."""
    values = {"observed": observed, "sensitivity": sensitivity, "specificity": specificity}
    unknown = [name for name, v in values.items() if v is None or math.isnan(v)]
    for name, v in values.items():
        if v is not None and not math.isnan(v) and not 0.0 <= v <= 1.0:
            raise CorrectionError(f"expected {name} in [0, 1], got {v!r}")
    obs, sens, spec = (math.nan if v is None else float(v) for v in values.values())
    if unknown:
        return CorrectedPrevalence(
            obs, sens, spec, math.nan, None, False, f"unknown input: {', '.join(unknown)}"
        )
    j = sens + spec - 1
    if j <= 0:
        reason = f"not identifiable: sensitivity + specificity - 1 = {j:.4f} <= 0"
        return CorrectedPrevalence(obs, sens, spec, j, None, False, reason)
    raw = (obs + spec - 1) / j
    clipped = min(1.0, max(0.0, raw))
    return CorrectedPrevalence(obs, sens, spec, j, clipped, clipped != raw, "")


def from_report(report: Report, observed: float | None) -> CorrectedPrevalence:
    """Correct `observed` with the Bad-Acc (sensitivity) and Good-Acc (specificity) of a
    Task-1 report of the same scorer."""
    if "bad_acc" not in report.metrics or "good_acc" not in report.metrics:
        raise CorrectionError(
            f"expected a Task-1 report with good_acc and bad_acc, got a {report.task} report"
        )
    return rogan_gladen(
        observed, _rate(report.metrics["bad_acc"]), _rate(report.metrics["good_acc"])
    )


def _rate(value: float | int | None) -> float | None:
    return None if value is None else float(value)
