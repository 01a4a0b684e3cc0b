"""The conversation table on disk: faust's RocksDB store, filed by each state's partition.

faust's RocksDB store files a write under the partition of the *current event*, asserts there
is one, and reads only that event's partition while an event is current. Our writes come
from micro-batches that span partitions and from timers that run without an event. So this
store files each write under the partition the table names for it (the partition recorded
in the state, `ConversationTable.partition_for_key`), and finds a key through faust's key
index, else by asking every open partition's bloom filter. Everything else (recovery from
the changelog, rebalances, persisted offsets) is faust's.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path
from typing import Any

from faust.stores.rocksdb import Store


class ConversationStore(Store):
    def _set(self, key: bytes, value: bytes | None) -> None:
        partition = self.table.partition_for_key(key)
        if partition is None:
            raise RuntimeError("a table write without the partition of its state")
        self._db_for_partition(partition).put(key, value)
        self._key_index[key] = partition

    def _get(self, key: bytes) -> bytes | None:
        found = self._get_bucket_for_key(key)
        return None if found is None else found[1]

    def _contains(self, key: bytes) -> bool:
        return self._get_bucket_for_key(key) is not None


def own_tabledir(appdir: Path) -> Path:
    """An empty table directory for this process under `appdir`, and none of a dead one's.

    Each process gets its own (RocksDB locks a database to one process, and workers of one
    group may share a host and a data directory). It starts empty: a worker killed mid-batch
    may leave writes on disk that never reached the changelog, so local state is trusted
    only within one run and, as with the memory store, rebuilt from the changelog at start.
    Directories of processes on this host that are gone are removed, so kills leave no
    growing residue.
    """
    host = socket.gethostname()
    for old in appdir.glob(f"state-{host}-*"):
        pid = old.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    mine = appdir / f"state-{host}-{os.getpid()}"
    shutil.rmtree(mine, ignore_errors=True)
    mine.mkdir(parents=True)
    return mine


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


# faust's RocksDB defaults are for one big table per process: a 2 GiB block cache and three
# 64 MiB write buffers *per partition*. A worker holds a DB for each active and standby
# partition, 24 at 12 partitions with one standby: up to 4.6 GiB of write buffers alone, over
# the 4 GiB pod limit. States are a few KB and read once per batch, so small buffers do. Ten
# bloom-filter bits per key (faust: 3) keep a read of a key not in faust's key index to one
# disk probe in ~1 % of the other partitions, instead of ~15 %.
OPTIONS: dict[str, Any] = {
    "driver": "rocksdict",
    "write_buffer_size": 8 << 20,
    "max_write_buffer_number": 2,
    "block_cache_size": 16 << 20,
    "bloom_filter_size": 10,
}
