from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

from scorer.types import Dialogue, Score, Verdict
from stream.conversation import ConversationState, Position, Tracking
from stream.events import Limits, Reason
from stream.reactions import Patterns
from stream.step import (
    Record,
    dead_letter_record,
    plan_batch,
    score_all,
    score_batch,
    scored_record,
    split_scored,
)
from tests.support.scorers import Keyword

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TRACKING = Tracking(Patterns.load())


def record(offset: int, cid: str, tid: str, role: str, text: str, key: str | None = None) -> Record:
    value = json.dumps(
        {
            "schema_version": 1,
            "type": "turn",
            "conversation_id": cid,
            "turn_id": tid,
            "role": role,
            "text": text,
            "ts": (NOW - timedelta(seconds=100 - offset)).isoformat(),
            "scenario": "Other",
        }
    ).encode()
    return Record((key or cid).encode(), value, Position("turns", 0, offset))


def plan(records: list[Record], stored: dict | None = None):
    stored = stored or {}
    return plan_batch(
        records,
        lambda cid: stored.get(cid, ConversationState()),
        limits=Limits(),
        now=NOW,
        history_turns=8,
        seen_ids=64,
        tracking=TRACKING,
    )


def test_a_batch_folds_conversations_in_order_and_plans_scoring() -> None:
    result = plan(
        [
            record(0, "a", "u1", "user", "问"),
            record(1, "b", "u1", "user", "hi"),
            record(2, "a", "a1", "assistant", "答"),
            record(3, "a", "a1", "assistant", "答"),
            Record(b"c", b"\x00\xff", Position("turns", 0, 4)),
            record(5, "b", "a1", "assistant", "hello", key="wrong"),
        ]
    )
    assert [t.event.turn_id for t in result.to_score] == ["a1"]
    assert result.to_score[0].dialogue.user_message == "问"
    assert [d.reason for d in result.dead] == [
        Reason.DUPLICATE,
        Reason.UNDECODABLE,
        Reason.KEY_MISMATCH,
    ]
    assert set(result.states) == {"a", "b"} and result.consumed == 6


def test_replayed_records_are_skipped_not_rejected() -> None:
    first = plan([record(0, "a", "u1", "user", "问"), record(1, "a", "a1", "assistant", "答")])
    again = plan([record(1, "a", "a1", "assistant", "答")], stored=first.states)
    assert again.redelivered == 1 and not again.dead and not again.to_score


class Exploding:
    name, version = "boom", "1"

    def load(self) -> None: ...

    def score(self, batch):
        if any("炸" in d.reply for d in batch):
            raise ValueError("cannot")
        return [Score(0.5, Verdict.GOOD, self.name, self.version, 0.0) for _ in batch]


def test_one_poisonous_turn_fails_alone() -> None:
    result = plan(
        [
            record(0, "a", "u", "user", "q"),
            record(1, "a", "x", "assistant", "炸"),
            record(2, "b", "u", "user", "q"),
            record(3, "b", "y", "assistant", "ok"),
        ]
    )
    scoring = score_batch([Exploding()], None, None, result.to_score)
    done, failed = split_scored(result, scoring)
    assert [i.event.turn_id for i, _ in done] == ["y"]
    assert [(i.event.turn_id, err) for i, err in failed] == [("x", "ValueError")]


def test_output_records_carry_no_text_unless_asked() -> None:
    result = plan(
        [record(0, "a", "u", "user", "秘密问题"), record(1, "a", "x", "assistant", "秘密回答")]
    )
    [item] = result.to_score
    [run] = score_all([Keyword()], [item.dialogue])
    plain = json.dumps(scored_record(item, run.scores, NOW, include_text=False), ensure_ascii=False)
    assert "秘密" not in plain and '"verdict": "good"' in plain
    assert "秘密回答" in json.dumps(
        scored_record(item, run.scores, NOW, include_text=True), ensure_ascii=False
    )


def test_dead_letters_keep_the_original_bytes() -> None:
    bad = Record(b"k", b"\x00\xffraw", Position("turns", 3, 42))
    [dead] = plan([bad]).dead
    out = dead_letter_record(dead, NOW)
    assert base64.b64decode(out["value_b64"]) == b"\x00\xffraw"
    assert (out["topic"], out["partition"], out["offset"], out["reason"]) == (
        "turns",
        3,
        42,
        "undecodable",
    )


def test_dialogue_type_is_what_scorers_get() -> None:
    result = plan([record(0, "a", "u", "user", "q"), record(1, "a", "x", "assistant", "r")])
    assert isinstance(result.to_score[0].dialogue, Dialogue)
