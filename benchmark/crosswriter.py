"""Leave-one-writer-out validation: train on every writer but one, test on the one left out.

A scorer's figure on records by the writers it learned from measures how well it learned
those writers; only a writer it never saw says how it will do on somebody else's traffic.
Every record therefore gets its prediction from a model fitted without its writer, and
the figures are reported per writer and pooled, with bootstrap intervals, beside two
baselines fitted the same way: reply length alone and the majority class.

A `Method` is the part that differs between scorers: given the indices to train on and to
test, it returns P(liked) for the test records and the threshold its verdict uses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmark.metrics import (
    auroc,
    avg_acc,
    bad_acc,
    bootstrap_ci,
    ece,
    good_acc,
    pair_accuracy,
)
from scorer.calibration import balanced_threshold, fit_temperature, sigmoid

Indices = NDArray[np.int64]
Method = Callable[[Indices, Indices], tuple[NDArray[np.float64], float]]


@dataclass(frozen=True, slots=True)
class OutOfWriter:
    """Every record's P(liked) and verdict from a model that never saw its writer."""

    writers: list[str]
    labels: NDArray[np.int64]
    p: NDArray[np.float64]
    liked: NDArray[np.bool_]  # the verdict: p >= that fold's threshold


def leave_one_writer_out(
    writers: Sequence[str],
    labels: Sequence[int],
    method: Method,
    on_fold: Callable[[str], None] | None = None,
) -> OutOfWriter:
    y = np.asarray(labels, dtype=np.int64)
    w = np.asarray(writers)
    p = np.full(y.size, np.nan)
    liked = np.zeros(y.size, dtype=bool)
    for writer in sorted(set(writers)):
        test = np.flatnonzero(w == writer)
        train = np.flatnonzero(w != writer)
        p_test, threshold = method(train, test)
        p[test] = p_test
        liked[test] = p_test >= threshold
        if on_fold is not None:
            on_fold(writer)
    return OutOfWriter(list(writers), y, p, liked)


@dataclass(frozen=True, slots=True)
class Figures:
    n: int
    auroc: float
    auroc_ci: tuple[float, float]
    good_acc: float
    bad_acc: float
    avg_acc: float
    avg_acc_ci: tuple[float, float]
    ece: float
    ece_ci: tuple[float, float]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def figures(
    labels: NDArray[np.int64],
    p: NDArray[np.float64],
    liked: NDArray[np.bool_],
    resamples: int = 1000,
) -> Figures:
    verdict = liked.astype(np.int64)

    def ci(metric: Callable[..., float], values: NDArray[Any]) -> tuple[float, float]:
        interval = bootstrap_ci(metric, labels, values, n_resamples=resamples)
        return (round(interval.low, 4), round(interval.high, 4))

    return Figures(
        n=int(labels.size),
        auroc=round(auroc(labels, p), 4),
        auroc_ci=ci(auroc, p),
        good_acc=round(good_acc(labels, verdict), 4),
        bad_acc=round(bad_acc(labels, verdict), 4),
        avg_acc=round(avg_acc(labels, verdict), 4),
        avg_acc_ci=ci(avg_acc, verdict),
        ece=round(ece(labels, p), 4),
        ece_ci=ci(ece, p),
    )


def subset(result: OutOfWriter, mask: NDArray[np.bool_]) -> OutOfWriter:
    return OutOfWriter(
        [w for w, keep in zip(result.writers, mask, strict=True) if keep],
        result.labels[mask],
        result.p[mask],
        result.liked[mask],
    )


def report(result: OutOfWriter, resamples: int = 1000) -> dict[str, Any]:
    """Pooled and per-writer figures (JSON-ready)."""
    w = np.asarray(result.writers)
    per_writer = {}
    for writer in sorted(set(result.writers)):
        mask = w == writer
        per_writer[writer] = figures(
            result.labels[mask], result.p[mask], result.liked[mask], resamples
        ).as_dict()
    pooled = figures(result.labels, result.p, result.liked, resamples).as_dict()
    return {"pooled": pooled, "per_writer": per_writer}


# --- baselines, fitted on the training writers like any method ---------------------------


