"""Fault injection for worker children (on PYTHONPATH only where a test asks for it).

UXMON_TEST_DROP="<topic>:<first>:<end>": the first time the worker's consumer fetches a
record of `topic` with an offset in [first, end), on any partition, the record vanishes
before faust sees it, as faust's own queue clearing drops records around a rebalance.
Later fetches of it pass: the worker sees a hole and must read it again.
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
