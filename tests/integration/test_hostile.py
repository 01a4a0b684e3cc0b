"""Hostile records against a real broker and a real worker: each one is dead-lettered with
its reason, every valid record around them is scored, and the worker never dies."""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from stream.local import LocalWorker
from tests.support.services import produce, read_topic
from tests.support.traffic import turn_event

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]
T0 = datetime.now(UTC) - timedelta(minutes=5)


def turn(
    cid: str, tid: str, role: str, seconds: float, text: str = "你好", **extra: object
) -> dict:
    return turn_event(cid, tid, role, T0 + timedelta(seconds=seconds), text, **extra)


def raw(event: dict) -> bytes:
    return json.dumps(event, ensure_ascii=False).encode()


def hostile() -> list[tuple[bytes, bytes, str]]:
    """(key, value, expected reason)"""
    start = b'{"schema_version": 1, "type": "turn", "conversation_id": "h", "turn_id": "x", '
    big_turn = raw(turn("h-big", "u1", "user", 0, text="长" * 280_000))  # 840 KB
    return [
        (b"h-deep", b"[" * 10_000 + b"]" * 10_000, "too_deep"),
        (
            b"h-deep2",
            start + b'"metadata": ' + b'{"a":' * 50_000 + b"1" + b"}" * 50_001,
            "too_deep",
        ),
        (b"h-int", start + b'"n": ' + b"9" * 5_000 + b"}", "number_too_long"),
        (b"h-huge", start + b'"text": "' + b"x" * 5_000_000 + b'"}', "too_large"),
        (b"h-big", big_turn[:-2], "invalid_json"),  # 840 KB, cut short
        (
            b"h-dup",
            raw(turn("h-dup", "u1", "user", 0))[:-1] + b', "role": "assistant"}',
            "duplicate_key",
        ),
        (b"h-nan", start + b'"score": NaN}', "non_finite_number"),
        (
            b"h-sur",
            json.dumps(turn("h-sur", "u1", "user", 0, text="\ud800")).encode(),
            "lone_surrogate",
        ),
    ]


def test_hostile_records_are_dead_lettered_and_every_valid_one_is_scored(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    bad = hostile()
    # A conversation whose every turn is the longest text allowed: its state must still fit.
    long_chat = [
        turn(
            "long",
            f"{'u' if i % 2 == 0 else 'a'}{i}",
            "user" if i % 2 == 0 else "assistant",
            i,
            text="长" * 32_000,
        )
        for i in range(10)
    ]
    forward = [  # a producer that already sends fields uxmon does not know
        turn("fwd", "u1", "user", 0, trace_id="t-1"),
        turn("fwd", "a1", "assistant", 1, trace_id="t-1", experiment={"arm": "b"}),
    ]
    after = [turn("after", "u1", "user", 0), turn("after", "a1", "assistant", 1)]
    worker = start_worker()

    topic = names["turns_topic"]
    produce(broker, topic, [(b"long", raw(e)) for e in long_chat[:4]])
    produce(broker, topic, [(k, v) for k, v, _ in bad], max_request_size=8 << 20)
    produce(broker, topic, [(b"fwd", raw(e)) for e in forward])
    produce(broker, topic, [(b"long", raw(e)) for e in long_chat[4:]])
    produce(broker, topic, [(b"after", raw(e)) for e in after])

    expected_scored = {("long", e["turn_id"]) for e in long_chat if e["role"] == "assistant"}
    expected_scored |= {("fwd", "a1"), ("after", "a1")}
    worker.wait_for("uxmon_turns_scored_total", len(expected_scored), timeout_s=300)
    dead = read_topic(broker, names["dlq_topic"], len(bad))
    scores = [
        r
        for r in read_topic(broker, names["scores_topic"], len(expected_scored))
        if r["type"] == "score"
    ]

    assert worker.alive()
    assert {(s["conversation_id"], s["turn_id"]) for s in scores} == expected_scored
    by_key = {base64.b64decode(d["key_b64"]): d for d in dead}
    assert len(dead) == len(bad)
    for key, value, reason in bad:
        letter = by_key[key]
        assert letter["reason"] == reason, (key, letter["reason"], letter["detail"])
        kept = base64.b64decode(letter["value_b64"])
        assert value.startswith(kept)
        if len(kept) < len(value):  # truncated within its budget, the rest identified
            assert letter["value_bytes"] == len(value)
            assert letter["value_sha256"] == hashlib.sha256(value).hexdigest()
        assert "长长" not in letter["detail"]
    for reason, count in Counter(reason for _, _, reason in bad).items():
        assert worker.total("uxmon_events_rejected_total", reason=reason) == count
    assert worker.total("uxmon_event_unknown_fields_total") == 3
    assert worker.total("uxmon_events_rejected_total") == len(bad)
