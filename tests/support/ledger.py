"""Moving a durable counter on in a test, as a worker shows it after a batch (stream/ledger.py)."""

from __future__ import annotations

from collections import Counter

from stream.metrics import Metrics


def count(metrics: Metrics, name: str, *labels: str, n: int = 1, partition: int = 0) -> None:
    totals = metrics.ledger.shown().get(partition, Counter())
    totals[name, labels] += n
    metrics.ledger.show(partition, totals)
