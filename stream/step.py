"""The per-batch step as plain functions: records in, state changes and outputs out.

The faust agent (stream/app.py) only feeds this and performs the I/O it asks for, so
everything here is testable without Kafka.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from scorer.protocol import Scorer
from scorer.types import Dialogue, Score
from stream.cascade import Budget, Candidate, Chosen, Deadline, Skipped
from stream.conversation import (
    Bounds,
    ConversationState,
    Opened,
    Position,
    ReactionSeen,
    Signal,
    Tracking,
    apply_event,
)
from stream.events import Event, Limits, Reason, Rejected, TurnEvent, parse_event
from stream.reactions import is_dissatisfied
from stream.recovery import Closed, Episode, Pending, Trigger, on_verdict

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

    @property
    def recovery(self) -> bool:
        return self.dialogue.is_recovery


@dataclass(slots=True)
class BatchPlan:
    states: dict[str, ConversationState] = field(default_factory=dict)  # changed only
    to_score: list[ToScore] = field(default_factory=list)
    dead: list[DeadLetter] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)  # valid, newly applied
    signals: list[tuple[str, Signal]] = field(default_factory=list)  # (conversation_id, ...)
    redelivered: int = 0
    consumed: int = 0
    unknown_fields: int = 0  # ignored fields on the batch's valid events
    handled: dict[int, int] = field(default_factory=dict)  # partition -> last offset handled


def plan_batch(
    records: Sequence[Record],
    load_state: Callable[[str], ConversationState],
    *,
    limits: Limits,
    now: datetime,
    bounds: Bounds,
    tracking: Tracking,
    handled_before: Callable[[int], int] = lambda partition: -1,
) -> BatchPlan:
    """Validate and fold a batch in order; the last state of each conversation wins.

    `handled_before(partition)` is the last offset a previous batch handled there (state
    written, valid or not): a record at or before it is a replay after a crash and is
    skipped whole, so a rejected record is neither dead-lettered nor counted twice.
    """
    plan = BatchPlan(consumed=len(records))
    now_s = now.timestamp()
    marks: dict[int, int] = {}
    for record in records:
        partition, offset = record.position.partition, record.position.offset
        if partition not in marks:
            marks[partition] = handled_before(partition)
        if offset <= marks[partition]:
            plan.redelivered += 1
            continue
        plan.handled[partition] = max(offset, plan.handled.get(partition, -1))
        try:
            parsed = parse_event(record.value, limits, now)
            event = parsed.event
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
                bounds=bounds,
                tracking=tracking,
            )
        except Rejected as rejected:
            plan.dead.append(DeadLetter(record, rejected.reason, rejected.detail))
            continue
        except Exception as exc:  # a bug or an input nobody foresaw: this record alone pays
            log.warning(
                "record at %s/%d/%d failed unexpectedly (%s); dead-lettered",
                record.position.topic,
                record.position.partition,
                record.position.offset,
                type(exc).__name__,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            plan.dead.append(DeadLetter(record, Reason.INTERNAL_ERROR, type(exc).__name__))
            continue
        plan.unknown_fields += parsed.unknown_fields
        plan.states[event.conversation_id] = applied.state
        plan.events.append(event)
        plan.signals.extend((event.conversation_id, signal) for signal in applied.signals)
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
        "recovery": item.recovery,
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


@dataclass(slots=True)
class Scoring:
    """What one batch's scoring produced: every judge on every turn, the GRM on some."""

    judges: list[ScorerRun]  # one per judge scorer, aligned with plan.to_score
    grm: dict[int, Score] = field(default_factory=dict)  # batch index -> GRM score
    chosen: dict[int, Chosen] = field(default_factory=dict)
    skipped: dict[int, Skipped] = field(default_factory=dict)
    grm_seconds: float = 0.0

    def seconds(self, judges: Sequence[Scorer], grm: Scorer | None) -> list[tuple[str, float]]:
        """(scorer name, wall time on this batch) for every scorer that ran."""
        timed = [(s.name, run.seconds) for s, run in zip(judges, self.judges, strict=False)]
        if grm is not None and (self.chosen or Skipped.FAILED in self.skipped.values()):
            timed.append((grm.name, self.grm_seconds))
        return timed


