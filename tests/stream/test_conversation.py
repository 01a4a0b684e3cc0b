from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from stream.conversation import (
    Bounds,
    ConversationState,
    Position,
    Tracking,
    apply_event,
    state_bytes_bound,
)
from stream.events import FeedbackEvent, Reason, Rejected, TurnEvent
from stream.reactions import Patterns

T0 = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TRACKING = Tracking(Patterns.load())


def turn(tid: str, role: str, text: str, seconds: float = 0) -> TurnEvent:
    return TurnEvent(
        schema_version=1,
        type="turn",
        conversation_id="c",
        turn_id=tid,
        role=role,  # type: ignore[arg-type]
        text=text,
        ts=T0 + timedelta(seconds=seconds),
    )


def fold(
    events: list, history: int = 8, bounds: Bounds | None = None
) -> tuple[ConversationState, list]:
    state, dialogues = ConversationState(), []
    for offset, event in enumerate(events):
        applied = apply_event(
            state,
            event,
            Position("t", 0, offset),
            now_s=0,
            bounds=bounds or Bounds(history, 4),
            tracking=TRACKING,
        )
        state = applied.state
        dialogues.append(applied.dialogue)
    return state, dialogues


def test_an_assistant_turn_is_scored_with_the_question_and_earlier_history() -> None:
    _, dialogues = fold(
        [
            turn("u1", "user", "你好", 0),
            turn("a1", "assistant", "你好！有什么可以帮你？", 1),
            turn("u2", "user", "订单没到", 2),
            turn("u3", "user", "单号 123", 3),
            turn("a2", "assistant", "我帮你查一下", 4),
        ]
    )
    assert dialogues[:4] == [None, dialogues[1], None, None]
    last = dialogues[4]
    assert last.user_message == "订单没到\n单号 123" and last.reply == "我帮你查一下"
    assert [t.text for t in last.history] == ["你好", "你好！有什么可以帮你？"]
    assert last.id == "a2"


def test_history_and_seen_ids_stay_bounded() -> None:
    events = [turn(f"t{i}", "user" if i % 2 == 0 else "assistant", str(i), i) for i in range(50)]
    state, _ = fold(events, history=6)
    assert len(state.turns) == 6 and len(state.seen) == 4
    assert state.scored == 25


def test_state_stays_within_its_byte_bound_whatever_the_turns_hold() -> None:
    bounds = Bounds()  # the defaults the service runs with
    huge = "长" * 32_000  # the longest text an event may carry; 6 bytes a char escaped
    ids = [f"{i:03d}" + "x" * 125 for i in range(300)]  # max_id_chars ids
    events = [
        turn(tid, "user" if i % 2 == 0 else "assistant", huge, i) for i, tid in enumerate(ids)
    ]
    state, dialogues = fold(events, bounds=bounds)
    size = len(json.dumps(state.to_json(), ensure_ascii=True).encode())
    assert size <= state_bytes_bound(bounds, 128) < 1_000_000
    assert dialogues[-1].reply == huge  # the scorers still see the whole reply
    assert all(len(t.text) == bounds.context_chars for t in state.turns)
    assert [t.turn_id for t in state.turns] == ids[-len(state.turns) :]  # the newest kept


def test_the_oldest_turns_go_first_when_the_bytes_run_out() -> None:
    bounds = Bounds(8, 4, context_chars=100, history_bytes=2_000)
    events = [turn(f"t{i}", "user" if i % 2 == 0 else "assistant", "字" * 100, i) for i in range(8)]
    state, _ = fold(events, bounds=bounds)
    assert [t.turn_id for t in state.turns] == ["t5", "t6", "t7"]  # 3 x 602 bytes fit


def test_duplicates_and_disorder_are_rejected() -> None:
    state, _ = fold([turn("u1", "user", "a", 10)])
    with pytest.raises(Rejected) as dup:
        apply_event(
            state,
            turn("u1", "user", "a", 10),
            Position("t", 0, 5),
            now_s=0,
            bounds=Bounds(8, 8),
            tracking=TRACKING,
        )
    assert dup.value.reason == Reason.DUPLICATE
    with pytest.raises(Rejected) as late:
        apply_event(
            state,
            turn("u0", "user", "a", 9),
            Position("t", 0, 5),
            now_s=0,
            bounds=Bounds(8, 8),
            tracking=TRACKING,
        )
    assert late.value.reason == Reason.OUT_OF_ORDER


def test_feedback_uses_its_own_id_space() -> None:
    state, _ = fold([turn("a1", "assistant", "x", 0)])
    fb = FeedbackEvent(
        schema_version=1,
        type="feedback",
        conversation_id="c",
        turn_id="a1",
        kind="thumbs_down",
        ts=T0,
    )
    applied = apply_event(
        state, fb, Position("t", 0, 9), now_s=0, bounds=Bounds(8, 8), tracking=TRACKING
    )
    assert applied.dialogue is None
    with pytest.raises(Rejected):
        apply_event(
            applied.state,
            fb,
            Position("t", 0, 10),
            now_s=0,
            bounds=Bounds(8, 8),
            tracking=TRACKING,
        )


def test_redelivery_is_recognised_by_offset_and_state_round_trips() -> None:
    state, _ = fold([turn("u1", "user", "问题", 0), turn("a1", "assistant", "回答", 1)])
    assert state.is_redelivery(Position("t", 0, 1))
    assert not state.is_redelivery(Position("t", 0, 2))
    assert not state.is_redelivery(Position("t", 1, 0))
    assert ConversationState.from_json(state.to_json()) == state
