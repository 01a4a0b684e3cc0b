"""The gate: a degraded scorer fails, an equal one passes; McNemar and the paired
bootstrap against values computed by hand."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from benchmark import gate
from benchmark.gate import GateError, binomial_two_sided, compare, mcnemar_exact, paired_bootstrap
from benchmark.result import Report
from benchmark.runner import run
from benchmark.tasks import Prepared, get_task
from scorer.types import Dialogue, Score, Verdict

DATA = Path(__file__).resolve().parents[1] / "data" / "uxbench"


def _share(cid: str, salt: str) -> float:
    """A stable pseudo-random number in [0, 1) per cid."""
    return int(hashlib.sha256(f"{salt}:{cid}".encode()).hexdigest()[:8], 16) / 2**32


class Oracle:
    """Knows the labels; wrong on a fixed ~12% of items. `flip` flips that share of its
    verdicts on top (the deliberately degraded candidate)."""

    name = "oracle"

    def __init__(self, labels: dict[str, int], flip: float = 0.0, version: str = "1") -> None:
        self.labels, self.flip, self.version = labels, flip, version

    def load(self) -> None: ...

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        out = []
        for d in batch:
            liked = self.labels[d.id] == 1
            if _share(d.id, "err") < 0.12:
                liked = not liked
            if _share(d.id, "flip") < self.flip:
                liked = not liked
            p = 0.8 if liked else 0.2
            out.append(Score(p, Verdict.GOOD if liked else Verdict.BAD, self.name, self.version, 0))
        return out


@pytest.fixture(scope="module")
def task1() -> Prepared:
    return get_task("task1").prepare(str(DATA))


@pytest.fixture(scope="module")
def baseline(task1: Prepared) -> Report:
    labels = {c.cid: int(c.label or 0) for c in task1.cases}
    return run(get_task("task1"), task1.cases, Oracle(labels), source=task1.source)


def _candidate(task1: Prepared, flip: float, version: str) -> Report:
    labels = {c.cid: int(c.label or 0) for c in task1.cases}
    return run(get_task("task1"), task1.cases, Oracle(labels, flip, version), source=task1.source)


# --- the two acceptance cases ---


def test_a_scorer_flipping_30_percent_of_verdicts_fails(task1: Prepared, baseline: Report) -> None:
    candidate = _candidate(task1, 0.30, "degraded")
    result = compare(baseline, candidate, tolerance=0.02, alpha=0.05)
    assert not result.passed
    assert result.n_paired == 260 and result.dropped == {
        "baseline_only": 0,
        "candidate_only": 0,
        "no_outcome": 0,
    }
    assert result.baseline == pytest.approx(baseline.metrics["avg_acc"])
    assert result.candidate == pytest.approx(candidate.metrics["avg_acc"])
    assert result.delta < -0.1 and result.ci.high < -0.02 and result.p_value < 1e-6
    assert result.b > result.c
    assert result.candidate_scorer == "oracle@degraded"


def test_an_equal_scorer_passes(task1: Prepared, baseline: Report) -> None:
    result = compare(baseline, _candidate(task1, 0.0, "same"), tolerance=0.02, alpha=0.05)
    assert result.passed and result.reason == "no drop beyond the tolerance"
    assert (result.delta, result.b, result.c, result.p_value) == (0.0, 0, 0, 1.0)
    assert (result.ci.low, result.ci.high) == (0.0, 0.0)


def test_a_better_candidate_passes(task1: Prepared, baseline: Report) -> None:
    degraded = _candidate(task1, 0.30, "degraded")
    assert compare(degraded, baseline).passed  # roles swapped: the candidate improved


# --- McNemar, by hand ---


def test_mcnemar_exact_by_hand() -> None:
    # b=10, c=2: 2 * (C(12,0) + C(12,1) + C(12,2)) / 2^12 = 2 * 79 / 4096
    assert binomial_two_sided(2, 12) == pytest.approx(158 / 4096)
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(2, 10) == pytest.approx(158 / 4096)
    assert mcnemar_exact(5, 5) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)


def test_the_exact_sum_agrees_with_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(0, 1), (3, 9), (40, 25), (200, 240), (7, 7)]:
        expected = stats.binomtest(c, b + c, 0.5).pvalue
        assert binomial_two_sided(min(b, c), b + c) == pytest.approx(expected, rel=1e-9)


def test_mcnemar_without_scipy(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_scipy(name: str, *args: object, **kwargs: object) -> object:
        if name.startswith("scipy"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)


# --- paired bootstrap ---


def test_paired_bootstrap_degenerate_and_seeded() -> None:
    base = np.ones(50, dtype=np.int64)
    worse = np.zeros(50, dtype=np.int64)
    all_worse = paired_bootstrap(base, worse, [np.arange(50)], 0.95, 500, 0)
    assert (all_worse.estimate, all_worse.low, all_worse.high) == (-1.0, -1.0, -1.0)
    rng = np.random.default_rng(7)
    b, c = rng.integers(0, 2, 400), rng.integers(0, 2, 400)
    first = paired_bootstrap(b, c, [np.arange(400)], 0.95, 2000, 0)
    assert first == paired_bootstrap(b, c, [np.arange(400)], 0.95, 2000, 0)
    assert first.estimate == pytest.approx(float(np.mean(c - b)))
    # close to the normal approximation of a mean difference
    se = float(np.std(c - b) / math.sqrt(400))
    assert first.low == pytest.approx(first.estimate - 1.96 * se, abs=0.01)
    assert first.high == pytest.approx(first.estimate + 1.96 * se, abs=0.01)


def test_stratified_estimate_is_the_mean_of_per_class_differences() -> None:
    # class liked: 4 pairs, candidate loses 2; class disliked: 2 pairs, candidate gains 1
    base = np.array([1, 1, 1, 1, 0, 0])
    cand = np.array([1, 1, 0, 0, 1, 0])
    strata = [np.arange(4), np.arange(4, 6)]
    interval = paired_bootstrap(base, cand, strata, 0.9, 200, 0)
    assert interval.estimate == pytest.approx(((-2 / 4) + (1 / 2)) / 2)


# --- the rule's boundaries and the pairing ---


def _flip_items(report: Report, cids: set[str]) -> Report:
    items = [replace(i, outcome=1 - (i.outcome or 0)) if i.cid in cids else i for i in report.items]
    return replace(report, items=items, scorer_version="edited")


def test_a_small_drop_is_within_tolerance(baseline: Report) -> None:
    right = [i.cid for i in baseline.items if i.outcome == 1]
    result = compare(baseline, _flip_items(baseline, set(right[:2])), tolerance=0.02)
    assert result.passed and result.delta < 0 and result.b == 2
    assert result.reason == "no drop beyond the tolerance"


def test_a_large_drop_on_few_items_is_not_significant(baseline: Report) -> None:
    few = replace(baseline, items=baseline.items[:3] + baseline.items[-3:])
    right = [i.cid for i in few.items if i.outcome == 1][:2]
    result = compare(few, _flip_items(few, set(right)), tolerance=0.02)
    assert result.delta < -0.02 and result.p_value >= 0.05
    assert result.passed and result.reason.startswith("drop not significant")


def test_pairs_on_common_cids_and_counts_what_was_dropped(baseline: Report) -> None:
    fewer = replace(baseline, items=baseline.items[10:])
    result = compare(baseline.to_dict(), fewer.to_dict())
    assert result.n_paired == 250 and result.dropped["baseline_only"] == 10


def test_reports_that_cannot_be_compared(baseline: Report) -> None:
    with pytest.raises(GateError, match="got none"):
        compare(
            baseline,
            replace(baseline, items=[replace(i, cid=i.cid + "-x") for i in baseline.items]),
        )
    with pytest.raises(GateError, match="same task"):
        compare(baseline, replace(baseline, task="task2"))
    relabelled = [replace(baseline.items[0], label=1 - (baseline.items[0].label or 0))]
    with pytest.raises(GateError, match="expected reports on the same data"):
        compare(baseline, replace(baseline, items=relabelled + baseline.items[1:]))
    with pytest.raises(GateError, match="tolerance >= 0"):
        compare(baseline, baseline, tolerance=-0.1)
    with pytest.raises(GateError, match=r"alpha in \(0, 1\)"):
        compare(baseline, baseline, alpha=1.0)


def test_version_and_data_differences_are_warned(baseline: Report) -> None:
    other = replace(
        baseline,
        task_version="2",
        source=replace(baseline.source, items_sha256="0" * 64),
    )
    warnings = compare(baseline, other).warnings
    assert any("task versions differ" in w for w in warnings)
    assert any("fingerprints differ" in w for w in warnings)


def _table_text(result: gate.GateResult) -> str:
    console = Console(record=True, width=120)
    console.print(gate.table(result))
    return console.export_text()


def test_table_shows_the_verdict(task1: Prepared, baseline: Report) -> None:
    text = _table_text(compare(baseline, _candidate(task1, 0.30, "degraded")))
    assert "FAIL" in text and "McNemar exact p" in text and "260 paired items" in text
    assert "drop beyond tolerance" in text and "drop is not chance" in text
    assert "wholly beyond tolerance" in text and "3 of 3 against the candidate" in text


def test_a_passing_table_has_no_finding_that_reads_as_failure(
    task1: Prepared, baseline: Report
) -> None:
    """A PASS beside 'met: no' read backwards: each finding now says what it found."""
    text = _table_text(compare(baseline, _candidate(task1, 0.0, "same")))
    assert "PASS" in text and "FAIL:" not in text
    assert "no drop" in text and "could be chance" in text and "reaches within tolerance" in text
    assert "0 of 3 against the candidate" in text
    assert "beyond tolerance" not in text
    improved = _table_text(compare(_candidate(task1, 0.30, "degraded"), baseline))
    assert "PASS" in improved and "gain is not chance" in improved
    assert "0 of 3 against the candidate" in improved