def score_batch(
    judges: Sequence[Scorer],
    grm: Scorer | None,
    budget: Budget | None,
    items: Sequence[ToScore],
    deadline: Deadline | None = None,
) -> Scoring:
    """The judges on every turn, then the GRM on the turns the budget picks (blocking),
    within `deadline` when one is given (the judges' scores never wait longer)."""
    dialogues = [item.dialogue for item in items]
    runs = score_all(judges, dialogues)
    scoring = Scoring(runs)
    if grm is None or budget is None or not items:
        return scoring
    candidates = []
    for i, item in enumerate(items):
        judged = runs[0].scores[i] if runs else None
        if judged is None:
            continue  # the turn is dead-lettered; the GRM has nothing to add
        threshold = judged.extras.get("threshold", 0.5)
        candidates.append(Candidate(i, item.recovery, judged.p_satisfied, threshold))
    choice = budget.choose(candidates)
    scoring.skipped = dict(choice.skipped)
    picked = sorted(choice.chosen)
    if not picked:
        return scoring

    def call() -> list[ScorerRun]:
        return score_all([grm], [dialogues[i] for i in picked])

    started = time.perf_counter()
    outcome = deadline.run(call) if deadline is not None else call()
    if isinstance(outcome, Skipped):  # overran the deadline, or still busy with an earlier one
        scoring.grm_seconds = time.perf_counter() - started
        scoring.skipped.update(dict.fromkeys(picked, outcome))
        return scoring
    (run,) = outcome
    scoring.grm_seconds = run.seconds
    for i, score in zip(picked, run.scores, strict=True):
        if score is None or math.isnan(score.p_satisfied):
            scoring.skipped[i] = Skipped.FAILED  # raised, or no verdict token at all
        else:
            scoring.grm[i] = score
            scoring.chosen[i] = choice.chosen[i]
    return scoring


def split_scored(
    plan: BatchPlan, scoring: Scoring
) -> tuple[list[tuple[ToScore, list[Score]]], list[tuple[ToScore, str]]]:
    """Turns every judge scored (with the GRM's score when it ran), and turns some judge
    failed on (with the error types)."""
    done, failed = [], []
    runs = scoring.judges
    for i, item in enumerate(plan.to_score):
        scores = [run.scores[i] for run in runs]
        if all(s is not None for s in scores):
            extra = [scoring.grm[i]] if i in scoring.grm else []
            done.append((item, [s for s in scores if s is not None] + extra))
        else:
            failed.append(
                (item, ",".join(sorted({run.errors[i] for run in runs if i in run.errors})))
            )
    return done, failed


@dataclass(frozen=True, slots=True)
class Pair:
    """A scorer's verdict on a turn and whether the user's reaction was dissatisfied."""

    scorer: str
    verdict: str
    dissatisfied: bool


def pairs(signals: Sequence[tuple[str, Signal]]) -> list[Pair]:
    """Each reaction paired with every verdict known for the turn it reacts to."""
    return [
        Pair(scorer, verdict, is_dissatisfied(signal.reaction))
        for _, signal in signals
        if isinstance(signal, ReactionSeen)
        for scorer, verdict in signal.verdicts
    ]


def recovery_verdict(scores: Sequence[Score], grm_name: str | None) -> str | None:
    """The GRM's verdict when it scored the reply, else the first judge's."""
    by_name = {s.scorer: str(s.verdict) for s in scores}
    if grm_name is not None and grm_name in by_name:
        return by_name[grm_name]
    return str(scores[0].verdict) if scores else None


def settle(
    plan: BatchPlan,
    done: Sequence[tuple[ToScore, Sequence[Score]]],
    *,
    grm_name: str | None,
    open_below: float | None,
) -> list[tuple[str, Signal]]:
    """Fold the batch's verdicts into the conversation states (plan.states is updated):
    attempts judged bad fail their episode, pending closes get their outcome, reactions
    get the verdicts they are compared with. Returns the batch's signals, none pending.
    `open_below`: a judge score under it opens an episode on a turn nobody has reacted
    to yet (None: verdicts never open one)."""
    verdicts: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
    decisive: dict[tuple[str, str], str | None] = {}
    late: list[tuple[str, Signal]] = []
    for item, scores in done:
        cid, turn = item.event.conversation_id, item.event.turn_id
        verdicts[cid, turn] = tuple((s.scorer, str(s.verdict)) for s in scores)
        decisive[cid, turn] = recovery_verdict(scores, grm_name)
        state = plan.states[cid]
        if state.awaiting is not None and state.awaiting.turn_id == turn:
            state = replace(state, awaiting=replace(state.awaiting, verdicts=verdicts[cid, turn]))
            if open_below is not None and state.episode is None and turn != state.closed_on:
                judged = scores[0]
                if judged.p_satisfied < open_below:
                    opened = Episode(
                        turn,
                        Trigger.VERDICT,
                        item.event.ts,
                        item.event.scenario,
                        item.event.assistant_id,
                    )
                    state = replace(state, episode=opened)
                    late.append((cid, Opened(opened)))
        verdict = decisive[cid, turn]
        if state.episode is not None and state.episode.attempt == turn and verdict is not None:
            episode, closed = on_verdict(state.episode, turn, verdict, item.event.ts)
            state = replace(state, episode=episode)
            if closed is not None:
                state = replace(state, closed_on=turn)
                late.append((cid, closed))
        plan.states[cid] = state
    signals: list[tuple[str, Signal]] = []
    for cid, signal in [*plan.signals, *late]:
        if isinstance(signal, Pending):
            attempt = signal.episode.attempt or ""
            known = decisive.get((cid, attempt), signal.episode.verdict)
            signal = signal.settle(known)
        elif isinstance(signal, ReactionSeen) and not signal.verdicts:
            signal = replace(signal, verdicts=verdicts.get((cid, signal.turn_id), ()))
        signals.append((cid, signal))
    return signals


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
