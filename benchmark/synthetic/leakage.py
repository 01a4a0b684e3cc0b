"""Does the surface give the label away? A bag-of-words probe on the Task-1 corpus.

A logistic regression over character n-grams (Chinese) and words (English) is trained
on the seed file and scored on the held-out file. If such a trivial model reaches a
high Avg-Acc, replies carry label-specific wording and a classifier trained on them
would learn templates instead of dissatisfaction. numpy only, so it runs anywhere.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmark import metrics

_WORD = re.compile(r"[a-z0-9']+")
_HAN = re.compile(r"[\u3400-\u9fff]+")


def tokens(text: str, prefix: str) -> set[str]:
    out: set[str] = set()
    lower = text.lower()
    for w in _WORD.findall(lower):
        out.add(prefix + w)
    for run in _HAN.findall(text):
        out.update(prefix + c for c in run)
        out.update(prefix + run[i : i + 2] for i in range(len(run) - 1))
    return out


def _reply_text(record: dict[str, Any]) -> str:
    # Probe what a judge would read; unwrap agentic JSON the simple way (msg fields).
    reply = str(record["agent_response_full"])
    return " ".join(re.findall(r'"msg": "((?:[^"\\]|\\.)*)"', reply)) or reply


def _query_text(record: dict[str, Any]) -> str:
    query = record["source_query"]
    return str(query["message"] if isinstance(query, dict) else query)


@dataclass(frozen=True, slots=True)
class Probe:
    name: str
    good_acc: float
    bad_acc: float
    avg_acc: float
    bad_recall_by_dimension: dict[str, float]


def _features(records: Sequence[dict[str, Any]], with_query: bool) -> list[set[str]]:
    feats = []
    for r in records:
        f = tokens(_reply_text(r), "r:")
        if with_query:
            f |= tokens(_query_text(r), "q:")
        feats.append(f)
    return feats


def _matrix(feats: Iterable[set[str]], vocab: dict[str, int]) -> NDArray[np.float32]:
    rows = list(feats)
    x = np.zeros((len(rows), len(vocab) + 1), dtype=np.float32)
    x[:, -1] = 1.0  # bias
    for i, f in enumerate(rows):
        for tok in f:
            j = vocab.get(tok)
            if j is not None:
                x[i, j] = 1.0
    return x


def _fit(
    x: NDArray[np.float32], y: NDArray[np.float32], l2: float, epochs: int
) -> NDArray[np.float32]:
    # Full-batch Adam on the L2-regularised log loss; small and deterministic.
    w = np.zeros(x.shape[1], dtype=np.float32)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    lr, b1, b2 = 0.05, 0.9, 0.999
    for step in range(1, epochs + 1):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (p - y) / len(y) + l2 * w
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        w -= lr * (m / (1 - b1**step)) / (np.sqrt(v / (1 - b2**step)) + 1e-8)
    return w


def probe(
    train: Sequence[dict[str, Any]],
    test: Sequence[dict[str, Any]],
    *,
    with_query: bool,
    max_features: int = 6000,
    l2: float = 1e-3,
    epochs: int = 250,
) -> Probe:
    train_f, test_f = _features(train, with_query), _features(test, with_query)
    df = Counter(tok for f in train_f for tok in f)
    vocab = {tok: i for i, (tok, n) in enumerate(df.most_common(max_features)) if n >= 2}
    y_train = np.array([1.0 if r["ground_truth"] == 1 else 0.0 for r in train], dtype=np.float32)
    w = _fit(_matrix(train_f, vocab), y_train, l2, epochs)
    pred = ((_matrix(test_f, vocab) @ w) > 0).astype(int)
    labels = [1 if r["ground_truth"] == 1 else 0 for r in test]
    by_dim: dict[str, list[int]] = {}
    for r, p in zip(test, pred, strict=True):
        if r["ground_truth"] == -1:
            by_dim.setdefault(str(r["failure_dimension"]), []).append(int(p == 0))
    return Probe(
        "query+reply" if with_query else "reply only",
        metrics.good_acc(labels, list(pred)),
        metrics.bad_acc(labels, list(pred)),
        metrics.avg_acc(labels, list(pred)),
        {d: sum(v) / len(v) for d, v in sorted(by_dim.items())},
    )


def length_probe(train: Sequence[dict[str, Any]], test: Sequence[dict[str, Any]]) -> Probe:
    """The same check with reply and query lengths as the only features."""

    def feats(rs: Sequence[dict[str, Any]]) -> NDArray[np.float32]:
        return np.array(
            [
                [
                    np.log1p(len(_reply_text(r))) / 7,
                    np.log1p(len(_query_text(r))) / 7,
                    float(bool(r.get("selected_history"))),
                    1.0,
                ]
                for r in rs
            ],
            dtype=np.float32,
        )

    y = np.array([1.0 if r["ground_truth"] == 1 else 0.0 for r in train], dtype=np.float32)
    w = _fit(feats(train), y, 0.0, 800)
    pred = ((feats(test) @ w) > 0).astype(int)
    labels = [1 if r["ground_truth"] == 1 else 0 for r in test]
    return Probe(
        "lengths only",
        metrics.good_acc(labels, list(pred)),
        metrics.bad_acc(labels, list(pred)),
        metrics.avg_acc(labels, list(pred)),
        {},
    )