def length_method(reply_chars: Sequence[int], labels: Sequence[int]) -> Method:
    """Reply length alone: its direction, scale and cut learned on the training writers."""
    x = np.log1p(np.asarray(reply_chars, dtype=np.float64))
    y = np.asarray(labels, dtype=np.int64)

    def fit(train: Indices, test: Indices) -> tuple[NDArray[np.float64], float]:
        mean, std = x[train].mean(), x[train].std() or 1.0
        sign = 1.0 if auroc(y[train], x[train]) >= 0.5 else -1.0
        z = sign * (x - mean) / std
        temperature = fit_temperature(z[train], y[train])
        p = sigmoid(z / temperature)
        return p[test], balanced_threshold(p[train], y[train])

    return fit


def majority_method(labels: Sequence[int]) -> Method:
    """The training writers' majority class for everyone; P(liked) their liked share."""
    y = np.asarray(labels, dtype=np.int64)

    def fit(train: Indices, test: Indices) -> tuple[NDArray[np.float64], float]:
        share = float(y[train].mean())
        threshold = 0.0 if share >= 0.5 else 1.0 + 1e-9  # everyone liked / everyone disliked
        return np.full(test.size, share), threshold

    return fit


# --- the scorers' own training, fitted on the training writers --------------------------


def judge_method(
    features: NDArray[np.float32], labels: Sequence[int], writers: Sequence[str], l2: float
) -> Method:
    """The UX-Judge head as `uxmon judge train` fits it on writer-tagged data: one member
    per training writer, calibrated out of writer."""
    from scorer.training import TrainConfig, fit_head

    y = np.asarray(labels, dtype=np.int64)
    w = np.asarray(writers)

    def fit(train: Indices, test: Indices) -> tuple[NDArray[np.float64], float]:
        fitted = fit_head(
            features[train], [int(v) for v in y[train]], TrainConfig(l2=l2), groups=list(w[train])
        )
        return fitted.probabilities(features[test]), fitted.threshold

    return fit


def verdict_head_method(
    states: NDArray[np.float32],
    base_margins: NDArray[np.float64],
    labels: Sequence[int],
    writers: Sequence[str],
    l2: float,
    trains_on: NDArray[np.bool_] | None = None,
) -> Method:
    """The GRM's verdict head as `uxmon grm train` fits it (calibrated out of writer on the
    training writers); `trains_on` masks the records a fold may learn from (e.g. both
    tasks) beyond those it is scored on."""
    from scorer.verdict_head import fit_calibrated_head

    y = np.asarray(labels, dtype=np.int64)
    w = np.asarray(writers)

    def fit(train: Indices, test: Indices) -> tuple[NDArray[np.float64], float]:
        if trains_on is not None:
            train = train[trains_on[train]]
        fitted = fit_calibrated_head(
            states[train], y[train], base_margins[train], list(w[train]), l2=l2
        )
        margins = fitted.head.margins(states[test], base_margins[test])
        return np.array([fitted.threshold.p_good(m) for m in margins]), 0.5

    return fit


# --- whole runs on a corpus --------------------------------------------------------------


def _contrastive_pairs(records: Sequence[Any]) -> list[tuple[int, int]]:
    """(liked index, disliked index) of each contrastive pair in a Task-1 record list."""
    by_pair: dict[str, dict[int, int]] = {}
    for i, r in enumerate(records):
        if r.pair:
            by_pair.setdefault(r.pair, {})[r.item.label] = i
    return [(d[1], d[0]) for d in by_pair.values() if set(d) == {0, 1}]


def _task1_part(records: Sequence[Any], result: OutOfWriter, resamples: int) -> dict[str, Any]:
    """The scorer's figures on Task-1 records (`result` aligned with them), beside the
    baselines, and how often each contrastive pair was ranked right."""
    labels = [r.item.label for r in records]
    writers = [r.writer for r in records]
    chars = [len(r.item.dialogue.reply) for r in records]
    pairs = _contrastive_pairs(records)
    return {
        "scorer": report(result, resamples),
        "length_only": report(
            leave_one_writer_out(writers, labels, length_method(chars, labels)), resamples
        ),
        "majority": report(
            leave_one_writer_out(writers, labels, majority_method(labels)), resamples
        ),
        "pair_accuracy": round(pair_accuracy(result.p, pairs), 4),
        "pairs": len(pairs),
    }


