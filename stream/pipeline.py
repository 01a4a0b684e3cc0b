"""One batch of the stream, as a plain function: records in, an outcome out.

`Pipeline.run` parses and folds the records into conversation states (reactions, recovery
episodes), scores the assistant turns (the judges on every turn, the GRM on what its budget
picks, within a deadline), and settles episodes with the verdicts. `Pipeline.tick` does
the same for time passing. The outcome says what to publish, what state to write and what
to count; stream/app.py performs that I/O, stream/accounting.py the counting. Scorers are
called here (blocking): run it off the event loop. Nothing here touches Kafka.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from scorer.protocol import Scorer
from scorer.types import Dialogue, Score
from stream.cascade import Budget, Candidate, Chosen, Deadline, Skipped
from stream.conversation import (
    Bounds,
    ConversationState,
    Judged,
    Learned,
    ReactionSeen,
    Signal,
    Tracking,
    apply_event,
    apply_judged,
    expire,
    reacted_to,
    sketch,
)
from stream.events import Event, Limits, Parsed, Reason, Rejected, TurnEvent, parse_event, utcnow
from stream.labels import Labelled
from stream.reaction_layer import FollowUpTexts, ReactionLayer
from stream.records import DeadLetter, Record
from stream.recovery import Pending, deciding_score

log = logging.getLogger(__name__)

PreParsed = list[Parsed | Exception | None]  # per record: parsed, its error, or not parsed


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a batch produced, for the I/O and the counting that follow it."""

    plan: BatchPlan  # the fold: changed states, handled marks, consumption counts
    scoring: Scoring
    scored: list[tuple[ToScore, list[Score]]]  # every judge's score, then the GRM's
    # the shadow scorers' scores of those turns, by (conversation_id, turn_id): published
    # beside them and counted in the live validation, never in any other metric or episode
    shadow: dict[tuple[str, str], list[Score]]
    signals: list[tuple[str, Signal]]  # (conversation_id, reaction or episode change)
    dead: list[DeadLetter]
    scored_at: datetime


@dataclass(frozen=True, slots=True)
class Tick:
    """What time passing produced over the states it was given."""

    changed: dict[bytes, ConversationState]  # by table key
    signals: list[tuple[str, Signal]]


