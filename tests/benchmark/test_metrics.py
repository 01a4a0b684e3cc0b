"""benchmark.metrics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmark import metrics

LABELS = [1, 1, 1, 0, 0]
PREDS = [1, 0, None, 0, 1]  # liked: hit, miss, unparseable; disliked: hit, miss


def test_accuracies_count_unparseable_as_wrong() -> None:
    assert metrics.good_acc(LABELS, PREDS) == pytest.approx(1 / 3)
    assert metrics.bad_acc(LABELS, PREDS) == pytest.approx(1 / 2)
    assert metrics.avg_acc(LABELS, PREDS) == pytest.approx(5 / 12)
    assert metrics.avg_acc([1, 0], [None, None]) == 0.0


def test_accuracy_without_a_class_is_nan() -> None:
    assert math.isnan(metrics.bad_acc([1, 1], [1, 0]))
    assert metrics.good_acc([1, 1], [1, 0]) == 0.5


def test_inputs_are_validated() -> None:
    with pytest.raises(ValueError, match="labels"):
        metrics.good_acc([1, 2], [1, 1])
    with pytest.raises(ValueError, match="expected 2 predictions"):
        metrics.good_acc([1, 0], [1])
    with pytest.raises(ValueError, match="1, 0 or None"):
        metrics.confusion([1, 0], [1, 3])


def test_confusion() -> None:
    c = metrics.confusion(LABELS, PREDS)
    assert (c.liked_as_liked, c.liked_as_disliked, c.liked_unparsed) == (1, 1, 1)
    assert (c.disliked_as_liked, c.disliked_as_disliked, c.disliked_unparsed) == (1, 1, 0)
    assert c.as_array().tolist() == [[1, 1, 1], [1, 1, 0]]


def test_auroc_with_ties() -> None:
    # pairs (liked, disliked): (.9,.4)=1 (.9,.1)=1 (.4,.4)=1/2 (.4,.1)=1 -> 3.5 / 4
    assert metrics.auroc([1, 1, 0, 0], [0.9, 0.4, 0.4, 0.1]) == pytest.approx(0.875)
    assert metrics.auroc([1, 0], [0.9, 0.1]) == 1.0
    assert metrics.auroc([1, 0], [0.1, 0.9]) == 0.0
    assert metrics.auroc([1, 0, 1, 0], [0.5] * 4) == 0.5
    assert math.isnan(metrics.auroc([1, 1], [0.2, 0.3]))


def test_ece_and_reliability_table() -> None:
    labels, scores = [1, 0, 1, 1], [0.95, 0.15, 0.65, 0.55]
    # 10 bins: gaps .05, .15, .35, .45, one item each -> 1.0 / 4
    assert metrics.ece(labels, scores, n_bins=10) == pytest.approx(0.25)
    # 2 bins: [0, .5) holds .15 (gap .15); [.5, 1] holds three (mean .7167, all liked)
    assert metrics.ece(labels, scores, n_bins=2) == pytest.approx(0.25)
    table = metrics.reliability_table(labels, scores, n_bins=2)
    assert [b.count for b in table] == [1, 3]
    assert table[1].mean_score == pytest.approx((0.95 + 0.65 + 0.55) / 3)
    assert table[1].frac_liked == 1.0
    assert metrics.reliability_table([1], [1.0], n_bins=4)[-1].count == 1  # 1.0 in the last bin
    assert metrics.ece([1, 0], [1.0, 0.0]) == 0.0
    with pytest.raises(ValueError, match="probabilities"):
        metrics.ece([1], [1.2])


def test_cohen_kappa() -> None:
    # p_o = 3/4; p_e = .5*.25 + .5*.75 = .5 -> (.75 - .5) / .5
    assert metrics.cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)
    assert metrics.cohen_kappa([1, 0, 1], [1, 0, 1]) == 1.0
    assert metrics.cohen_kappa([1, 1], [1, 1]) == 1.0
    # None is a category of its own: p_o = 1/2, p_e = 1/4 -> 1/3
    assert metrics.cohen_kappa([1, None], [1, 0]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="differ in length"):
        metrics.cohen_kappa([1], [1, 0])


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(1)
    labels = [1] * 60 + [0] * 60
    preds = [int(x) for x in rng.random(120) < 0.7]
    a = metrics.bootstrap_ci(metrics.avg_acc, labels, preds, n_resamples=300, seed=3)
    b = metrics.bootstrap_ci(metrics.avg_acc, labels, preds, n_resamples=300, seed=3)
    assert a == b
    assert a.low <= a.estimate <= a.high
    assert a.estimate == pytest.approx(metrics.avg_acc(labels, preds))
    assert 0.0 < a.high - a.low < 0.3
    perfect = metrics.bootstrap_ci(metrics.avg_acc, [1, 0, 1, 0], [1, 0, 1, 0], n_resamples=50)
    assert (perfect.low, perfect.high) == (1.0, 1.0)
    unparsed = metrics.bootstrap_ci(metrics.bad_acc, [1, 0, 0], [1, None, None], n_resamples=50)
    assert (unparsed.estimate, unparsed.high) == (0.0, 0.0)
