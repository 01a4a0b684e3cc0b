"""Task metrics over labels and predictions, numpy only.

Conventions (UXBench Task 1): a label is 1 for a liked turn and 0 for a disliked one; a
prediction is 1, 0, or None when the judge's verdict could not be parsed. An
unparseable prediction always counts as wrong. Probabilities and scores are P(liked).
A metric that is undefined on the given data (no item of a class) returns NaN rather
than a misleading number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Labels = Sequence[int] | NDArray[np.integer]
Predictions = Sequence[int | None] | NDArray[np.floating] | NDArray[np.integer]
Scores = Sequence[float] | NDArray[np.floating]

LIKED, DISLIKED = 1, 0


def _labels(labels: Labels) -> NDArray[np.int64]:
    y = np.asarray(labels, dtype=np.int64)
    if y.ndim != 1 or not np.isin(y, (LIKED, DISLIKED)).all():
        raise ValueError("labels must be a 1-D sequence of 1 (liked) and 0 (disliked)")
    return y


def _predictions(predictions: Predictions, n: int) -> NDArray[np.float64]:
    """Predictions as floats with NaN for an unparseable verdict."""
    p = np.array([np.nan if v is None else v for v in predictions], dtype=np.float64)
    if p.shape != (n,):
        raise ValueError(f"expected {n} predictions, got {p.shape[0] if p.ndim else 0}")
    return p


def _recall(labels: Labels, predictions: Predictions, cls: int) -> float:
    y = _labels(labels)
    p = _predictions(predictions, len(y))
    mask = y == cls
    if not mask.any():
        return float("nan")
    return float(np.mean(p[mask] == cls))  # NaN == cls is False: unparseable is wrong


def good_acc(labels: Labels, predictions: Predictions) -> float:
    """Recall on liked turns."""
    return _recall(labels, predictions, LIKED)


def bad_acc(labels: Labels, predictions: Predictions) -> float:
    """Recall on disliked turns (where LLM judges are weakest)."""
    return _recall(labels, predictions, DISLIKED)


def avg_acc(labels: Labels, predictions: Predictions) -> float:
    """UXBench's headline Task-1 number: the mean of Good-Acc and Bad-Acc."""
    return (good_acc(labels, predictions) + bad_acc(labels, predictions)) / 2


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    low: float
    high: float
    level: float


