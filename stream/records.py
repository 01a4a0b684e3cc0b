"""The records of the stream: one consumed from the turns topic, and the ones a batch
publishes (score, reaction and episode records on the scores topic, dead letters).

No user text leaves through here unless `include_text` asks for it on score records; a dead
letter carries the original bytes (the DLQ needs the turns topic's access control).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from scorer.types import Score
from stream.conversation import Position, ReactionSeen, Signal
from stream.events import Reason
from stream.reactions import is_dissatisfied
from stream.recovery import Closed

if TYPE_CHECKING:
    from stream.pipeline import ToScore


@dataclass(frozen=True, slots=True)
class Record:
    """One consumed Kafka record, as the pipeline needs it."""

    key: bytes | None
    value: bytes | None
    position: Position


@dataclass(frozen=True, slots=True)
class DeadLetter:
    record: Record
    reason: Reason
    detail: str


def scored_record(
    item: ToScore,
    scores: Sequence[Score],
    scored_at: datetime,
    *,
    include_text: bool,
    shadow: Sequence[Score] = (),
) -> dict[str, Any]:
    """The record published to the scores topic for one assistant turn; the shadow
    scorers' scores under `shadow`, apart from the scores everything else reads."""
    event = item.event
    record: dict[str, Any] = {
        "schema_version": 1,
        "type": "score",
        "conversation_id": event.conversation_id,
        "turn_id": event.turn_id,
        "assistant_id": event.assistant_id,
        "model_version": event.model_version,
        "scenario": event.scenario,
        "locale": event.locale,
        "event_ts": event.ts.isoformat(),
        "scored_at": scored_at.isoformat(),
        "recovery": item.recovery,
        "scores": [_score(s) for s in scores],
    }
    if shadow:
        record["shadow"] = [_score(s) for s in shadow]
    if include_text:
        record["user_message"] = item.dialogue.user_message
        record["reply"] = item.dialogue.reply
    return record


def _score(s: Score) -> dict[str, Any]:
    return {
        "scorer": s.scorer,
        "version": s.version,
        "p_satisfied": round(s.p_satisfied, 6),
        "verdict": str(s.verdict),
        "latency_s": round(s.latency_s, 6),
    }


DLQ_KEY_BYTES = 1024  # Kafka keys are ids; a longer one is kept as a prefix and a hash


def dead_letter_record(dead: DeadLetter, at: datetime, *, max_value_bytes: int) -> dict[str, Any]:
    """The record published to the dead-letter topic: reason, source and original bytes.

    The bytes are base64 within a budget: a longer value (or key) keeps its first bytes,
    its size and its sha256, so the record always fits the producer however big the input.
    """
    position = dead.record.position
    return {
        "reason": str(dead.reason),
        "detail": dead.detail,
        "topic": position.topic,
        "partition": position.partition,
        "offset": position.offset,
        **_payload("key", dead.record.key, DLQ_KEY_BYTES),
        **_payload("value", dead.record.value or b"", max_value_bytes),
        "at": at.isoformat(),
    }


def _payload(name: str, data: bytes | None, budget: int) -> dict[str, Any]:
    if data is None:
        return {f"{name}_b64": None}
    fields: dict[str, Any] = {f"{name}_b64": base64.b64encode(data[:budget]).decode()}
    if len(data) > budget:
        fields[f"{name}_truncated"] = True
        fields[f"{name}_bytes"] = len(data)
        fields[f"{name}_sha256"] = hashlib.sha256(data).hexdigest()
    return fields


def dead_letter_bytes(max_value_bytes: int, topic_chars: int) -> int:
    """The most bytes a dead-letter record can take as JSON (see `dead_letter_record`)."""
    b64 = 4 * ((DLQ_KEY_BYTES + 2) // 3) + 4 * ((max_value_bytes + 2) // 3)
    return b64 + 6 * topic_chars + 1024  # the other fields, a detail of a few hundred chars


def signal_record(conversation_id: str, signal: Signal) -> dict[str, Any] | None:
    """The scores-topic record of a reaction or an episode's close (None for others)."""
    if isinstance(signal, ReactionSeen):
        return {
            "schema_version": 1,
            "type": "reaction",
            "conversation_id": conversation_id,
            "turn_id": signal.turn_id,
            "reaction": str(signal.reaction),
            "dissatisfied": is_dissatisfied(signal.reaction),
            "ts": signal.ts.isoformat(),
        }
    if isinstance(signal, Closed):
        episode = signal.episode
        return {
            "schema_version": 1,
            "type": "episode",
            "conversation_id": conversation_id,
            "episode_id": episode.id,
            "scenario": episode.scenario,
            "assistant_id": episode.assistant_id,
            "trigger": str(episode.trigger),
            "outcome": str(signal.outcome),
            "cause": signal.cause,
            "attempts": episode.attempts,
            "last_attempt": episode.attempt,
            "opened_ts": episode.opened_ts.isoformat(),
            "closed_ts": signal.closed_ts.isoformat(),
            "seconds": round(signal.seconds, 3),
        }
    return None
