"""Leave-one-writer-out: no record is ever predicted by a model that saw its writer."""

from __future__ import annotations

import numpy as np
import pytest

from benchmark import crosswriter as cw

WRITERS = ["a"] * 6 + ["b"] * 6 + ["c"] * 6
LABELS = [1, 0] * 9


def test_each_writer_is_predicted_by_a_model_fitted_without_it() -> None:
    seen: list[tuple[set[str], set[str]]] = []
    w = np.asarray(WRITERS)

    def method(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, float]:
        seen.append((set(w[train]), set(w[test])))
        return np.full(test.size, 0.7), 0.5

    result = cw.leave_one_writer_out(WRITERS, LABELS, method)
    assert seen == [({"b", "c"}, {"a"}), ({"a", "c"}, {"b"}), ({"a", "b"}, {"c"})]
    assert np.all(result.p == 0.7) and result.liked.all()


def test_a_method_that_memorises_writers_gets_no_credit() -> None:
    # Labels follow the writer in training but flip in the held-out writer: a writer-keyed
    # lookup is perfect in-sample and worthless out of writer.
    labels = [1] * 6 + [0] * 6 + [1, 0] * 3
    lookup = {"a": 0.9, "b": 0.1, "c": 0.5}

    def method(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, float]:
        return np.array([lookup[WRITERS[i]] for i in test]), 0.5

    report = cw.report(cw.leave_one_writer_out(WRITERS, labels, method), resamples=50)
    assert report["per_writer"]["c"]["auroc"] == 0.5
    assert set(report["per_writer"]) == {"a", "b", "c"}


def test_the_length_baseline_learns_its_direction_from_the_training_writers() -> None:
    chars = [400, 20] * 9  # liked replies are long everywhere
    report = cw.report(
        cw.leave_one_writer_out(WRITERS, LABELS, cw.length_method(chars, LABELS)), resamples=50
    )
    assert report["pooled"]["auroc"] == 1.0 and report["pooled"]["avg_acc"] == 1.0
    flipped = [20, 400] * 9  # ... or short everywhere: still learnt, not assumed
    report = cw.report(
        cw.leave_one_writer_out(WRITERS, LABELS, cw.length_method(flipped, LABELS)), resamples=50
    )
    assert report["pooled"]["auroc"] == 1.0


def test_the_majority_baseline_is_at_chance() -> None:
    labels = [1, 1, 0] * 6
    report = cw.report(
        cw.leave_one_writer_out(WRITERS, labels, cw.majority_method(labels)), resamples=50
    )
    pooled = report["pooled"]
    assert pooled["auroc"] == 0.5 and pooled["good_acc"] == 1.0 and pooled["bad_acc"] == 0.0
    assert pooled["avg_acc"] == 0.5


def test_pooled_figures_carry_intervals() -> None:
    rng = np.random.default_rng(0)
    noise = rng.normal(size=len(LABELS))

    def method(train: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, float]:
        y = np.asarray(LABELS)[test]
        return 1 / (1 + np.exp(-(2 * y - 1 + noise[test]))), 0.5

    pooled = cw.report(cw.leave_one_writer_out(WRITERS, LABELS, method), resamples=200)["pooled"]
    low, high = pooled["auroc_ci"]
    assert low <= pooled["auroc"] <= high and high - low > 0


def test_pair_accuracy_counts_ties_as_half() -> None:
    p = np.array([0.9, 0.1, 0.5, 0.5, 0.2, 0.8])
    assert cw.pair_accuracy(p, [(0, 1), (2, 3), (4, 5)]) == pytest.approx(0.5)


def _report(auroc: float, pair: float | None = None) -> dict:
    pooled = {"auroc": auroc, "avg_acc": 0.8, "bad_acc": 0.8}
    report: dict = {
        "protocol": "leave-one-writer-out",
        "scorer": "grm",
        "writers": ["a", "b"],
        "per_writer": None,
        "task1_records": 10,
        "task3_contexts": 2,
        "task1": {"scorer": {"pooled": pooled}},
    }
    if pair is not None:
        report["task3"] = {"verdicts": {"pooled": {"avg_acc": 0.9}}, "pair_accuracy": pair}
    return report


def test_the_gate_passes_within_tolerance_and_names_each_regression() -> None:
    assert cw.regressions(_report(0.90, 0.95), _report(0.89, 0.94), tolerance=0.02) == []
    worse = cw.regressions(_report(0.90, 0.95), _report(0.85, 0.80), tolerance=0.02)
    assert worse == [
        "task1 auroc: 0.8500 < baseline 0.9000 - 0.02",
        "task3 pair_accuracy: 0.8000 < baseline 0.9500 - 0.02",
    ]


def test_the_gate_refuses_a_run_measured_another_way() -> None:
    other = _report(0.99) | {"writers": ["a"]}
    assert cw.regressions(_report(0.90), other, tolerance=0.02) == [
        "writers: baseline ['a', 'b'], candidate ['a']"
    ]
