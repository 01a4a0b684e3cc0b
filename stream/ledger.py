"""Counts of what the stream applied that no crash can lose or double: per partition,
durable in the conversation table, exported by whichever worker owns the partition.

A process's own counters die with it: what it counted after its last scrape is gone, and
a batch whose state reached the broker just before a SIGKILL is never counted at all (a
replay skips it as applied). So the facts the dashboards and alerts count (turns scored,
verdicts, reactions, episodes, dead letters) are kept as each partition's running totals,
in the partition's mark in the table, written after the batch's conversation states in
the same changelog partition. Each state written also carries its own share of the batch
(`Entry`). A crash can leave a prefix of a batch's writes: states whose share the mark
lacks. The worker that takes the partition over adds those shares to the mark before it
applies anything (`Mark.reconciled`), and replays skip exactly the records those states
hold, so every fact is counted once.

The totals are exported as counters labelled by `partition`, and Prometheus drops the
`instance` of these series (deploy/prometheus/prometheus.yml), so one series per
partition goes on across workers: the next owner continues from the durable total, never
below what the last one showed, and increase() loses nothing across kills and rebalances.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.samples import Exemplar

Key = tuple[str, tuple[str, ...]]  # a metric's name (without _total) and its label values
Counts = Counter[Key]
Exemplars = dict[Key, Exemplar]  # the newest ids behind each series of a partition
PARTITION_LABEL = "partition"


@dataclass(frozen=True, slots=True)
class Family:
    """A durable counter: exposed as `<name>_total{<labels>, partition}`."""

    name: str
    documentation: str
    labels: tuple[str, ...]


def encode(counts: Mapping[Key, float]) -> list[list[Any]]:
    return [[name, list(labels), amount] for (name, labels), amount in sorted(counts.items())]


def decode(rows: Iterable[Sequence[Any]] | None) -> Counts:
    return Counter({(str(name), tuple(labels)): int(n) for name, labels, n in rows or ()})


@dataclass(slots=True)
class Tally:
    """What one batch (or one timer tick) adds, per partition and per conversation.

    A fact about a record whose conversation state the batch writes, and which a replay
    would therefore skip, belongs to that conversation (`conversation`); any other fact
    (a dead letter a replay would produce again) only to the partition (`None`).
    """

    shares: dict[tuple[int, str | None], Counts] = field(default_factory=dict)
    exemplars: dict[int, Exemplars] = field(default_factory=dict)

    def add(
        self,
        partition: int,
        conversation: str | None,
        name: str,
        *labels: str,
        n: int = 1,
        example: Mapping[str, str] | None = None,
    ) -> None:
        """`example`: the ids of the record behind the fact, its series' exemplar."""
        self.shares.setdefault((partition, conversation), Counter())[name, labels] += n
        if example:
            exemplar = Exemplar(dict(example), float(n), time.time())
            self.exemplars.setdefault(partition, {})[name, labels] = exemplar

    def partitions(self) -> set[int]:
        return {partition for partition, _ in self.shares}

    def of_conversation(self, partition: int, conversation: str) -> Counts:
        return self.shares.get((partition, conversation), Counter())

    def of_partition(self, partition: int) -> Counts:
        total: Counts = Counter()
        for (p, _), counts in self.shares.items():
            if p == partition:
                total.update(counts)
        return total


@dataclass(frozen=True, slots=True)
class Entry:
    """A conversation state's share of the batch that wrote it (`seq`: that batch)."""

    seq: int
    counts: Counts

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "counts": encode(self.counts)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Entry | None:
        return cls(int(data["seq"]), decode(data["counts"])) if data else None