@dataclass(frozen=True, slots=True)
class Pipeline:
    judges: Sequence[Scorer]  # on every assistant turn
    grm: Scorer | None  # on the turns the budget picks
    budget: Budget
    deadline: Deadline | None
    limits: Limits
    bounds: Bounds
    tracking: Tracking
    open_below: float | None  # a judge score under it opens an episode (None: never)
    follow_up_s: float  # no message this long after a reply: no follow-up
    episode_s: float  # an episode open this long ends gave_up
    reactions: ReactionLayer | None = None  # the learned reaction model (None: the rules)
    shadows: Sequence[Scorer] = ()  # candidates on every scored turn; they decide nothing

    def run(
        self,
        records: Sequence[Record],
        load_state: Callable[[str], ConversationState],
        handled_before: Callable[[int], int],
        now: datetime,
    ) -> Outcome:
        """One batch. `handled_before(partition)`: the last offset handled there before."""
        parsed, learned, load_state = self._learned(records, load_state, handled_before, now)
        plan = plan_batch(
            records,
            load_state,
            handled_before=handled_before,
            limits=self.limits,
            now=now,
            bounds=self.bounds,
            tracking=self.tracking,
            pre_parsed=parsed,
            learned=learned,
        )
        scoring = Scoring([])
        if plan.to_score:
            scoring = score_batch(self.judges, self.grm, self.budget, plan.to_score, self.deadline)
        scored, failed = split_scored(plan, scoring)
        shadow = shadow_scores(self.shadows, [item for item, _ in scored])
        grm_name = self.grm.name if self.grm else None
        signals = settle(plan, scored, grm_name=grm_name, open_below=self.open_below, shadow=shadow)
        dead = plan.dead + [
            DeadLetter(item.record, Reason.SCORING_FAILED, f"scorer raised {error}")
            for item, error in failed
        ]
        return Outcome(plan, scoring, scored, shadow, signals, dead, utcnow())

    def _learned(
        self,
        records: Sequence[Record],
        load_state: Callable[[str], ConversationState],
        handled_before: Callable[[int], int],
        now: datetime,
    ) -> tuple[PreParsed | None, Learned | None, Callable[[str], ConversationState]]:
        """The pre-pass of the learned reaction layer: the records parsed (once: the fold
        takes them), the texts the batch's follow-ups read embedded in one encoder batch,
        and `load_state` remembering what it loaded (the fold asks again). Without a
        loaded layer, or when the encoder fails, nothing: the fold uses the rules."""
        layer = self.reactions
        if layer is None or layer.model is None:
            return None, None, load_state
        load_state = functools.cache(load_state)
        parsed = parse_records(records, handled_before, self.limits, now)
        texts = follow_up_texts(parsed, load_state, self.bounds)
        try:
            learned = layer.embed(texts)
        except Exception as exc:  # the encoder must not stall the partition: rules instead
            log.warning(
                "embedding %d follow-up texts failed (%s); the rules decide this batch",
                len(texts.messages) + len(texts.replies),
                type(exc).__name__,
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
            return parsed, None, load_state
        return parsed, learned, load_state

    def tick(self, states: Iterable[tuple[bytes, ConversationState, datetime]]) -> Tick:
        """Time passing over (key, state, time) of states this worker owns, each judged at
        its partition's time: the wall clock once the partition is caught up, the event
        time it has reached while it is behind (the message that answers a reply may be
        in the backlog)."""
        changed: dict[bytes, ConversationState] = {}
        signals: list[tuple[str, Signal]] = []
        for key, state, now in states:
            state, more = expire(state, now, follow_up_s=self.follow_up_s, episode_s=self.episode_s)
            if more:
                changed[key] = state
                # With time passing no verdict is still to come: settle on what is known.
                signals += [(key.decode(), _settled_now(signal)) for signal in more]
        return Tick(changed, signals)

    def time_limits(self, state: ConversationState) -> tuple[float | None, float | None]:
        """When (event-time seconds) the reply awaiting its follow-up and the open episode
        run out of time, if there are any."""
        awaiting, episode = state.awaiting, state.episode
        return (
            awaiting.ts.timestamp() + self.follow_up_s if awaiting else None,
            episode.opened_ts.timestamp() + self.episode_s if episode else None,
        )


def _settled_now(signal: Signal) -> Signal:
    return signal.settle(signal.episode.verdict) if isinstance(signal, Pending) else signal


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
    # ignored fields on the batch's valid events, by conversation
    unknown_fields: dict[str, int] = field(default_factory=dict)
    handled: dict[int, int] = field(default_factory=dict)  # partition -> last offset handled
    # partition -> event time (seconds) of the last event applied there, in log order
    read_to: dict[int, float] = field(default_factory=dict)


def plan_batch(
    records: Sequence[Record],
    load_state: Callable[[str], ConversationState],
    *,
    limits: Limits,
    now: datetime,
    bounds: Bounds,
    tracking: Tracking,
    handled_before: Callable[[int], int] = lambda partition: -1,
    pre_parsed: Sequence[Parsed | Exception | None] | None = None,
    learned: Learned | None = None,
) -> BatchPlan:
    """Validate and fold a batch in order; the last state of each conversation wins.

    `handled_before(partition)` is the last offset a previous batch handled there (state
    written, valid or not): a record at or before it is a replay after a crash and is
    skipped whole, so a rejected record is neither dead-lettered nor counted twice.
    `pre_parsed` (aligned with `records`, from `parse_records`) saves parsing again;
    `learned`: the reaction model and the batch's embeddings (None: the rules).
    """
    plan = BatchPlan(consumed=len(records))
    now_s = now.timestamp()
    replayed = replays(records, handled_before)
    for index, (record, replay) in enumerate(zip(records, replayed, strict=True)):
        partition, offset = record.position.partition, record.position.offset
        if replay:
            plan.redelivered += 1
            continue
        plan.handled[partition] = max(offset, plan.handled.get(partition, -1))
        try:
            parsed = _taken(pre_parsed, index) or parse_event(record.value, limits, now)
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
                learned=learned,
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
        if parsed.unknown_fields:
            cid = event.conversation_id
            plan.unknown_fields[cid] = plan.unknown_fields.get(cid, 0) + parsed.unknown_fields
        plan.states[event.conversation_id] = applied.state
        plan.events.append(event)
        plan.read_to[partition] = event.ts.timestamp()
        plan.signals.extend((event.conversation_id, signal) for signal in applied.signals)
        if applied.dialogue is not None:
            assert isinstance(event, TurnEvent)
            plan.to_score.append(ToScore(event, applied.dialogue, record))
    return plan


def replays(records: Sequence[Record], handled_before: Callable[[int], int]) -> list[bool]:
    """For each record, whether it lies at or before its partition's handled mark: a
    replay after a crash, skipped whole."""
    marks: dict[int, int] = {}
    out = []
    for record in records:
        partition = record.position.partition
        if partition not in marks:
            marks[partition] = handled_before(partition)
        out.append(record.position.offset <= marks[partition])
    return out


def parse_records(
    records: Sequence[Record],
    handled_before: Callable[[int], int],
    limits: Limits,
    now: datetime,
) -> PreParsed:
    """Each record parsed, or the error parsing raised (the fold raises it again); None
    for a record at or before its partition's handled mark (a replay the fold skips)."""
    out: PreParsed = []
    for record, replay in zip(records, replays(records, handled_before), strict=True):
        if replay:
            out.append(None)
            continue
        try:
            out.append(parse_event(record.value, limits, now))
        except Exception as exc:
            out.append(exc)
    return out


def follow_up_texts(
    parsed: Iterable[Parsed | Exception | None],
    load_state: Callable[[str], ConversationState],
    bounds: Bounds,
) -> FollowUpTexts:
    """The texts the fold's reactions read: for every user turn that follows an assistant
    reply, the message, the user message(s) the reply answered and the reply, from the
    stored state and the batch's earlier turns.

    Duplicates and disorder are not checked here (the fold rejects them): a turn the fold
    will reject costs at most a text embedded for nothing, or a follow-up left to the rules.
    """
    states: dict[str, ConversationState] = {}
    messages: dict[str, None] = {}
    replies: dict[str, None] = {}
    for item in parsed:
        if not isinstance(item, Parsed) or not isinstance(item.event, TurnEvent):
            continue
        event = item.event
        cid = event.conversation_id
        state = states.get(cid) or load_state(cid)
        asked = reacted_to(state) if event.role == "user" else None
        if asked is not None:
            previous, reply = asked
            messages.update(dict.fromkeys(t for t in (event.text, previous) if t is not None))
            replies[reply] = None
        states[cid] = sketch(state, event, bounds)
    return FollowUpTexts(list(messages), list(replies))


def _taken(pre_parsed: Sequence[Parsed | Exception | None] | None, index: int) -> Parsed | None:
    """The pre-pass's parse of record `index` (its error raised again), None if none."""
    item = pre_parsed[index] if pre_parsed is not None else None
    if isinstance(item, Exception):
        raise item
    return item


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


def shadow_name(name: str) -> str:
    """How a shadow scorer is named beside the live ones (verdicts, metric labels)."""
    return f"shadow:{name}"


def shadow_scores(
    shadows: Sequence[Scorer], items: Sequence[ToScore]
) -> dict[tuple[str, str], list[Score]]:
    """The shadow scorers on the turns the live scorers scored. A shadow that fails on a
    turn leaves it without that shadow's score (logged): a candidate never costs a turn."""
    if not shadows or not items:
        return {}
    runs = score_all(shadows, [item.dialogue for item in items])
    out: dict[tuple[str, str], list[Score]] = {}
    for i, item in enumerate(items):
        scores = [run.scores[i] for run in runs]
        out[item.event.conversation_id, item.event.turn_id] = [s for s in scores if s is not None]
    return out


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


def settle(
    plan: BatchPlan,
    done: Sequence[tuple[ToScore, Sequence[Score]]],
    *,
    grm_name: str | None,
    open_below: float | None,
    shadow: Mapping[tuple[str, str], Sequence[Score]] | None = None,
) -> list[tuple[str, Signal]]:
    """Fold the batch's verdicts into the conversation states (plan.states is updated,
    stream/conversation.apply_judged): attempts judged bad fail their episode, pending
    closes get their outcome, reactions get the verdicts they are compared with. Returns
    the batch's signals, none pending."""
    judged: dict[tuple[str, str], Judged] = {}
    late: list[tuple[str, Signal]] = []
    for item, scores in done:
        event = item.event
        cid = event.conversation_id
        decider = deciding_score(scores, grm_name)
        shadowed = (shadow or {}).get((cid, event.turn_id), ())
        verdict = Judged(
            event.turn_id,
            event.ts,
            tuple((s.scorer, str(s.verdict)) for s in scores)
            + tuple((shadow_name(s.scorer), str(s.verdict)) for s in shadowed),
            str(decider.verdict) if decider is not None else None,
            scores[0].p_satisfied,
            event.scenario,
            event.assistant_id,
        )
        judged[cid, event.turn_id] = verdict
        plan.states[cid], more = apply_judged(plan.states[cid], verdict, open_below=open_below)
        late += [(cid, signal) for signal in more]
    signals: list[tuple[str, Signal]] = []
    for cid, signal in [*plan.signals, *late]:
        if isinstance(signal, Pending):
            attempt = judged.get((cid, signal.episode.attempt or ""))
            signal = signal.settle(attempt.decisive if attempt else signal.episode.verdict)
        elif isinstance(signal, ReactionSeen | Labelled) and not signal.verdicts:
            seen = judged.get((cid, signal.turn_id))
            signal = replace(signal, verdicts=seen.verdicts if seen else ())
        signals.append((cid, signal))
    return signals
