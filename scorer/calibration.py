"""Calibration of a binary scorer, and the metrics that show whether it worked.

Pure numpy functions over (score, label) arrays; label 1 = liked, 0 = disliked.
Temperature scaling (Guo et al., 2017) rescales logits by one scalar fitted by negative
log-likelihood, which keeps the ranking (AUROC) and fixes over/under-confidence. The
verdict threshold is then chosen for balanced accuracy, because users judge the monitor
by recall on disliked turns as much as on liked ones, whatever the class mix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from scorer.errors import ScorerError

ArrayLike = Sequence[float] | np.ndarray

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


class CalibrationError(ScorerError, ValueError):
    """Calibration data that cannot support the requested fit."""


def _arrays(scores: ArrayLike, labels: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(labels, dtype=np.int64).reshape(-1)
    if s.shape != y.shape:
        raise CalibrationError(
            f"expected one label per score; got {s.size} scores, {y.size} labels"
        )
    if s.size == 0:
        raise CalibrationError("expected at least one scored example; got none")
    if not np.isin(y, (0, 1)).all():
        raise CalibrationError("expected labels 0 (disliked) or 1 (liked); got other values")
    if not np.isfinite(s).all():
        raise CalibrationError("expected finite scores; got NaN or infinity")
    return s, y


def _both_classes(y: np.ndarray) -> None:
    if y.min() == y.max():
        raise CalibrationError(
            f"expected both liked and disliked examples; got only label {int(y[0])}"
        )


def sigmoid(x: np.ndarray) -> np.ndarray:
    """Numerically stable logistic function."""
    out = np.empty_like(x, dtype=np.float64)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def binary_nll(
    logits: ArrayLike, labels: Sequence[int] | np.ndarray, temperature: float = 1.0
) -> float:
    """Mean negative log-likelihood of labels under sigmoid(logits / temperature)."""
    z, y = _arrays(logits, labels)
    signed = np.where(y == 1, z, -z) / temperature
    return float(np.mean(np.logaddexp(0.0, -signed)))


def fit_temperature(
    logits: ArrayLike,
    labels: Sequence[int] | np.ndarray,
    bounds: tuple[float, float] = (0.05, 20.0),
) -> float:
    """The temperature T in `bounds` minimising NLL of sigmoid(logits / T).

    NLL is convex in 1/T, so a golden-section search over 1/T finds the optimum; a data set
    that is perfectly separated (optimum at T → 0) or uninformative returns a bound.
    """
    z, y = _arrays(logits, labels)
    lo_t, hi_t = bounds
    if not 0 < lo_t < hi_t:
        raise CalibrationError(f"expected 0 < lower < upper temperature bound; got {bounds}")
    signed = np.where(y == 1, z, -z)

    def nll(inverse_t: float) -> float:
        return float(np.mean(np.logaddexp(0.0, -signed * inverse_t)))

    a, b = 1.0 / hi_t, 1.0 / lo_t
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = nll(c), nll(d)
    while b - a > 1e-9 * max(1.0, b):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = nll(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = nll(d)
    return 1.0 / ((a + b) / 2.0)


def balanced_accuracy(p: ArrayLike, labels: Sequence[int] | np.ndarray, threshold: float) -> float:
    """Mean of recall on liked (p >= threshold) and recall on disliked (p < threshold)."""
    s, y = _arrays(p, labels)
    _both_classes(y)
    good = float(np.mean(s[y == 1] >= threshold))
    bad = float(np.mean(s[y == 0] < threshold))
    return (good + bad) / 2.0


def balanced_threshold(p: ArrayLike, labels: Sequence[int] | np.ndarray) -> float:
    """The threshold (verdict GOOD iff p >= threshold) that maximises balanced accuracy.

    Every cut between two adjacent distinct scores is tried; the threshold returned is the
    midpoint of the best gap (so the fitted data sits as far from it as possible). Among
    equally good cuts the one nearest 0.5 wins, the natural cut for a calibrated p.
    """
    s, y = _arrays(p, labels)
    _both_classes(y)
    if s.min() < 0.0 or s.max() > 1.0:
        raise CalibrationError("expected probabilities in [0, 1]; got scores outside it")
    values = np.unique(s)  # ascending
    n_good, n_bad = int((y == 1).sum()), int((y == 0).sum())
    # Cut k puts values[:k] below the threshold (BAD) and values[k:] at or above (GOOD).
    bad_below = np.searchsorted(np.sort(s[y == 0]), values, side="left")
    good_below = np.searchsorted(np.sort(s[y == 1]), values, side="left")
    bad_below = np.append(bad_below, n_bad)
    good_below = np.append(good_below, n_good)
    bal = (bad_below / n_bad + (n_good - good_below) / n_good) / 2.0
    # Cut k lies in the gap (values[k-1], values[k]]; 0 and 1 bound the outer gaps.
    lower = np.concatenate(([0.0], values))
    upper = np.concatenate((values, [1.0]))
    cuts = (lower + upper) / 2.0
    if values[-1] >= 1.0:  # "everything BAD" needs a threshold above the top score
        cuts[-1] = float(np.nextafter(values[-1], np.inf))
    best = bal.max()
    candidates = np.flatnonzero(np.isclose(bal, best, rtol=0.0, atol=1e-12))
    pick = candidates[np.argmin(np.abs(cuts[candidates] - 0.5))]
    return float(cuts[pick])


def ece(p: ArrayLike, labels: Sequence[int] | np.ndarray, n_bins: int = 10) -> float:
    """Expected calibration error of p = P(liked): the sample-weighted mean gap between the
    mean predicted p and the observed liked-rate over `n_bins` equal-width bins of [0, 1]."""
    s, y = _arrays(p, labels)
    if n_bins < 1:
        raise CalibrationError(f"expected n_bins >= 1; got {n_bins}")
    bins = np.minimum((np.clip(s, 0.0, 1.0) * n_bins).astype(np.int64), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        members = bins == b
        if members.any():
            total += members.sum() * abs(float(s[members].mean()) - float(y[members].mean()))
    return float(total / s.size)


def auroc(scores: ArrayLike, labels: Sequence[int] | np.ndarray) -> float:
    """Area under the ROC curve: P(score of a liked turn > score of a disliked one), ties
    counting one half (Mann-Whitney U with mid-ranks)."""
    s, y = _arrays(scores, labels)
    _both_classes(y)
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(s.size, dtype=np.float64)
    sorted_s = s[order]
    start = 0
    while start < s.size:  # average the ranks of tied scores
        end = start
        while end + 1 < s.size and sorted_s[end + 1] == sorted_s[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2.0 + 1.0
        start = end + 1
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    u = ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


@dataclass(frozen=True, slots=True)
class JudgeMetrics:
    """UXBench Task-1 style metrics of calibrated probabilities at a threshold."""

    good_acc: float  # recall on liked
    bad_acc: float  # recall on disliked
    avg_acc: float  # their mean (balanced accuracy)
    auroc: float
    ece: float
    n_liked: int
    n_disliked: int

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def judge_metrics(
    p: ArrayLike, labels: Sequence[int] | np.ndarray, threshold: float
) -> JudgeMetrics:
    s, y = _arrays(p, labels)
    _both_classes(y)
    good = float(np.mean(s[y == 1] >= threshold))
    bad = float(np.mean(s[y == 0] < threshold))
    return JudgeMetrics(
        good_acc=good,
        bad_acc=bad,
        avg_acc=(good + bad) / 2.0,
        auroc=auroc(s, y),
        ece=ece(s, y),
        n_liked=int((y == 1).sum()),
        n_disliked=int((y == 0).sum()),
    )
