"""What falls due when, per partition: the index the timers and the eviction read.

The no-follow-up and episode time limits and the idle eviction take the conversations
due by a time from here instead of scanning the table, so a tick costs what falls due,
not what is stored. Each write puts a key's time anew; a heap per partition keeps the
order, and an entry a later write superseded is dropped when it comes up.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field


@dataclass(slots=True)
class _Partition:
    at: dict[bytes, float] = field(default_factory=dict)
    heap: list[tuple[float, bytes]] = field(default_factory=list)

    def rebuild(self) -> None:
        self.heap = [(at, key) for key, at in self.at.items()]
        heapq.heapify(self.heap)


class Due:
    """Keys by the time (seconds) they fall due, per partition."""

    def __init__(self) -> None:
        self._partitions: dict[int, _Partition] = {}

    def __len__(self) -> int:
        return sum(len(p.at) for p in self._partitions.values())

    def put(self, partition: int, key: bytes, at: float | None) -> None:
        """`key` falls due at `at`, or never (None)."""
        part = self._partitions.setdefault(partition, _Partition())
        if at is None:
            part.at.pop(key, None)
            return
        if part.at.get(key) == at:
            return
        part.at[key] = at
        heapq.heappush(part.heap, (at, key))
        if len(part.heap) > 2 * len(part.at) + 1024:  # mostly superseded entries
            part.rebuild()

    def load(self, partition: int, items: list[tuple[bytes, float]]) -> None:
        """`partition`'s keys and times all at once (after a rebalance), replacing what
        was there: one heapify instead of a push each."""
        self._partitions[partition] = part = _Partition(dict(items))
        part.rebuild()

    def take(self, partition: int, until: float) -> list[bytes]:
        """The keys of `partition` due by `until`, earliest first; they leave the index
        (a write puts them back)."""
        part = self._partitions.get(partition)
        if part is None:
            return []
        taken = []
        while part.heap and part.heap[0][0] <= until:
            at, key = heapq.heappop(part.heap)
            if part.at.get(key) == at:
                del part.at[key]
                taken.append(key)
        return taken

    def clear(self) -> None:
        """Forget every partition: another worker owns them now."""
        self._partitions.clear()
