"""Rogan–Gladen correction against values computed by hand."""

from __future__ import annotations

import math

import pytest

from benchmark.correction import CorrectionError, from_report, rogan_gladen
from benchmark.errors import BenchmarkError
from benchmark.metrics import Interval
from benchmark.provenance import DataSource
from benchmark.result import Report


def test_corrected_prevalence_by_hand() -> None:
    # UXBench GRM: Bad-Acc 72.4 (sensitivity), Good-Acc 82.1 (specificity)
    c = rogan_gladen(0.30, 0.724, 0.821)
    assert c.youden_j == pytest.approx(0.545)
    assert c.prevalence == pytest.approx((0.30 + 0.821 - 1) / 0.545)  # 0.22202
    assert c.prevalence == pytest.approx(0.222018, abs=1e-6)
    assert (c.observed, c.sensitivity, c.specificity, c.clipped, c.reason) == (
        0.30,
        0.724,
        0.821,
        False,
        "",
    )


def test_a_perfect_scorer_changes_nothing() -> None:
    assert rogan_gladen(0.37, 1.0, 1.0).prevalence == pytest.approx(0.37)


def test_estimates_outside_the_unit_interval_are_clipped() -> None:
    low = rogan_gladen(0.1, 0.8, 0.8)  # (0.1 - 0.2) / 0.6 < 0
    assert low.prevalence == 0.0 and low.clipped
    high = rogan_gladen(0.95, 0.8, 0.8)  # (0.95 - 0.2) / 0.6 > 1
    assert high.prevalence == 1.0 and high.clipped


@pytest.mark.parametrize(("sens", "spec"), [(0.5, 0.5), (0.3, 0.6), (0.0, 0.0)])
def test_not_identifiable_when_no_better_than_chance(sens: float, spec: float) -> None:
    c = rogan_gladen(0.4, sens, spec)
    assert c.prevalence is None and "not identifiable" in c.reason
    assert c.youden_j == pytest.approx(sens + spec - 1)


def test_unknown_inputs_give_no_estimate() -> None:
    c = rogan_gladen(0.4, float("nan"), 0.9)
    assert c.prevalence is None and c.reason == "unknown input: sensitivity"
    assert math.isnan(c.youden_j)
    assert rogan_gladen(None, None, 0.9).reason == "unknown input: observed, sensitivity"


def test_rates_outside_the_unit_interval_are_errors() -> None:
    with pytest.raises(CorrectionError, match=r"expected specificity in \[0, 1\], got 1.2"):
        rogan_gladen(0.4, 0.8, 1.2)
    assert issubclass(CorrectionError, BenchmarkError)


def _report(task: str, metrics: dict[str, float | int | None]) -> Report:
    return Report(
        task,
        "1",
        "avg_acc",
        "s",
        "1",
        0,
        metrics,
        {"x": Interval(0, 0, 0, 0.95)},
        {},
        [],
        None,
        DataSource("d", (), ""),
        "t",
        0.0,
        {},
        [],
    )


def test_from_report_uses_bad_acc_as_sensitivity_and_good_acc_as_specificity() -> None:
    c = from_report(_report("task1", {"good_acc": 0.821, "bad_acc": 0.724}), 0.30)
    assert (c.sensitivity, c.specificity) == (0.724, 0.821)
    assert from_report(_report("task1", {"good_acc": 0.9, "bad_acc": None}), 0.3).prevalence is None
    with pytest.raises(CorrectionError, match="expected a Task-1 report"):
        from_report(_report("task2", {"good_pct": 0.5}), 0.3)
