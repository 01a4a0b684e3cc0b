"""Apply each partition's records in log order, without holes, whatever the consumer hands over.

faust (0.15) can hand a stream a partition's records with holes around a rebalance: when
its table recovery ends it resumes the stream partitions, seeks them to the committed
offsets and only then resumes its flow control, which empties the stream queues. Records
fetched in between are dropped, yet counted as read, so they are never fetched again,
and the records after them arrive as if nothing were missing. Applying those would score
turns out of order and lose the dropped ones for good: a re-read later looks like a replay
of records already applied.

So the worker keeps a cursor per partition: the next offset it will apply, starting at the
committed offset once recovery is over. A record at the cursor is applied; one before it
was applied already; one past it waits (it is not acked, so never committed) and the
partition is read again from the cursor (stream/app.py seeks; offsets the log holds no
record for, as in a compacted topic, are skipped).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from faust.types import TP


@dataclass(frozen=True, slots=True)
class Hole:
    """Records of `tp` from `expected` on were not handed over; `seen` is known to exist."""

    tp: TP
    expected: int
    seen: int


@dataclass(slots=True)
class Admission:
    """Indexes into a batch: what to apply now, what was applied before, what must wait."""

    apply: list[int] = field(default_factory=list)
    applied_before: list[int] = field(default_factory=list)
    wait: list[int] = field(default_factory=list)
    holes: dict[TP, Hole] = field(default_factory=dict)  # the first hole per partition


class Cursors:
    """The next offset to apply, per partition; none until reading starts after recovery."""

    def __init__(self) -> None:
        self._next: dict[TP, int] = {}

    def reset(self) -> None:
        """A new assignment: nothing is applied until `start` sets where each partition is."""
        self._next.clear()

    def start(self, offsets: Mapping[TP, int]) -> None:
        self._next.update(offsets)

    def next(self, tp: TP) -> int | None:
        return self._next.get(tp)

    def positions(self) -> dict[TP, int]:
        return dict(self._next)

    def skip_to(self, tp: TP, offset: int) -> None:
        """Accept a hole as absent from the log: continue at `offset`."""
        if tp in self._next and offset > self._next[tp]:
            self._next[tp] = offset

    def admit(self, positions: Sequence[tuple[TP, int]]) -> Admission:
        """Sort a batch's (partition, offset) pairs, in order, and move the cursors."""
        admission = Admission()
        for i, (tp, offset) in enumerate(positions):
            expected = self._next.get(tp)
            if expected is None:  # reading has not started: the start seeks back anyway
                admission.wait.append(i)
            elif offset < expected:
                admission.applied_before.append(i)
            elif offset == expected:
                admission.apply.append(i)
                self._next[tp] = offset + 1
            else:
                admission.wait.append(i)
                admission.holes.setdefault(tp, Hole(tp, expected, offset))
        return admission
