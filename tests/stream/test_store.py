"""The on-disk conversation store files each state under its own partition, whatever event
is current, and each process starts from an empty table directory of its own."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import weakref
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.streams import _current_event

from stream.store import OPTIONS, ConversationStore, own_tabledir
from stream.table import ConversationTable


class Event:  # weak-referenceable, as faust keeps the current event
    def __init__(self, message: Any) -> None:
        self.message = message


@pytest.fixture
def table(tmp_path: Path) -> ConversationTable:
    app = faust.App(
        "store-test", datadir=str(tmp_path / "d"), tabledir=str(tmp_path / "t"), store="rocksdb://"
    )
    return ConversationTable(
        app, name="conversations", partitions=4, key_type=bytes, options=dict(OPTIONS)
    )


def put(table: ConversationTable, key: bytes, partition: int) -> None:
    table._next_partition = partition  # what on_key_set records from the state
    table.data[key] = {"partition": partition}


def test_the_table_gets_the_conversation_store(table: ConversationTable) -> None:
    assert isinstance(table.data, ConversationStore)


def test_writes_without_an_event_go_to_the_states_partition(table: ConversationTable) -> None:
    put(table, b"alice", 2)
    put(table, b"bob", 0)
    store: Any = table.data
    assert store._db_for_partition(2).get(b"alice") is not None
    assert store._db_for_partition(0).get(b"alice") is None
    store._key_index.clear()  # faust's index is a bounded LRU: reads must not need it
    assert table.data[b"alice"] == {"partition": 2} and b"bob" in table.data
    assert b"carol" not in table.data


def test_reads_during_another_partitions_event_find_the_state(table: ConversationTable) -> None:
    put(table, b"alice", 3)
    event = Event(message=SimpleNamespace(partition=1))
    token = _current_event.set(weakref.ref(event))  # type: ignore[arg-type]
    try:
        assert table.data[b"alice"] == {"partition": 3}  # faust's own store reads p1 only
        assert b"alice" in table.data
        put(table, b"bob", 0)  # faust's own store would file it under p1
        assert table.data._db_for_partition(0).get(b"bob") is not None  # type: ignore[attr-defined]
    finally:
        _current_event.reset(token)


def test_a_write_without_a_partition_is_refused(table: ConversationTable) -> None:
    with pytest.raises(RuntimeError, match="partition"):
        table.data[b"alice"] = {"partition": 1}


def test_each_process_starts_empty_and_dead_ones_leave_nothing(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], text=True,
                          capture_output=True, check=True).stdout.strip()  # fmt: skip
    host = socket.gethostname()
    stale = tmp_path / f"state-{host}-{dead}"
    (stale / "conversations-0.db").mkdir(parents=True)
    other_host = tmp_path / "state-elsewhere-1"
    other_host.mkdir()
    alive = tmp_path / f"state-{host}-{os.getppid()}"  # a live process: kept
    alive.mkdir()

    mine = own_tabledir(tmp_path)
    (mine / "left-over").write_text("x")
    assert own_tabledir(tmp_path) == mine and list(mine.iterdir()) == []
    assert not stale.exists() and other_host.exists() and alive.exists()
