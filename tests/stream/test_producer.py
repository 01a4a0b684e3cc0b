"""EventProducer without a broker: validation, serialisation, keying, delivery errors.

kafka-python's KafkaProducer is replaced by a recorder; tests/integration/test_producer.py
publishes to a real broker.
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, ClassVar

import pytest
from kafka.errors import KafkaTimeoutError, NotLeaderForPartitionError

import stream.producer as producer_module
from stream.broker import BrokerError, free_port
from stream.events import FeedbackEvent, Limits, Reason, TurnEvent, parse_event, utcnow
from stream.producer import DeliveryError, EventProducer, InvalidEventError, encode

DOCS = Path(__file__).resolve().parents[2] / "docs" / "events.md"
SECRET = "我的银行卡密码是 123456"  # user text that must never reach an error message


class FakeFuture:
    def __init__(self) -> None:
        self.errbacks: list[Callable[[BaseException], Any]] = []

    def add_errback(self, fn: Callable[[BaseException], Any]) -> FakeFuture:
        self.errbacks.append(fn)
        return self

    def fail(self, exc: BaseException) -> None:
        for fn in self.errbacks:
            fn(exc)


class FakeKafka:
    """Records what KafkaProducer would send; `send_error` makes send() raise."""

    made: ClassVar[list[FakeKafka]] = []

    def __init__(self, **config: Any) -> None:
        self.config = config
        self.sent: list[tuple[str, bytes, bytes, FakeFuture]] = []
        self.flushed = 0
        self.closed = False
        self.send_error: Exception | None = None
        FakeKafka.made.append(self)

    def send(self, topic: str, key: bytes, value: bytes) -> FakeFuture:
        if self.send_error:
            raise self.send_error
        future = FakeFuture()
        self.sent.append((topic, key, value, future))
        return future

    def flush(self, timeout: float | None = None) -> None:
        self.flushed += 1

    def close(self, timeout: float | None = None) -> None:
        self.closed = True


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> type[FakeKafka]:
    FakeKafka.made = []
    monkeypatch.setattr(producer_module, "KafkaProducer", FakeKafka)
    monkeypatch.setattr(producer_module, "check_reachable", lambda broker, timeout_s: None)
    return FakeKafka


def make(**kwargs: Any) -> tuple[EventProducer, FakeKafka]:
    events = EventProducer("kafka:9092", "turns", limits=Limits(), **kwargs)
    return events, FakeKafka.made[-1]


def parsed(value: bytes) -> TurnEvent | FeedbackEvent:
    """What the worker makes of a record value."""
    return parse_event(value, Limits(), utcnow()).event


def test_a_turn_is_keyed_by_its_conversation_and_reads_back_as_the_same_event(
    fake: type[FakeKafka],
) -> None:
    ts = datetime(2026, 11, 29, 10, 15, 2, 120_000, tzinfo=timezone(timedelta(hours=8)))
    events, kafka = make()
    events.turn(
        "c-42",
        "t-7",
        "assistant",
        "可以在订单页申请退款。",
        ts=ts,
        assistant_id="app",
        model_version="m-2026.11",
        scenario="Product & Service Inquiry",
        locale="zh-CN",
        metadata={"arm": "b"},
    )
    [(topic, key, value, _)] = kafka.sent
    assert topic == "turns" and key == b"c-42"
    assert parsed(value) == TurnEvent(
        schema_version=1,
        type="turn",
        conversation_id="c-42",
        turn_id="t-7",
        role="assistant",
        text="可以在订单页申请退款。",
        ts=ts,
        assistant_id="app",
        model_version="m-2026.11",
        scenario="Product & Service Inquiry",
        locale="zh-CN",
        metadata={"arm": "b"},
    )
    assert "可以".encode() in value  # UTF-8, not \\u escapes: the size limit counts bytes


def test_feedback_and_event_models_are_published_alike(fake: type[FakeKafka]) -> None:
    ts = datetime(2026, 11, 29, 2, 0, tzinfo=UTC)
    model = FeedbackEvent(
        schema_version=1, type="feedback", conversation_id="c-1", turn_id="t-2", kind="stop", ts=ts
    )
    events, kafka = make()
    events.feedback("c-1", "t-2", "stop", ts=ts)
    events.publish(model)
    assert [key for _, key, _, _ in kafka.sent] == [b"c-1", b"c-1"]
    assert [parsed(value) for _, _, value, _ in kafka.sent] == [model, model]


def test_ts_defaults_to_now_in_utc(fake: type[FakeKafka]) -> None:
    events, kafka = make()
    before = utcnow()
    events.turn("c", "t", "user", "hi")
    ts = parsed(kafka.sent[0][2]).ts
    assert before <= ts <= utcnow() and ts.utcoffset() == timedelta(0)


def test_the_key_is_the_conversation_id_as_utf8(fake: type[FakeKafka]) -> None:
    events, kafka = make()
    for cid in ("a", "会话-7", "a"):
        events.turn(cid, f"t-{len(kafka.sent)}", "user", "x")
    assert [key for _, key, _, _ in kafka.sent] == [b"a", "会话-7".encode(), b"a"]


@pytest.mark.parametrize(
    ("call", "reason", "names"),
    [
        (lambda p: p.turn("c", "t", "bot", SECRET), Reason.SCHEMA_VIOLATION, "role"),
        (lambda p: p.turn("", "t", "user", SECRET), Reason.SCHEMA_VIOLATION, "conversation_id"),
        (lambda p: p.turn("c", "t", "user", 42), Reason.SCHEMA_VIOLATION, "text"),
        (lambda p: p.feedback("c", "t", "like"), Reason.SCHEMA_VIOLATION, "kind"),
        (
            lambda p: p.turn("c", "t", "user", SECRET, ts=datetime(2026, 11, 29, 10)),
            Reason.SCHEMA_VIOLATION,
            "ts",  # no zone: the worker could not order it against other turns
        ),
        (
            lambda p: p.turn("c", "t", "user", SECRET, ts=utcnow() + timedelta(hours=1)),
            Reason.FUTURE_TIMESTAMP,
            "ts",
        ),
        (lambda p: p.turn("c", "t", "user", SECRET * 5000), Reason.OVER_LIMIT, "text"),
        (lambda p: p.turn("c" * 200, "t", "user", SECRET), Reason.OVER_LIMIT, "conversation_id"),
        (
            lambda p: p.turn("c", "t", "user", SECRET, metadata={"k": 1}),
            Reason.SCHEMA_VIOLATION,
            "metadata",
        ),
        (lambda p: p.turn("c", "t", "user", SECRET + "\ud800"), Reason.LONE_SURROGATE, "surrogate"),
        (lambda p: p.turn("c", "t", "user", {SECRET}), Reason.SCHEMA_VIOLATION, "set"),
    ],
)
def test_an_event_the_worker_would_reject_fails_here_naming_the_field_not_the_text(
    fake: type[FakeKafka], call: Callable[[EventProducer], Any], reason: Reason, names: str
) -> None:
    events, kafka = make()
    with pytest.raises(InvalidEventError) as caught:
        call(events)
    assert caught.value.reason == reason
    assert names in caught.value.detail
    assert isinstance(caught.value, ValueError)
    assert "银行卡" not in str(caught.value) and "123456" not in str(caught.value)
    assert kafka.sent == []


def test_the_check_uses_the_limits_it_is_given(fake: type[FakeKafka]) -> None:
    events = EventProducer("kafka:9092", "turns", limits=Limits(max_text_chars=10))
    with pytest.raises(InvalidEventError, match="text has 11 chars, limit 10"):
        events.turn("c", "t", "user", "x" * 11)


def test_broker_topic_and_limits_default_to_the_workers_settings(
    fake: type[FakeKafka], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UXMON_BROKER", "k1:9092,k2:9092")
    monkeypatch.setenv("UXMON_TURNS_TOPIC", "team.turns")
    monkeypatch.setenv("UXMON_MAX_TEXT_CHARS", "100")
    events = EventProducer()
    assert (events.broker, events.topic, events.limits.max_text_chars) == (
        "k1:9092,k2:9092",
        "team.turns",
        100,
    )
    assert FakeKafka.made[-1].config["bootstrap_servers"] == ["k1:9092", "k2:9092"]
    assert EventProducer(topic="mine").topic == "mine"


def test_delivery_settings_are_fixed_and_the_rest_passes_through(fake: type[FakeKafka]) -> None:
    _, kafka = make(max_block_ms=2_000, security_protocol="SSL", linger_ms=5)
    assert kafka.config["acks"] == "all" and kafka.config["enable_idempotence"] is True
    assert kafka.config["max_block_ms"] == 2_000
    assert kafka.config["security_protocol"] == "SSL" and kafka.config["linger_ms"] == 5
    with pytest.raises(ValueError, match="acks"):
        make(acks=1)


def test_an_unreachable_broker_fails_fast_with_the_setting_to_fix() -> None:
    address = f"127.0.0.1:{free_port()}"
    with pytest.raises(BrokerError, match=rf"{address}.*UXMON_BROKER"):
        EventProducer(address, "turns", limits=Limits(), connect_timeout_s=0.3)


def test_a_port_that_does_not_speak_kafka_fails_within_max_block_ms() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"kafka://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        with pytest.raises(BrokerError, match=r"no Kafka protocol at 127\.0\.0\.1:"):
            EventProducer(address, "turns", limits=Limits(), max_block_ms=500)
    assert time.monotonic() - started < 5


def test_a_failed_delivery_is_raised_by_the_next_flush_once(fake: type[FakeKafka]) -> None:
    events, _ = make()
    events.turn("c", "t1", "user", SECRET).fail(NotLeaderForPartitionError())
    events.turn("c", "t2", "user", SECRET)
    with pytest.raises(DeliveryError, match=r"1 event.*NotLeaderForPartitionError") as caught:
        events.flush()
    assert "银行卡" not in str(caught.value)
    events.flush()  # reported once; the caller has republished by now


def test_send_errors_become_delivery_errors(fake: type[FakeKafka]) -> None:
    events, kafka = make()
    kafka.send_error = KafkaTimeoutError("no metadata")
    with pytest.raises(DeliveryError, match="KafkaTimeoutError"):
        events.turn("c", "t", "user", "x")


def test_leaving_the_block_flushes_and_closes_even_when_delivery_failed(
    fake: type[FakeKafka],
) -> None:
    with pytest.raises(DeliveryError), EventProducer("k:9092", "t", limits=Limits()) as events:
        events.turn("c", "t", "user", "x").fail(KafkaTimeoutError())
    kafka = FakeKafka.made[-1]
    assert kafka.flushed == 1 and kafka.closed


def test_encode_leaves_out_unset_fields() -> None:
    value = encode(
        {"type": "feedback", "conversation_id": "c", "turn_id": "t", "kind": "copy"}, Limits()
    )
    assert set(parsed(value).model_dump(exclude_unset=True)) == {
        "schema_version",
        "type",
        "conversation_id",
        "turn_id",
        "kind",
        "ts",
    }


def docs_snippet() -> str:
    """The Python block of "Publishing from Python" in docs/events.md."""
    section = DOCS.read_text().split("## Publishing from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_documented_snippet_publishes_valid_keyed_events(
    fake: type[FakeKafka], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UXMON_TURNS_TOPIC", "docs.turns")
    exec(compile(docs_snippet(), str(DOCS), "exec"), {})
    [kafka] = FakeKafka.made
    assert kafka.closed and kafka.flushed == 1
    assert {topic for topic, _, _, _ in kafka.sent} == {"docs.turns"}
    events = [parsed(value) for _, _, value, _ in kafka.sent]
    assert [(e.type, e.turn_id) for e in events] == [
        ("turn", "t-6"),
        ("turn", "t-7"),
        ("feedback", "t-7"),
    ]
    assert [key for _, key, _, _ in kafka.sent] == [e.conversation_id.encode() for e in events]
