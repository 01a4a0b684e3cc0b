from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from stream.events import FeedbackEvent, Limits, Reason, Rejected, TurnEvent, parse_event

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
LIMITS = Limits(max_text_chars=50, max_id_chars=16, max_metadata_items=2, max_metadata_chars=8)


def turn(**changes: object) -> dict:
    base = {
        "schema_version": 1,
        "type": "turn",
        "conversation_id": "c1",
        "turn_id": "t1",
        "role": "user",
        "text": "怎么退款？",
        "ts": "2026-11-29T19:59:00+08:00",
    }
    return {**base, **changes}


def raw(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


def nested(levels: int) -> list:
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def reason_of(value: bytes | None) -> Reason:
    with pytest.raises(Rejected) as caught:
        parse_event(value, LIMITS, NOW)
    return caught.value.reason


def test_a_valid_turn_and_feedback_parse() -> None:
    event = parse_event(raw(turn(metadata={"app": "ios"}, locale="zh-CN")), LIMITS, NOW).event
    assert (
        isinstance(event, TurnEvent) and event.role == "user" and event.metadata == {"app": "ios"}
    )
    assert event.ts == datetime(2026, 11, 29, 11, 59, tzinfo=UTC)
    fb = parse_event(
        raw(
            {
                "schema_version": 1,
                "type": "feedback",
                "conversation_id": "c1",
                "turn_id": "a1",
                "kind": "thumbs_down",
                "ts": "2026-11-29T11:59:30Z",
            }
        ),
        LIMITS,
        NOW,
    ).event
    assert isinstance(fb, FeedbackEvent) and fb.kind == "thumbs_down"


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (None, Reason.INVALID_JSON),
        (b"\xc3\x28", Reason.UNDECODABLE),
        (b"{nope", Reason.INVALID_JSON),
        (b'"a string"', Reason.NOT_AN_OBJECT),
        (raw(turn(schema_version=2)), Reason.UNKNOWN_SCHEMA_VERSION),
        (raw(turn(schema_version=True)), Reason.UNKNOWN_SCHEMA_VERSION),
        (raw(turn(schema_version="1")), Reason.UNKNOWN_SCHEMA_VERSION),
        (raw(turn(type="click")), Reason.UNKNOWN_TYPE),
        (raw(turn(role="system")), Reason.SCHEMA_VIOLATION),
        (raw(turn(ts="2026-11-29T11:00:00")), Reason.SCHEMA_VIOLATION),  # no zone
        (raw(turn(ts="yesterday")), Reason.SCHEMA_VIOLATION),
        (raw(turn(text=None)), Reason.SCHEMA_VIOLATION),
        (raw(turn(conversation_id="")), Reason.SCHEMA_VIOLATION),
        (raw(turn(metadata={"k": 1})), Reason.SCHEMA_VIOLATION),
        (raw(turn(text="字" * 51)), Reason.OVER_LIMIT),
        (raw(turn(turn_id="x" * 17)), Reason.OVER_LIMIT),
        (raw(turn(metadata={"a": "1", "b": "2", "c": "3"})), Reason.OVER_LIMIT),
        (raw(turn(metadata={"a": "123456789"})), Reason.OVER_LIMIT),
        (raw(turn(ts=(NOW + timedelta(minutes=6)).isoformat())), Reason.FUTURE_TIMESTAMP),
        (b" " * (LIMITS.max_event_bytes + 1), Reason.TOO_LARGE),
        (b'{"schema_version": 1, "type": "turn", "type": "feedback"}', Reason.DUPLICATE_KEY),
        (b'{"schema_version": NaN}', Reason.NON_FINITE_NUMBER),
        (b'{"schema_version": -Infinity}', Reason.NON_FINITE_NUMBER),
        (b'{"schema_version": 1e999}', Reason.NON_FINITE_NUMBER),
        (b'{"schema_version": ' + b"1" * 5000 + b"}", Reason.NUMBER_TOO_LONG),
        (b'{"schema_version": 0.' + b"1" * 5000 + b"}", Reason.NUMBER_TOO_LONG),
        (b"[" * 10_000 + b"]" * 10_000, Reason.TOO_DEEP),  # past the interpreter's stack
        (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, Reason.TOO_DEEP),
        (b"[" * 65 + b"]" * 65, Reason.TOO_DEEP),  # within the stack, past max_depth
        (raw(turn(metadata={"k": nested(63)})), Reason.TOO_DEEP),  # 2 + 63 levels
        (json.dumps(turn(text="\ud800 alone")).encode(), Reason.LONE_SURROGATE),  # escaped
        (b'{"schema_version": 1, "type": "turn", "text": "\\udc00"}', Reason.LONE_SURROGATE),
        (b'{"\\ud800": 1}', Reason.LONE_SURROGATE),
    ],
)
def test_each_bad_input_has_its_reason(value: bytes | None, reason: Reason) -> None:
    assert reason_of(value) == reason


def test_nesting_up_to_the_limit_parses() -> None:
    deep = {"k": "v"}
    for _ in range(LIMITS.max_depth - 2):  # the event and metadata are two levels
        deep = {"k": deep}
    assert reason_of(raw(turn(metadata=deep))) == Reason.SCHEMA_VIOLATION  # depth is fine


def test_a_surrogate_pair_is_one_character_and_fine() -> None:
    value = (
        b'{"schema_version": 1, "type": "turn", "conversation_id": "c1", "turn_id": "t1",'
        b' "role": "user", "text": "\\ud83d\\ude00", "ts": "2026-11-29T11:59:00Z"}'
    )
    assert parse_event(value, LIMITS, NOW).event.text == "\U0001f600"  # type: ignore[union-attr]


def test_unknown_fields_are_ignored_and_counted() -> None:
    parsed = parse_event(raw(turn(trace_id="abc", tenant={"id": 3})), LIMITS, NOW)
    assert isinstance(parsed.event, TurnEvent) and parsed.event.text == "怎么退款？"
    assert parsed.unknown_fields == 2
    assert parse_event(raw(turn()), LIMITS, NOW).unknown_fields == 0


def test_small_clock_skew_is_allowed() -> None:
    parse_event(raw(turn(ts=(NOW + timedelta(minutes=4)).isoformat())), LIMITS, NOW)


def test_details_never_quote_user_text() -> None:
    secret = "我的身份证号是123456"
    for value in (raw(turn(text=secret * 10)), raw(turn(role=secret)), raw(turn(type=secret))):
        with pytest.raises(Rejected) as caught:
            parse_event(value, LIMITS, NOW)
        assert secret not in caught.value.detail and "身份证" not in str(caught.value)