@dataclass(frozen=True, slots=True)
class Mark:
    """A partition's mark: the last offset handled there, the last batch (`seq`) whose
    counts are in `totals`, and the running totals."""

    offset: int = -1
    seq: int = 0
    totals: Counts = field(default_factory=Counter)

    def to_json(self, partition: int) -> dict[str, Any]:
        return {
            "partition": partition,
            "offset": self.offset,
            "seq": self.seq,
            "totals": encode(self.totals),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Mark:
        if not data:
            return cls()
        return cls(int(data["offset"]), int(data.get("seq", 0)), decode(data.get("totals")))

    def reconciled(self, entries: Iterable[Entry]) -> Mark:
        """The mark with the shares of states written after it (a batch cut short)."""
        late = [entry for entry in entries if entry.seq > self.seq]
        if not late:
            return self
        totals = Counter(self.totals)
        for entry in late:
            totals.update(entry.counts)
        return Mark(self.offset, max(entry.seq for entry in late), totals)

    def after(self, seq: int, offset: int | None, added: Counts) -> Mark:
        totals = Counter(self.totals)
        totals.update(added)
        return Mark(self.offset if offset is None else max(self.offset, offset), seq, totals)


class Ledger(Collector):
    """The totals of the partitions this worker owns, as Prometheus counters.

    A series is born at 0: the first scrape that meets a label set new to this worker
    reads 0, the next its total, so increase() counts its first increments too (it never
    counts what a series held at its first sample). Totals a worker takes over (`show(...,
    inherited=True)`, the mark it reconciled) continue their series as they are.

    Each series carries the ids of the newest record behind it as an OpenMetrics exemplar
    (`show(..., exemplars=...)`): this process's own, never durable, and never text.

    `alive()` false hides everything: a worker whose event loop stopped has lost its
    partitions to another by the end of the session timeout, and must not go on showing
    totals that the new owner is already moving past.
    """

    def __init__(self, families: Sequence[Family], alive: Callable[[], bool] = lambda: True):
        self.families = {family.name: family for family in families}
        self.alive = alive
        self._shown: dict[int, Counts] = {}
        self._scraped: dict[int, set[Key]] = {}  # label sets a scrape has met, per partition
        self._exemplars: dict[int, Exemplars] = {}
        self._lock = threading.Lock()  # scrapes run on prometheus_client's thread

    def show(
        self,
        partition: int,
        totals: Counts,
        *,
        inherited: bool = False,
        exemplars: Exemplars | None = None,
    ) -> None:
        unknown = {name for name, _ in totals} - self.families.keys()
        if unknown:
            raise ValueError(f"expected durable counters, got {', '.join(sorted(unknown))}")
        with self._lock:
            self._shown[partition] = Counter(totals)
            self._exemplars.setdefault(partition, {}).update(exemplars or {})
            scraped = self._scraped.setdefault(partition, set())
            if inherited:
                scraped.update(totals)

    def hide(self, partitions: Iterable[int] | None = None) -> None:
        """Stop exporting these partitions (all when None): another worker owns them now."""
        with self._lock:
            for partition in list(self._shown) if partitions is None else partitions:
                self._shown.pop(partition, None)
                self._scraped.pop(partition, None)
                self._exemplars.pop(partition, None)

    def shown(self) -> dict[int, Counts]:
        with self._lock:
            return {partition: Counter(totals) for partition, totals in self._shown.items()}

    def total(self, name: str) -> float:
        return sum(
            n for totals in self.shown().values() for (k, _), n in totals.items() if k == name
        )

    def describe(self) -> Iterator[CounterMetricFamily]:
        for family in self.families.values():
            yield self._family(family)

    def collect(self) -> Iterator[CounterMetricFamily]:
        shown, exemplars = self._scrape() if self.alive() else ({}, {})
        for family in self.families.values():
            metric = self._family(family)
            for partition, totals in sorted(shown.items()):
                if not family.labels:  # one series a partition, at 0 until it moves
                    metric.add_metric([str(partition)], totals.get((family.name, ()), 0))
                    continue
                examples = exemplars.get(partition, {})
                for key, amount in sorted(totals.items()):
                    if key[0] == family.name:
                        labels = [*key[1], str(partition)]
                        metric.add_metric(labels, amount, exemplar=examples.get(key))
            yield metric

    def _scrape(self) -> tuple[dict[int, Counts], dict[int, Exemplars]]:
        """What a scrape reads: the totals, with label sets new to it at 0 and without
        their exemplars (see above)."""
        with self._lock:
            read, examples = {}, {}
            for partition, totals in self._shown.items():
                scraped = self._scraped.setdefault(partition, set())
                read[partition] = Counter({k: n if k in scraped else 0 for k, n in totals.items()})
                exemplars = self._exemplars.get(partition, {})
                examples[partition] = {k: e for k, e in exemplars.items() if k in scraped}
                scraped.update(totals)
            return read, examples

    @staticmethod
    def _family(family: Family) -> CounterMetricFamily:
        return CounterMetricFamily(
            family.name, family.documentation, labels=[*family.labels, PARTITION_LABEL]
        )
