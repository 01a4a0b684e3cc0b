"""Fault injection for worker children (on PYTHONPATH only where a test asks for it).

UXMON_TEST_DROP="<topic>:<first>:<end>": the first time the worker's consumer fetches a
record of `topic` with an offset in [first, end), on any partition, the record vanishes
before faust sees it, as faust's own queue clearing drops records around a rebalance.
Later fetches of it pass: the worker sees a hole and must read it again.

UXMON_TEST_DIE_BEFORE_MARK="<n>": from the n-th batch on, the first that scored turns gets
its conversation states onto the broker, then the worker dies before the batch's partition
marks are written (stream/ledger.py).

UXMON_TEST_BLOCK_LOOP="<path>:<seconds>": when the file at `path` appears, the worker's
heartbeat timer deletes it and blocks the event loop for `seconds` (as CPU-bound work on
the loop or a deadlock would).
"""

from __future__ import annotations

import os
from typing import Any


def _drop_once(spec: str) -> None:
    from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

    topic, first, end = spec.rsplit(":", 2)
    window = range(int(first), int(end))
    dropped: set[tuple[int, int]] = set()
    fetch = AIOKafkaConsumerThread._fetch_records

    async def fetch_with_drops(self: Any, *args: Any, **kwargs: Any) -> Any:
        records = await fetch(self, *args, **kwargs)
        for tp, batch in records.items():
            if tp.topic == topic:
                keep = []
                for record in batch:
                    where = (tp.partition, record.offset)
                    if record.offset in window and where not in dropped:
                        dropped.add(where)
                    else:
                        keep.append(record)
                batch[:] = keep
        return records

    AIOKafkaConsumerThread._fetch_records = fetch_with_drops  # type: ignore[method-assign]


if spec := os.environ.get("UXMON_TEST_DROP"):
    _drop_once(spec)


def _die_before_mark(nth: int) -> None:
    """From the `nth` batch on, the first batch that scored turns gets its conversation
    states onto the broker, then the process dies (exit 137, as SIGKILL) before that
    batch's partition marks are written."""
    from stream.app import Service
    from stream.metrics import TURNS_SCORED

    write_marks = Service._write_marks
    calls = 0

    def scored(totals: Any) -> int:
        return sum(n for (name, _), n in totals.items() if name == TURNS_SCORED)

    async def write_marks_or_die(self: Any, marks: Any) -> None:
        nonlocal calls
        calls += 1
        new_turns = any(scored(m.totals) > scored(self._marks[p].totals) for p, m in marks.items())
        if calls >= nth and new_turns:
            await self._confirm_state()  # the states before it are on the broker
            os._exit(137)
        await write_marks(self, marks)

    Service._write_marks = write_marks_or_die  # type: ignore[method-assign]


if nth := os.environ.get("UXMON_TEST_DIE_BEFORE_MARK"):
    _die_before_mark(int(nth))


def _block_loop(path: str, seconds: float) -> None:
    import time
    from pathlib import Path

    from stream.app import Service

    beat = Service._beat
    trigger = Path(path)

    async def beat_or_block(self: Any) -> None:
        if trigger.exists():
            trigger.unlink()
            time.sleep(seconds)  # on the loop, on purpose
        await beat(self)

    Service._beat = beat_or_block  # type: ignore[method-assign]


if spec := os.environ.get("UXMON_TEST_BLOCK_LOOP"):
    where, seconds = spec.rsplit(":", 1)
    _block_loop(where, float(seconds))
