"""The per-batch step as plain functions: records in, state changes and outputs out.

The faust agent (stream/app.py) only feeds this and performs the I/O it asks for, so
everything here is testable without Kafka.
"""

from __future__ import annotations

import base64
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scorer.protocol import Scorer
from scorer.types import Dialogue, Score
from stream.conversation import ConversationState, Position, apply_event
from stream.events import Event, Limits, Reason, Rejected, TurnEvent, parse_event

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Record:
    """One consumed Kafka record, as the step needs it."""

    key: bytes | None
    value: bytes | None
    position: Position


@dataclass(frozen=True, slots=True)
class DeadLetter:
    record: Record
    reason: Reason
    detail: str


@dataclass(frozen=True, slots=True)
class ToScore:
    event: TurnEvent
    dialogue: Dialogue
    record: Record


@dataclass(slots=True)
class BatchPlan:
    states: dict[str, ConversationState] = field(default_factory=dict)  # changed only
    to_score: list[ToScore] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # valid, newly applied
    redelivered: int = 0
    consumed: int = 0


def plan_batch(
    records: Sequence[Record],
    load_state: Callable[[str], ConversationState],
    *,
    limits: Limits,
    now: datetime,
    history_turns: int,
    seen_ids: int,
) -> BatchPlan:
    """Validate and fold a batch in order; the last state of each conversation wins."""
    plan = BatchPlan(consumed=len(records))
    now_s = now.timestamp()
    for record in records:
        try:
            event = parse_event(record.value, limits, now)
            _check_key(record, event)
            state = plan.states.get(event.conversation_id) or load_state(event.conversation_id)
            if state.is_redelivery(record.position):
                plan.redelivered += 1
                continue
            applied = apply_event(
                state,
                event,
                record.position,
                now_s=now_s,
                history_turns=history_turns,
                seen_ids=seen_ids,
            )
        except Rejected as rejected:
            plan.dead.append(DeadLetter(record, rejected.reason, rejected.detail))
            continue
        plan.states[event.conversation_id] = applied.state
        plan.events.append(event)
        if applied.dialogue is not None:
            assert isinstance(event, TurnEvent)
            plan.to_score.append(ToScore(event, applied.dialogue, record))
    return plan


def _check_key(record: Record, event: Event) -> None:
    # The table is co-partitioned with the topic by conversation_id: a record keyed
    # otherwise lands in a partition that does not own its conversation.
    expected = event.conversation_id.encode("utf-8")
    if record.key != expected:
        got = "no key" if record.key is None else f"a {len(record.key)}-byte key"
        raise Rejected(Reason.KEY_MISMATCH, f"expected the conversation_id as key, got {got}")


@dataclass(frozen=True, slots=True)
class ScorerRun:
    scores: list[Score | None]  # None: this turn could not be scored (see `errors`)
    seconds: float
    errors: dict[int, str] = field(default_factory=dict)  # index -> exception type name


def score_all(scorers: Sequence[Scorer], dialogues: Sequence[Dialogue]) -> list[ScorerRun]:
    """Run every scorer on the batch (blocking: call it off the event loop).

    A failing batch is retried item by item, so one poisonous turn costs only itself: it
    is dead-lettered as `scoring_failed` instead of stalling its partition forever.
    """
    runs = []
    for scorer in scorers:
        started = time.perf_counter()
        errors: dict[int, str] = {}
        try:
            scores: list[Score | None] = list(scorer.score(dialogues))
            if len(scores) != len(dialogues):
                raise RuntimeError(f"{scorer.name} returned {len(scores)} for {len(dialogues)}")
        except Exception:
            log.warning(
                "scorer %s failed on a batch of %d; retrying one by one",
                scorer.name,
                len(dialogues),
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            scores = []
            for i, dialogue in enumerate(dialogues):
                try:
                    scores.append(scorer.score([dialogue])[0])
                except Exception as exc:
                    errors[i] = type(exc).__name__
                    scores.append(None)
        runs.append(ScorerRun(scores, time.perf_counter() - started, errors))
    return runs


def scored_record(
    item: ToScore, scores: Sequence[Score], scored_at: datetime, *, include_text: bool
) -> dict[str, Any]:
    """The record published to the scores topic for one assistant turn."""
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
        "scores": [
            {
                "scorer": s.scorer,
                "version": s.version,
                "p_satisfied": round(s.p_satisfied, 6),
                "verdict": str(s.verdict),
                "latency_s": round(s.latency_s, 6),
            }
            for s in scores
        ],
    }
    if include_text:
        record["user_message"] = item.dialogue.user_message
        record["reply"] = item.dialogue.reply
    return record


def dead_letter_record(dead: DeadLetter, at: datetime) -> dict[str, Any]:
    """The record published to the dead-letter topic: reason, source and original bytes."""
    position = dead.record.position
    return {
        "reason": str(dead.reason),
        "detail": dead.detail,
        "topic": position.topic,
        "partition": position.partition,
        "offset": position.offset,
        "key_b64": base64.b64encode(dead.record.key).decode() if dead.record.key else None,
        "value_b64": base64.b64encode(dead.record.value or b"").decode(),
        "at": at.isoformat(),
    }


def split_scored(
    plan: BatchPlan, runs: Sequence[ScorerRun]
) -> tuple[list[tuple[ToScore, list[Score]]], list[tuple[ToScore, str]]]:
    """Turns every scorer scored, and turns some scorer failed on (with the error types)."""
    done, failed = [], []
    for i, item in enumerate(plan.to_score):
        scores = [run.scores[i] for run in runs]
        if all(s is not None for s in scores):
            done.append((item, [s for s in scores if s is not None]))
        else:
            failed.append(
                (item, ",".join(sorted({run.errors[i] for run in runs if i in run.errors})))
            )
    return done, failed
