"""Real services for integration tests: worker processes, and Kafka access through
kafka-python (a client the service itself does not consume with)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stream.local import LocalWorker

REPO = Path(__file__).resolve().parents[2]


FAULTS = REPO / "tests" / "support" / "faults"


def worker(
    broker: str, app_id: str, workdir: Path, *, faults: bool = False, **settings: Any
) -> LocalWorker:
    """A real `uxmon serve` child that can import the test-only scorers in tests.support;
    with `faults`, also the fault injection of tests/support/faults (driven by env)."""
    path = os.pathsep.join([str(REPO), str(FAULTS)] if faults else [str(REPO)])
    return LocalWorker(broker, app_id, workdir, pythonpath=path, **settings)


def produce(
    broker: str,
    topic: str,
    records: Iterable[tuple[bytes | None, bytes]],
    max_request_size: int = 1_048_576,
) -> list[tuple[int, int]]:
    """Send every record and wait for the broker; returns each one's (partition, offset)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=broker, acks="all", linger_ms=5, max_request_size=max_request_size
    )
    futures = [producer.send(topic, key=key, value=value) for key, value in records]
    producer.flush()
    positions = [(meta.partition, meta.offset) for meta in (f.get(timeout=30) for f in futures)]
    producer.close()
    return positions


def committed_offsets(broker: str, group: str, topic: str) -> dict[int, int]:
    """The group's committed offset per partition of `topic` (without joining the group)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=broker, group_id=group, enable_auto_commit=False)
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        committed = {p: consumer.committed(TopicPartition(topic, p)) for p in partitions}
    finally:
        consumer.close()
    return {p: offset for p, offset in committed.items() if offset is not None}


def read_topic(broker: str, topic: str, expected: int, timeout_s: float = 120) -> list[Any]:
    """Every record of `topic` from the start (JSON-decoded), once `expected` have arrived.

    Waits `timeout_s` at most for that many, then returns what is there; keeps reading
    until nothing new has come for 3 s, so extra records are seen too.
    """
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=broker, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    deadline = time.monotonic() + timeout_s
    partitions = None
    while not partitions and time.monotonic() < deadline:
        partitions = consumer.partitions_for_topic(topic)
        if not partitions:
            time.sleep(0.5)
    if not partitions:
        consumer.close()
        return []
    consumer.assign([TopicPartition(topic, p) for p in partitions])
    consumer.seek_to_beginning()
    values: list[Any] = []
    # The quiet period starts with the first record: under load the first fetches can
    # take longer than it, and stopping then would miss records that are there.
    quiet_since = float("inf")
    while time.monotonic() < deadline:
        batch = consumer.poll(timeout_ms=500)
        for records in batch.values():
            values.extend(json.loads(r.value) for r in records)
            quiet_since = time.monotonic()
        # Done once `expected` arrived and nothing new came for a while: a first poll may
        # return only some partitions, so never stop on the first answer.
        if len(values) >= expected and time.monotonic() - quiet_since >= 3:
            break
    consumer.close()
    return values


def score_records(broker: str, topic: str, expected: int, timeout_s: float = 120) -> list[Any]:
    """The score records of the scores topic (it also carries reactions and episodes)."""
    return [r for r in read_topic(broker, topic, expected, timeout_s) if r["type"] == "score"]
