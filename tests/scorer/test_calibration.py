"""Calibration functions against values worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scorer.calibration import (
    CalibrationError,
    auroc,
    balanced_accuracy,
    balanced_threshold,
    binary_nll,
    ece,
    fit_temperature,
    judge_metrics,
    sigmoid,
)
from scorer.errors import ScorerError


def test_sigmoid_is_stable_at_extremes() -> None:
    out = sigmoid(np.array([-1000.0, 0.0, 1000.0]))
    assert out.tolist() == [0.0, 0.5, 1.0]


def test_temperature_matches_the_empirical_rate() -> None:
    # All logits 1, three of four liked: the NLL optimum has sigmoid(1/T) = 3/4,
    # so 1/T = ln 3 and T = 1/ln 3.
    t = fit_temperature([1.0, 1.0, 1.0, 1.0], [1, 1, 1, 0])
    assert t == pytest.approx(1.0 / math.log(3.0), rel=1e-6)


def test_temperature_on_symmetric_logits() -> None:
    # z = +2 liked 3 of 4, z = -2 disliked 3 of 4: sigmoid(2/T) = 3/4 gives T = 2/ln 3.
    logits = [2.0] * 4 + [-2.0] * 4
    labels = [1, 1, 1, 0, 0, 0, 0, 1]
    t = fit_temperature(logits, labels)
    assert t == pytest.approx(2.0 / math.log(3.0), rel=1e-6)
    assert binary_nll(logits, labels, t) < binary_nll(logits, labels, 1.0)


def test_uninformative_logits_hit_the_upper_bound() -> None:
    # Same logit, one liked and one disliked: the best probability is 1/2, i.e. T → ∞.
    assert fit_temperature([2.0, 2.0], [1, 0], bounds=(0.1, 10.0)) == pytest.approx(10.0)


def test_threshold_picks_the_best_gap_nearest_one_half() -> None:
    # Sorted scores 0.1(bad) 0.35(good) 0.4(bad) 0.8(good). Cuts in the gaps give balanced
    # accuracy 0.75 at 0.225, 0.5 at 0.375, 0.75 at 0.6; the tie goes to 0.6 (nearer 0.5).
    p, y = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    assert balanced_threshold(p, y) == pytest.approx(0.6)
    assert balanced_accuracy(p, y, 0.6) == pytest.approx(0.75)


def test_threshold_on_separable_scores_is_the_midpoint() -> None:
    assert balanced_threshold([0.2, 0.3, 0.7, 0.9], [0, 0, 1, 1]) == pytest.approx(0.5)


def test_threshold_can_call_everything_bad_when_that_is_best() -> None:
    # The one liked turn scores lowest; every cut is 0.5 balanced accuracy, so the
    # threshold nearest 0.5 wins and the fitted data still separates as claimed.
    t = balanced_threshold([0.1, 0.6, 1.0], [1, 0, 0])
    assert balanced_accuracy([0.1, 0.6, 1.0], [1, 0, 0], t) == pytest.approx(0.5)


def test_ece_by_hand() -> None:
    # Bin [0.1, 0.2): mean p 0.1, liked-rate 0.5, weight 2/4 → 0.2.
    # Bin [0.9, 1.0]: mean p 0.9, liked-rate 1.0, weight 2/4 → 0.05.
    assert ece([0.1, 0.1, 0.9, 0.9], [0, 1, 1, 1]) == pytest.approx(0.25)
    assert ece([0.0, 1.0], [0, 1]) == pytest.approx(0.0)


def test_auroc_by_hand() -> None:
    # Liked scores 0.35, 0.8 vs disliked 0.1, 0.4: 3 of 4 pairs ordered right.
    assert auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == pytest.approx(0.75)
    assert auroc([0.5, 0.5], [1, 0]) == pytest.approx(0.5)
    assert auroc([0.9, 0.1], [1, 0]) == pytest.approx(1.0)


def test_judge_metrics_by_hand() -> None:
    m = judge_metrics([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1], threshold=0.6)
    assert (m.good_acc, m.bad_acc, m.avg_acc) == (0.5, 1.0, 0.75)
    assert (m.n_liked, m.n_disliked) == (2, 2)
    assert set(m.as_dict()) >= {"good_acc", "bad_acc", "avg_acc", "auroc", "ece"}


@pytest.mark.parametrize(
    ("scores", "labels"),
    [
        ([], []),
        ([0.5], [1, 0]),
        ([0.5, 0.5], [1, 2]),
        ([float("nan"), 0.5], [1, 0]),
    ],
)
def test_bad_input_raises_a_scorer_error(scores: list[float], labels: list[int]) -> None:
    with pytest.raises(ScorerError):
        ece(scores, labels)


def test_one_class_cannot_set_a_threshold() -> None:
    with pytest.raises(CalibrationError, match="both liked and disliked"):
        balanced_threshold([0.2, 0.9], [1, 1])