def run_judge(
    records: Sequence[Any], encoder: Any, *, l2: float, progress: bool, resamples: int = 1000
) -> dict[str, Any]:
    """Leave-one-writer-out of the UX-Judge on Task-1 corpus records (benchmark.writers)."""
    from scorer.ux_judge import featurize

    features = featurize([r.item.dialogue for r in records], encoder, progress=progress)
    labels = [r.item.label for r in records]
    writers = [r.writer for r in records]
    result = leave_one_writer_out(writers, labels, judge_method(features, labels, writers, l2))
    return {"task1": _task1_part(records, result, resamples)}


def run_grm(
    task1: Sequence[Any],
    task3: Sequence[Any],
    states: NDArray[np.float32],
    base_margins: NDArray[np.float64],
    *,
    l2: float,
    resamples: int = 1000,
) -> dict[str, Any]:
    """Leave-one-writer-out of the GRM's verdict head, trained on both tasks of the other
    writers. `states` / `base_margins` hold the Task-1 dialogues, then each Task-3 context's
    fixing and non-fixing attempt (see `grm_dialogues`)."""
    n1 = len(task1)
    labels = [r.item.label for r in task1] + [1, 0] * len(task3)
    writers = [r.writer for r in task1] + [r.writer for r in task3 for _ in (0, 1)]
    result = leave_one_writer_out(
        writers, labels, verdict_head_method(states, base_margins, labels, writers, l2)
    )
    is1 = np.arange(len(labels)) < n1
    part1 = _task1_part(task1, subset(result, is1), resamples)
    recovery = subset(result, ~is1)
    attempt_pairs = [(n1 + 2 * k, n1 + 2 * k + 1) for k in range(len(task3))]
    per_writer_pairs = {}
    for writer in sorted({r.writer for r in task3}):
        mine = [p for p, r in zip(attempt_pairs, task3, strict=True) if r.writer == writer]
        per_writer_pairs[writer] = round(pair_accuracy(result.p, mine), 4)
    zero_shot = pair_accuracy(base_margins, attempt_pairs)
    return {
        "task1": part1,
        "task3": {
            "contexts": len(task3),
            "pair_accuracy": round(pair_accuracy(result.p, attempt_pairs), 4),
            "pair_accuracy_per_writer": per_writer_pairs,
            "zero_shot_pair_accuracy": round(zero_shot, 4),
            "verdicts": report(recovery, resamples),
        },
        "task1_zero_shot_auroc": round(auroc(labels[:n1], base_margins[:n1]), 4),
    }


def grm_dialogues(task1: Sequence[Any], task3: Sequence[Any]) -> list[Any]:
    """The dialogues `run_grm` expects states for, in its order."""
    out = [r.item.dialogue for r in task1]
    for r in task3:
        fixing, non_fixing = r.attempts()
        out += [fixing.dialogue, non_fixing.dialogue]
    return out


# --- the regression gate on leave-one-writer-out reports --------------------------------

GATED = (
    ("task1", "scorer", "auroc"),
    ("task1", "scorer", "avg_acc"),
    ("task1", "scorer", "bad_acc"),
    ("task3", "verdicts", "avg_acc"),
)


def regressions(baseline: dict[str, Any], candidate: dict[str, Any], tolerance: float) -> list[str]:
    """Where `candidate` is worse than `baseline` by more than `tolerance` (pooled figures
    and the recovery pair accuracy), or was not measured the same way. Empty: it passes."""
    same = ("protocol", "scorer", "writers", "per_writer", "task1_records", "task3_contexts")
    found = [
        f"{key}: baseline {baseline.get(key)!r}, candidate {candidate.get(key)!r}"
        for key in same
        if baseline.get(key) != candidate.get(key)
    ]
    if found:
        return found
    for task, part, metric in GATED:
        if task not in baseline:
            continue
        before = baseline[task][part]["pooled"][metric]
        after = candidate[task][part]["pooled"][metric]
        if after < before - tolerance:
            found.append(f"{task} {metric}: {after:.4f} < baseline {before:.4f} - {tolerance}")
    if "task3" in baseline:
        before, after = baseline["task3"]["pair_accuracy"], candidate["task3"]["pair_accuracy"]
        if after < before - tolerance:
            found.append(f"task3 pair_accuracy: {after:.4f} < baseline {before:.4f} - {tolerance}")
    return found