def bootstrap_ci(
    metric: Callable[[Labels, Predictions], float],
    labels: Labels,
    predictions: Predictions,
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap interval for `metric`, resampling within each label class.

    Stratifying keeps the class sizes fixed, so per-class metrics (Good-Acc, Bad-Acc and
    their mean) are defined in every resample; resamples where the metric is NaN are
    dropped.
    """
    y = _labels(labels)
    p = _predictions(predictions, len(y))
    rng = np.random.default_rng(seed)
    groups = [np.flatnonzero(y == cls) for cls in (LIKED, DISLIKED)]
    groups = [g for g in groups if len(g)]
    stats = np.empty(n_resamples)
    for i in range(n_resamples):
        idx = np.concatenate([rng.choice(g, size=len(g), replace=True) for g in groups])
        stats[i] = metric(y[idx], p[idx])
    stats = stats[~np.isnan(stats)]
    estimate = metric(y, p)
    if not len(stats):
        return Interval(estimate, float("nan"), float("nan"), level)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return Interval(estimate, float(low), float(high), level)


def pair_accuracy(scores: Scores, pairs: Sequence[tuple[int, int]]) -> float:
    """Share of (better, worse) index pairs where the better one scores higher; ties count
    half. NaN without pairs."""
    if not pairs:
        return math.nan
    wins = [
        1.0 if scores[a] > scores[b] else 0.5 if scores[a] == scores[b] else 0.0 for a, b in pairs
    ]
    return sum(wins) / len(wins)


def auroc(labels: Labels, scores: Scores) -> float:
    """Area under the ROC curve for P(liked), via average ranks (ties count one half)."""
    y = _labels(labels)
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != y.shape:
        raise ValueError(f"expected {len(y)} scores, got {s.shape[0] if s.ndim else 0}")
    n_pos, n_neg = int(y.sum()), int((1 - y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _average_ranks(s)
    return float((ranks[y == LIKED].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _average_ranks(values: NDArray[np.float64]) -> NDArray[np.float64]:
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    ranks = np.empty(len(values))
    # runs of equal values share the mean of the ranks they span (1-based)
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(values)]
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + 1 + end) / 2
    return ranks


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    low: float
    high: float
    count: int
    mean_score: float  # mean predicted P(liked) in the bin (NaN if empty)
    frac_liked: float  # observed share of liked turns in the bin (NaN if empty)


def reliability_table(labels: Labels, scores: Scores, n_bins: int = 10) -> list[ReliabilityBin]:
    """Equal-width bins over [0, 1]; a score of exactly 1.0 falls in the last bin."""
    y = _labels(labels)
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != y.shape:
        raise ValueError(f"expected {len(y)} scores, got {s.shape[0] if s.ndim else 0}")
    if ((s < 0) | (s > 1) | np.isnan(s)).any():
        raise ValueError("scores must be probabilities in [0, 1]")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    which = np.minimum(np.floor(s * n_bins).astype(np.int64), n_bins - 1)
    table = []
    for b in range(n_bins):
        mask = which == b
        count = int(mask.sum())
        table.append(
            ReliabilityBin(
                float(edges[b]),
                float(edges[b + 1]),
                count,
                float(s[mask].mean()) if count else float("nan"),
                float(y[mask].mean()) if count else float("nan"),
            )
        )
    return table


def ece(labels: Labels, scores: Scores, n_bins: int = 10) -> float:
    """Expected calibration error of P(liked): bin-weighted |mean score - share liked|."""
    table = reliability_table(labels, scores, n_bins)
    total = sum(b.count for b in table)
    if total == 0:
        return float("nan")
    return float(sum(b.count / total * abs(b.mean_score - b.frac_liked) for b in table if b.count))


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts by true label (rows) and prediction (liked, disliked, unparseable)."""

    liked_as_liked: int
    liked_as_disliked: int
    liked_unparsed: int
    disliked_as_liked: int
    disliked_as_disliked: int
    disliked_unparsed: int

    def as_array(self) -> NDArray[np.int64]:
        return np.array(
            [
                [self.liked_as_liked, self.liked_as_disliked, self.liked_unparsed],
                [self.disliked_as_liked, self.disliked_as_disliked, self.disliked_unparsed],
            ],
            dtype=np.int64,
        )


def confusion(labels: Labels, predictions: Predictions) -> Confusion:
    y = _labels(labels)
    p = _predictions(predictions, len(y))
    if not np.isin(p[~np.isnan(p)], (LIKED, DISLIKED)).all():
        raise ValueError("predictions must be 1, 0 or None")

    def count(cls: int, pred: int | None) -> int:
        hit = np.isnan(p) if pred is None else p == pred
        return int(((y == cls) & hit).sum())

    return Confusion(
        count(LIKED, LIKED),
        count(LIKED, DISLIKED),
        count(LIKED, None),
        count(DISLIKED, LIKED),
        count(DISLIKED, DISLIKED),
        count(DISLIKED, None),
    )


def cohen_kappa(rater_a: Sequence[object], rater_b: Sequence[object]) -> float:
    """Agreement beyond chance between two raters over any categories (None is one too)."""
    if len(rater_a) != len(rater_b):
        raise ValueError(f"raters differ in length: {len(rater_a)} vs {len(rater_b)}")
    if not rater_a:
        return float("nan")
    categories = sorted({*rater_a, *rater_b}, key=repr)
    index = {c: i for i, c in enumerate(categories)}
    table = np.zeros((len(categories), len(categories)))
    for a, b in zip(rater_a, rater_b, strict=True):
        table[index[a], index[b]] += 1
    table /= table.sum()
    observed = float(np.trace(table))
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if expected == 1.0:
        return 1.0 if observed == 1.0 else float("nan")  # one category only: agreement is trivial
    return (observed - expected) / (1 - expected)
