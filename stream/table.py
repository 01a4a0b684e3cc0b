"""The conversation table, co-partitioned with the turns topic.

faust sends a table change to the changelog partition of the *current event*. A
micro-batch spans partitions, so that would file a conversation under whichever
partition's event came last, and a worker taking over the partition after a rebalance
would not find it. Each state value records the partition its events come from; the
changelog uses exactly that partition.

faust queues changelog writes in its producer buffer, and its `flush()` gives up waiting
after 0.1 s without a send, so "flushed" does not mean "on the broker". The table keeps
each write's delivery future until `take_unconfirmed()`, so the worker can await them
before it lets the batch's offsets commit.
"""

from __future__ import annotations

import asyncio
from typing import Any

import faust
from faust.types import StoreT

# Besides conversations, the table holds one mark per partition: the last offset a batch
# handled there. Its key starts with 0xFF, a byte no UTF-8 conversation id can contain.
_HANDLED = b"\xffhandled/"


def handled_key(partition: int) -> bytes:
    return _HANDLED + str(partition).encode()


def is_handled_key(key: bytes) -> bool:
    return key.startswith(_HANDLED)


class ConversationTable(faust.Table):
    _next_partition: int | None = None
    _unconfirmed: list[asyncio.Future[Any]] | None = None

    def send_changelog(self, *args: Any, **kwargs: Any) -> Any:
        sent = super().send_changelog(*args, **kwargs)
        if self._unconfirmed is None:
            self._unconfirmed = []
        self._unconfirmed.append(sent)
        return sent

    def take_unconfirmed(self) -> list[asyncio.Future[Any]]:
        """The delivery futures of the changelog writes since the last call."""
        taken, self._unconfirmed = self._unconfirmed or [], []
        return taken

    def on_key_set(self, key: Any, value: Any) -> None:
        self._next_partition = value["partition"]
        super().on_key_set(key, value)

    def on_key_del(self, key: Any) -> None:
        self._next_partition = self.data[key]["partition"]
        super().on_key_del(key)

    def partition_for_key(self, key: Any) -> int | None:
        return self._next_partition

    def _new_store_by_url(self, url: Any) -> StoreT:
        if not str(url).startswith("rocksdb:"):
            return super()._new_store_by_url(url)
        from stream.store import ConversationStore

        return ConversationStore(
            url,
            self.app,
            self,
            table_name=self.name,
            key_type=self.key_type,
            key_serializer=self.key_serializer,
            value_serializer=self.value_serializer,
            value_type=self.value_type,
            loop=self.loop,
            options=self.options,
        )
