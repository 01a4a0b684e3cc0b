"""Read a topic once: every record from the earliest offset up to the high-water mark each
partition's first fetch reports, then stop (records published meanwhile wait for the next
read). The high-water mark comes from fetch responses, not from ListOffsets (end offsets),
which some Kafka-compatible brokers get wrong. The reader joins no consumer group and
commits nothing, so it never disturbs the service's group or another reader. Used by
`uxmon inspect` (scores topic) and `uxmon labels export` (labels topic).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from stream.broker import BrokerError

if TYPE_CHECKING:
    from kafka import KafkaConsumer

POLL_MS = 500


def _decode(value: bytes | None) -> Any:
    """A record's JSON value, or None (counted as skipped) when it is not JSON."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def read_topic(
    broker: str,
    topic: str,
    timeout_s: float,
    progress: bool,
    client_options: dict[str, Any] | None = None,
    *,
    hint: str = "set --topic",
) -> list[Any]:
    """Every record of `topic` from the earliest offset to the high-water mark seen at
    the start, decoded. Raises BrokerError when the topic is missing or reading stalls
    for `timeout_s`. `client_options`: TLS and SASL (stream/security.py)."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    try:
        consumer = KafkaConsumer(
            bootstrap_servers=broker.split(","),
            group_id=None,
            enable_auto_commit=False,
            allow_auto_create_topics=False,  # a mistyped name must not create a topic
            request_timeout_ms=int(timeout_s * 1000) + 1000,
            client_id="uxmon-inspect",
            **(client_options or {}),
        )
    except KafkaError as exc:
        raise BrokerError(f"cannot talk Kafka to {broker}: {_one_line(exc)}") from None
    try:
        return _read_all(consumer, broker, topic, timeout_s, progress, hint)
    except KafkaError as exc:
        raise BrokerError(f"reading {topic} on {broker} failed: {_one_line(exc)}") from None
    finally:
        consumer.close()


def _one_line(exc: Exception) -> str:
    """A client error as one line (Kafka client errors carry no record content)."""
    detail = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _read_all(
    consumer: KafkaConsumer, broker: str, topic: str, timeout_s: float, progress: bool, hint: str
) -> list[Any]:
    from kafka import TopicPartition

    partitions = _partitions(consumer, topic, timeout_s)
    if not partitions:
        raise BrokerError(f"no topic {topic} on {broker}; {hint}")
    assigned = [TopicPartition(topic, p) for p in sorted(partitions)]
    consumer.assign(assigned)
    consumer.seek_to_beginning()
    start = {tp: consumer.position(tp) for tp in assigned}
    targets: dict[Any, int] = {}  # the high-water mark of each partition's first fetch
    values: list[Any] = []
    columns = (TextColumn(f"reading {topic}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("read", total=None)
        last_progress = time.monotonic()
        while True:
            batch = consumer.poll(timeout_ms=POLL_MS)
            # A fetch response sets the high-water mark before its records are returned.
            for tp in assigned:
                if tp not in targets and (high := consumer.highwater(tp)) is not None:
                    targets[tp] = high
                    if len(targets) == len(assigned):
                        bar.update(task, total=sum(targets[t] - start[t] for t in assigned))
            for tp, records in batch.items():
                kept = [r for r in records if r.offset < targets.get(tp, r.offset + 1)]
                values.extend(_decode(r.value) for r in kept)
                bar.advance(task, len(kept))
            if batch:
                last_progress = time.monotonic()
            behind = [tp for tp in assigned if tp not in targets or _short(consumer, tp, targets)]
            if not behind:
                return values
            for tp in behind:
                consumer.resume(tp)
            for tp in set(assigned) - set(behind):
                consumer.pause(tp)  # read up to the mark: later records wait for the next run
            if time.monotonic() - last_progress > timeout_s:
                where = ", ".join(
                    f"partition {tp.partition} at {consumer.position(tp)} of {targets.get(tp, '?')}"
                    for tp in behind
                )
                raise BrokerError(f"reading {topic} stalled for {timeout_s:g} s: {where}")


def _short(consumer: KafkaConsumer, tp: Any, targets: dict[Any, int]) -> bool:
    """True while `tp` is still short of its target offset."""
    return int(consumer.position(tp)) < targets[tp]


def _partitions(consumer: KafkaConsumer, topic: str, timeout_s: float) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        partitions: set[int] = consumer.partitions_for_topic(topic) or set()
        if partitions or time.monotonic() >= deadline:
            return partitions
        time.sleep(0.25)
