"""EventProducer against a real broker, read back by an independent kafka-python consumer."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stream.events import Event, FeedbackEvent, Limits, TurnEvent, parse_event, utcnow
from stream.local import LocalWorker
from stream.producer import EventProducer
from tests.stream.test_producer import docs_snippet

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class Record:
    partition: int
    offset: int
    key: bytes | None
    value: bytes


def read_back(broker: str, topic: str, expected: int, timeout_s: float = 60) -> list[Record]:
    """Every record of `topic` from the start, without a group (nothing of uxmon's used)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=broker, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        consumer.assign([TopicPartition(topic, p) for p in partitions])
        consumer.seek_to_beginning()
        records: list[Record] = []
        deadline = time.monotonic() + timeout_s
        while len(records) < expected and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                records += [Record(r.partition, r.offset, r.key, r.value) for r in batch]
        # a little longer, so a record published twice would be seen too
        for batch in consumer.poll(timeout_ms=1_000).values():
            records += [Record(r.partition, r.offset, r.key, r.value) for r in batch]
    finally:
        consumer.close()
    return sorted(records, key=lambda r: (r.partition, r.offset))


def traffic(conversations: int, exchanges: int) -> list[Event]:
    """Interleaved conversations: a user turn, the reply, and feedback on some replies."""
    start = datetime.now(UTC) - timedelta(minutes=5)
    events: list[Event] = []
    for k in range(exchanges):
        for c in range(conversations):
            cid, ts = f"conv-{c}", start + timedelta(seconds=10 * k + c / 100)
            common: dict[str, Any] = {"schema_version": 1, "conversation_id": cid}
            events.append(
                TurnEvent(
                    **common, type="turn", turn_id=f"u{k}", role="user", text=f"问题 {k}", ts=ts
                )
            )
            events.append(
                TurnEvent(
                    **common,
                    type="turn",
                    turn_id=f"a{k}",
                    role="assistant",
                    text=f"回答 {k}",
                    ts=ts + timedelta(seconds=2),
                    assistant_id="web",
                    locale="zh-CN",
                )
            )
            if (c + k) % 3 == 0:
                events.append(
                    FeedbackEvent(
                        **common,
                        type="feedback",
                        turn_id=f"a{k}",
                        kind="thumbs_down",
                        ts=ts + timedelta(seconds=4),
                    )
                )
    return events


def publish(events: EventProducer, event: Event) -> Any:
    """Through the keyword methods, as a backend would call them."""
    if isinstance(event, TurnEvent):
        return events.turn(
            event.conversation_id,
            event.turn_id,
            event.role,
            event.text,
            ts=event.ts,
            assistant_id=event.assistant_id,
            locale=event.locale,
        )
    return events.feedback(event.conversation_id, event.turn_id, event.kind, ts=event.ts)


def parsed(value: bytes) -> Event:
    return parse_event(value, Limits(), utcnow()).event


def test_each_conversation_lands_in_one_partition_keyed_and_in_publish_order(
    broker: str, names: dict[str, str]
) -> None:
    topic = names["turns_topic"]
    sent = traffic(conversations=12, exchanges=3)
    with EventProducer(broker, topic, limits=Limits()) as events:
        futures = [publish(events, event) for event in sent]
    acked = [f.get(timeout=10) for f in futures]

    records = read_back(broker, topic, len(sent))

    assert len(records) == len(sent)  # each exactly once
    position = {(r.partition, r.offset): r for r in records}
    partitions: dict[str, set[int]] = {}
    for event, meta in zip(sent, acked, strict=True):
        record = position[(meta.partition, meta.offset)]
        assert record.key == event.conversation_id.encode()
        assert parsed(record.value) == event
        partitions.setdefault(event.conversation_id, set()).add(record.partition)
    assert all(len(p) == 1 for p in partitions.values()), partitions
    assert len(set().union(*partitions.values())) > 1  # keying spreads conversations out
    for cid in partitions:  # the partition holds a conversation's events as published
        in_log = [parsed(r.value) for r in records if r.key == cid.encode()]
        assert in_log == [e for e in sent if e.conversation_id == cid]


def test_the_documented_snippet_publishes_to_the_configured_topic(
    broker: str, names: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UXMON_BROKER", broker)
    monkeypatch.setenv("UXMON_TURNS_TOPIC", names["turns_topic"])
    exec(compile(docs_snippet(), "docs/events.md", "exec"), {})

    records = read_back(broker, names["turns_topic"], 3)

    assert [r.key for r in records] == [b"c-42"] * 3
    assert [(e.type, e.turn_id) for e in map(parsed, (r.value for r in records))] == [
        ("turn", "t-6"),
        ("turn", "t-7"),
        ("feedback", "t-7"),
    ]


def test_a_worker_scores_every_assistant_turn_the_helper_published(
    broker: str, names: dict[str, str], start_worker: Callable[..., LocalWorker]
) -> None:
    sent = traffic(conversations=6, exchanges=2)
    replies = sum(1 for e in sent if isinstance(e, TurnEvent) and e.role == "assistant")
    worker = start_worker()
    with EventProducer(broker, names["turns_topic"], limits=Limits()) as events:
        for event in sent:
            publish(events, event)

    worker.wait_for("uxmon_turns_scored_total", replies)

    assert worker.total("uxmon_events_consumed_total") == len(sent)
    assert worker.total("uxmon_events_rejected_total") == 0
    assert worker.total("uxmon_turns_scored_total") == replies
