"""The conversation table, co-partitioned with the turns topic.

faust sends a table change to the changelog partition of the *current event*. A
micro-batch spans partitions, so that would file a conversation under whichever
partition's event came last, and a worker taking over the partition after a rebalance
would not find it. Each state value records the partition its events come from; the
changelog uses exactly that partition.
"""

from __future__ import annotations

from typing import Any

import faust


class ConversationTable(faust.Table):
    _next_partition: int | None = None

    def on_key_set(self, key: Any, value: Any) -> None:
        self._next_partition = value["partition"]
        super().on_key_set(key, value)

    def on_key_del(self, key: Any) -> None:
        self._next_partition = self.data[key]["partition"]
        super().on_key_del(key)

    def partition_for_key(self, key: Any) -> int | None:
        return self._next_partition
