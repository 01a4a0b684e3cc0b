"""Per-conversation state: bounded history, recent ids, order and replay bookkeeping, the
reply waiting for the user's reaction, and the open recovery episode.

The state is a plain value, serialised to JSON for the faust table (its changelog is how
it survives restarts). It holds turn text, because the scorers need the context; that is
why the changelog topic needs the same access control as the turns topic.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from scorer.types import Dialogue, Role, Turn
from stream.events import Event, FeedbackEvent, Reason, Rejected, TurnEvent
from stream.labels import EXPLICIT, IMPLICIT, Labelled, Source
from stream.reaction_model import FollowUp, Vector
from stream.reactions import Patterns, Reaction, classify, feedback_is_dissatisfied, is_dissatisfied
from stream.recovery import (
    Closed,
    Episode,
    Pending,
    Trigger,
    on_attempt,
    on_clock,
    on_feedback,
    on_reaction,
    on_verdict,
)

STATE_VERSION = 1
POSITIVE_FEEDBACK = frozenset({"thumbs_up", "copy", "share"})

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Position:
    """Where a record sits in Kafka; used to tell a redelivery from a duplicate."""

    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class HistoryTurn:
    turn_id: str
    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class Awaiting:
    """The newest assistant turn, waiting for the user's reaction to it."""

    turn_id: str
    ts: datetime
    scenario: str | None = None
    assistant_id: str | None = None
    verdicts: tuple[tuple[str, str], ...] = ()  # (scorer, verdict), once scored
    feedback: tuple[str, ...] = ()  # explicit feedback kinds given on it so far
    model_version: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "turn_id": self.turn_id,
            "ts": self.ts.isoformat(),
            "scenario": self.scenario,
            "assistant_id": self.assistant_id,
            "verdicts": [list(v) for v in self.verdicts],
            "feedback": list(self.feedback),
            "model_version": self.model_version,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Awaiting | None:
        if not data:
            return None
        return cls(
            turn_id=data["turn_id"],
            ts=datetime.fromisoformat(data["ts"]),
            scenario=data.get("scenario"),
            assistant_id=data.get("assistant_id"),
            verdicts=tuple((s, v) for s, v in data.get("verdicts", ())),
            feedback=tuple(data.get("feedback", ())),
            model_version=data.get("model_version"),
        )


@dataclass(frozen=True, slots=True)
class ReactionSeen:
    """The user's reaction to an assistant turn, with what the scorers said of that turn."""

    turn_id: str
    reaction: Reaction
    ts: datetime
    scenario: str | None
    assistant_id: str | None
    verdicts: tuple[tuple[str, str], ...]  # empty when the turn is scored in this batch


@dataclass(frozen=True, slots=True)
class Opened:
    episode: Episode


Signal = ReactionSeen | Opened | Closed | Pending | Labelled


@dataclass(frozen=True, slots=True)
class Bounds:
    """What a conversation's state may hold, so its changelog record always fits a producer.

    The newest `history_turns` turns, each cut to `context_chars` (the scorers read far
    less), and as many of them as fit in `history_bytes` of JSON with every non-ASCII
    character escaped (the worst case of a JSON serializer: 6 bytes for one CJK char).
    """

    history_turns: int = 8
    seen_ids: int = 256
    context_chars: int = 4_000
    history_bytes: int = 256 * 1024


@dataclass(frozen=True, slots=True)
class Tracking:
    """How reactions and episodes are followed (from Settings).

    `own_patterns`: the patterns a team wrote itself (`Patterns.own`); where one fires on
    a message, the rules' verdict stands over the learned model's. `labels`: emit a
    `Labelled` signal for each labelling signal (stream/labels.py; off: none, and no text
    leaves the state).
    """

    patterns: Patterns
    episode_max_turns: int = 6
    own_patterns: Patterns | None = None
    labels: bool = False


class Predicts(Protocol):
    """What the fold asks of the learned reaction model (stream/reaction_model.py)."""

    def predict(self, follow_up: FollowUp) -> tuple[Reaction, float]: ...


@dataclass(frozen=True, slots=True)
class Learned:
    """The learned reaction layer for one batch: the model and the batch's embeddings of
    the texts its follow-ups read (text -> vector, stream/pipeline.follow_up_texts): users'
    messages and replies, each embedded the way the model was trained. A follow-up with a
    text missing here is left to the rules."""

    model: Predicts
    messages: Mapping[str, Vector]
    replies: Mapping[str, Vector]


@dataclass(frozen=True, slots=True)
class ConversationState:
    turns: tuple[HistoryTurn, ...] = ()
    seen: tuple[str, ...] = ()  # recent turn ids (turns and feedback), newest last
    last_ts: datetime | None = None
    partition: int | None = None
    offset: int = -1  # last applied offset in `partition`
    touched_at: float = 0.0  # wall-clock seconds of the last applied event (for eviction)
    scored: int = 0  # assistant turns sent to scoring
    awaiting: Awaiting | None = None
    episode: Episode | None = None
    # The turn whose reaction or feedback closed the last episode: a second signal about
    # the same turn (a complaint and a thumbs-down) must not open another one.
    closed_on: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "v": STATE_VERSION,
            "turns": [[t.turn_id, t.role, t.text] for t in self.turns],
            "seen": list(self.seen),
            "last_ts": self.last_ts.isoformat() if self.last_ts else None,
            "partition": self.partition,
            "offset": self.offset,
            "touched_at": self.touched_at,
            "scored": self.scored,
            "awaiting": self.awaiting.to_json() if self.awaiting else None,
            "episode": self.episode.to_json() if self.episode else None,
            "closed_on": self.closed_on,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ConversationState:
        if not data:
            return cls()
        return cls(
            turns=tuple(HistoryTurn(*t) for t in data.get("turns", ())),
            seen=tuple(data.get("seen", ())),
            last_ts=datetime.fromisoformat(data["last_ts"]) if data.get("last_ts") else None,
            partition=data.get("partition"),
            offset=data.get("offset", -1),
            touched_at=data.get("touched_at", 0.0),
            scored=data.get("scored", 0),
            awaiting=Awaiting.from_json(data.get("awaiting")),
            episode=Episode.from_json(data.get("episode")),
            closed_on=data.get("closed_on"),
        )

    def is_redelivery(self, position: Position) -> bool:
        """True when this record was already applied (a replay after a crash or rebalance)."""
        return self.partition == position.partition and position.offset <= self.offset


@dataclass(frozen=True, slots=True)
class Applied:
    state: ConversationState
    dialogue: Dialogue | None  # set for an assistant turn: what the scorers will see
    signals: tuple[Signal, ...] = ()


def apply_event(
    state: ConversationState,
    event: Event,
    position: Position,
    *,
    now_s: float,
    bounds: Bounds,
    tracking: Tracking,
    learned: Learned | None = None,
) -> Applied:
    """Fold one valid event into the state; raise Rejected for duplicates and disorder.

    A user message's reaction is the learned model's when `learned` is given and has the
    message's texts embedded, else (and where a team's own pattern fires) the rules'."""
    if _seen_token(event) in state.seen:
        raise Rejected(Reason.DUPLICATE, f"{event.type} id already seen in this conversation")
    if isinstance(event, TurnEvent) and state.last_ts is not None and event.ts < state.last_ts:
        lag = (state.last_ts - event.ts).total_seconds()
        raise Rejected(Reason.OUT_OF_ORDER, f"turn is {lag:.3f}s older than the previous turn")
    moved = replace(
        state,
        seen=(*state.seen, _seen_token(event))[-bounds.seen_ids :],
        partition=position.partition,
        offset=position.offset,
        touched_at=now_s,
    )
    if isinstance(event, FeedbackEvent):
        return _feedback(moved, event, tracking)
    if event.role == "user":
        return _user_turn(moved, event, tracking, bounds, learned)
    return _assistant_turn(moved, event, tracking, bounds)


def _assistant_turn(
    state: ConversationState, event: TurnEvent, tracking: Tracking, bounds: Bounds
) -> Applied:
    signals: list[Signal] = []
    episode = state.episode
    failed_reply = None
    if episode is not None:
        episode, closed = on_attempt(episode, event.turn_id, event.ts, tracking.episode_max_turns)
        if closed is not None:
            signals.append(closed)
        if episode is not None:
            failed_reply = _text_of(state.turns, episode.id)
    dialogue = _dialogue_for(state.turns, event.text, event.turn_id, failed_reply)
    awaiting = Awaiting(
        event.turn_id,
        event.ts,
        event.scenario,
        event.assistant_id,
        model_version=event.model_version,
    )
    return Applied(
        replace(
            state,
            turns=_append(state.turns, event, bounds),
            last_ts=event.ts,
            scored=state.scored + 1,
            awaiting=awaiting,
            episode=episode,
        ),
        dialogue,
        tuple(signals),
    )


def _user_turn(
    state: ConversationState,
    event: TurnEvent,
    tracking: Tracking,
    bounds: Bounds,
    learned: Learned | None,
) -> Applied:
    moved = replace(
        state, turns=_append(state.turns, event, bounds), last_ts=event.ts, awaiting=None
    )
    awaiting = state.awaiting
    asked = reacted_to(state)
    if awaiting is None or asked is None:
        return Applied(moved, None)  # nothing said yet, or already reacted to
    previous, reply = asked
    reaction = _reaction(previous, reply, awaiting, event, tracking, learned)
    seen = ReactionSeen(
        awaiting.turn_id,
        reaction,
        event.ts,
        awaiting.scenario,
        awaiting.assistant_id,
        awaiting.verdicts,
    )
    moved, signals = _react(moved, awaiting, reaction, event.ts)
    label = IMPLICIT.get(reaction) if tracking.labels else None
    if label is not None:
        signals = (
            *signals,
            *_labelled(state.turns, awaiting, Source.IMPLICIT, reaction, label, event.ts),
        )
    return Applied(moved, None, (seen, *signals))


def reacted_to(state: ConversationState) -> tuple[str | None, str] | None:
    """What a user message now would react to: (the user message(s) the awaiting reply
    answered, None if the assistant spoke first; the reply). None when no reply awaits."""
    awaiting = state.awaiting
    reply = _text_of(state.turns, awaiting.turn_id) if awaiting else None
    if awaiting is None or reply is None:
        return None
    return _question_before(state.turns, awaiting.turn_id), reply


def sketch(state: ConversationState, event: TurnEvent, bounds: Bounds) -> ConversationState:
    """The turns and the awaiting reply after `event`, as `apply_event` leaves them but
    without its checks, reactions or episodes: enough for the pipeline's pre-pass to know
    what the conversation's next user message will react to (`reacted_to`)."""
    awaiting = Awaiting(event.turn_id, event.ts) if event.role == "assistant" else None
    return replace(state, turns=_append(state.turns, event, bounds), awaiting=awaiting)


def _reaction(
    previous: str | None,
    reply: str,
    awaiting: Awaiting,
    event: TurnEvent,
    tracking: Tracking,
    learned: Learned | None,
) -> Reaction:
    """The learned model's reaction over the rules' verdict (one of its features); the
    rules' where there is no model, a text is not embedded or a team's own pattern fires."""
    rule = classify(previous, reply, awaiting.ts, event.text, event.ts, tracking.patterns)
    if learned is None:
        return rule
    own = tracking.own_patterns
    if own is not None and own.fires(event.text):
        return rule
    messages = learned.messages
    message_vec, reply_vec = messages.get(event.text), learned.replies.get(reply)
    previous_vec = messages.get(previous) if previous is not None else None
    if message_vec is None or reply_vec is None or (previous is not None and previous_vec is None):
        return rule
    follow_up = FollowUp(
        message=event.text,
        message_vec=message_vec,
        reply=reply,
        reply_vec=reply_vec,
        previous=previous,
        previous_vec=previous_vec,
        gap_s=(event.ts - awaiting.ts).total_seconds(),
        rule=rule,
        feedback=awaiting.feedback,
    )
    try:
        reaction, _ = learned.model.predict(follow_up)
    except Exception as exc:  # a model bug must not cost a valid turn: the rules answer
        log.warning("reaction model failed (%s); the rules decide", type(exc).__name__)
        return rule
    return reaction


def _react(
    state: ConversationState, turn: Awaiting, reaction: Reaction, ts: datetime
) -> tuple[ConversationState, tuple[Signal, ...]]:
    """Feed a reaction to the open episode, or open one on a dissatisfied reaction."""
    if state.episode is not None:
        episode, outcome = on_reaction(state.episode, turn.turn_id, reaction, ts)
        return _moved_on(state, episode, outcome, turn.turn_id)
    if not is_dissatisfied(reaction) or turn.turn_id == state.closed_on:
        return state, ()
    opened = Episode(turn.turn_id, Trigger.REACTION, ts, turn.scenario, turn.assistant_id)
    return replace(state, episode=opened), (Opened(opened),)


def _moved_on(
    state: ConversationState,
    episode: Episode | None,
    outcome: Closed | Pending | None,
    turn_id: str,
) -> tuple[ConversationState, tuple[Signal, ...]]:
    if outcome is None:
        return replace(state, episode=episode), ()
    return replace(state, episode=episode, closed_on=turn_id), (outcome,)


def _feedback(state: ConversationState, event: FeedbackEvent, tracking: Tracking) -> Applied:
    applied = _episode_feedback(state, event)
    label = EXPLICIT.get(event.kind) if tracking.labels else None
    if label is None:
        return applied
    about = state.awaiting if state.awaiting and state.awaiting.turn_id == event.turn_id else None
    turn = about or Awaiting(event.turn_id, event.ts)  # an older turn: its ids are gone
    labelled = _labelled(state.turns, turn, Source.EXPLICIT, event.kind, label, event.ts)
    return replace(applied, signals=(*applied.signals, *labelled))


def _labelled(
    turns: tuple[HistoryTurn, ...],
    turn: Awaiting,
    source: Source,
    kind: str,
    label: int,
    ts: datetime,
) -> tuple[Labelled, ...]:
    """The label of `turn`, or none when its text has left the bounded history."""
    dialogue = dialogue_at(turns, turn.turn_id)
    if dialogue is None:
        return ()
    return (
        Labelled(
            turn.turn_id,
            source,
            str(kind),
            label,
            ts,
            dialogue,
            turn.scenario,
            turn.assistant_id,
            turn.model_version,
            turn.verdicts,
        ),
    )


def _episode_feedback(state: ConversationState, event: FeedbackEvent) -> Applied:
    awaiting = state.awaiting
    if awaiting is not None and awaiting.turn_id == event.turn_id:
        # The learned reaction model reads the feedback given before the next message.
        kinds = tuple(dict.fromkeys((*awaiting.feedback, event.kind)))
        state = replace(state, awaiting=replace(awaiting, feedback=kinds))
    episode = state.episode
    dissatisfied = feedback_is_dissatisfied(event.kind)
    if episode is not None:
        if not dissatisfied and event.kind not in POSITIVE_FEEDBACK:
            return Applied(state, None)  # `stop` says nothing either way
        episode, outcome = on_feedback(episode, event.turn_id, dissatisfied, event.ts)
        moved, signals = _moved_on(state, episode, outcome, event.turn_id)
        return Applied(moved, None, signals)
    if not dissatisfied or event.turn_id == state.closed_on:
        return Applied(state, None)
    about = state.awaiting if state.awaiting and state.awaiting.turn_id == event.turn_id else None
    opened = Episode(
        event.turn_id,
        Trigger.FEEDBACK,
        event.ts,
        about.scenario if about else None,
        about.assistant_id if about else None,
    )
    return Applied(replace(state, episode=opened), None, (Opened(opened),))


@dataclass(frozen=True, slots=True)
class Judged:
    """What the scorers said about one assistant turn of the conversation."""

    turn_id: str
    ts: datetime
    verdicts: tuple[tuple[str, str], ...]  # (scorer, verdict) of every scorer that ran
    decisive: str | None  # the verdict episodes go by (stream/recovery.deciding_score)
    judge_p: float  # the first judge's P(satisfied)
    scenario: str | None = None
    assistant_id: str | None = None


def apply_judged(
    state: ConversationState, judged: Judged, *, open_below: float | None
) -> tuple[ConversationState, tuple[Signal, ...]]:
    """A turn's verdicts: kept on the reply awaiting its reaction (to pair with it); an
    episode opened on a judge score under `open_below` (None: verdicts never open one);
    the verdict on an episode's attempt moves the episode."""
    signals: list[Signal] = []
    turn = judged.turn_id
    if state.awaiting is not None and state.awaiting.turn_id == turn:
        state = replace(state, awaiting=replace(state.awaiting, verdicts=judged.verdicts))
        unprompted = state.episode is None and turn != state.closed_on
        if open_below is not None and unprompted and judged.judge_p < open_below:
            opened = Episode(turn, Trigger.VERDICT, judged.ts, judged.scenario, judged.assistant_id)
            state = replace(state, episode=opened)
            signals.append(Opened(opened))
    episode = state.episode
    if episode is not None and episode.attempt == turn and judged.decisive is not None:
        moved, closed = on_verdict(episode, turn, judged.decisive, judged.ts)
        state = replace(state, episode=moved)
        if closed is not None:
            state = replace(state, closed_on=turn)
            signals.append(closed)
    return state, tuple(signals)


def expire(
    state: ConversationState, now: datetime, *, follow_up_s: float, episode_s: float
) -> tuple[ConversationState, tuple[Signal, ...]]:
    """Time passing with no message: `no_follow_up` for a reply the user never answered
    (the session timed out), and the time limit of an open episode."""
    signals: list[Signal] = []
    awaiting = state.awaiting
    if awaiting is not None and (now - awaiting.ts).total_seconds() >= follow_up_s:
        seen = ReactionSeen(
            awaiting.turn_id,
            Reaction.NO_FOLLOW_UP,
            now,
            awaiting.scenario,
            awaiting.assistant_id,
            awaiting.verdicts,
        )
        state, more = _react(replace(state, awaiting=None), awaiting, Reaction.NO_FOLLOW_UP, now)
        signals += [seen, *more]
    if state.episode is not None:
        episode, closed = on_clock(state.episode, now, episode_s)
        if closed is not None:
            state = replace(state, episode=episode)
            signals.append(closed)
    return state, tuple(signals)


def _append(
    turns: tuple[HistoryTurn, ...], event: TurnEvent, bounds: Bounds
) -> tuple[HistoryTurn, ...]:
    """The newest turns within the bounds; the event's own turn always stays (cut to fit)."""
    newest = HistoryTurn(event.turn_id, event.role, event.text[: bounds.context_chars])
    kept = [newest]
    used = escaped_bytes(newest.text)
    for turn in reversed(turns[-(bounds.history_turns - 1) :] if bounds.history_turns > 1 else ()):
        used += escaped_bytes(turn.text)
        if used > bounds.history_bytes:
            break
        kept.append(turn)
    return tuple(reversed(kept))


def state_bytes_bound(bounds: Bounds, max_id_chars: int) -> int:
    """The most bytes a state's JSON can take, given the bounds and the id limit.

    Turn texts take at most `history_bytes`; ids are escaped at 6 bytes a char: one per
    kept turn, `seen_ids` recent ones (feedback ids carry a `#kind` suffix), and at most
    nine in the awaiting turn (its id, scenario, assistant and model version), the
    episode (id, attempt, scenario, assistant) and `closed_on`. 4 KiB covers the rest
    (timestamps, counters, field names, the scorers' verdicts).
    """
    one_id = 6 * max_id_chars + 2
    per_turn = one_id + 32  # id, role, brackets
    seen = bounds.seen_ids * (6 * (max_id_chars + len("#thumbs_down")) + 4)
    return bounds.history_bytes + bounds.history_turns * per_turn + seen + 9 * one_id + 4096


def escaped_bytes(text: str) -> int:
    """Bytes of `text` as a JSON string with every non-ASCII character escaped."""
    return len(json.dumps(text))


def _text_of(turns: tuple[HistoryTurn, ...], turn_id: str) -> str | None:
    return next((t.text for t in reversed(turns) if t.turn_id == turn_id), None)


def _question_before(turns: tuple[HistoryTurn, ...], turn_id: str) -> str | None:
    """The user message(s) just before `turn_id`: what that reply answered."""
    index = next((i for i, t in enumerate(turns) if t.turn_id == turn_id), None)
    if index is None:
        return None
    start = index
    while start > 0 and turns[start - 1].role == "user":
        start -= 1
    return "\n".join(t.text for t in turns[start:index]) or None


def _seen_token(event: Event) -> str:
    # Feedback about a turn reuses the turn's id; keep their id spaces apart.
    return event.turn_id if isinstance(event, TurnEvent) else f"{event.turn_id}#{event.kind}"


def dialogue_at(turns: tuple[HistoryTurn, ...], turn_id: str) -> Dialogue | None:
    """Assistant turn `turn_id` as its scorers saw it (without recovery context), from the
    turns before it; None when it is no longer in the bounded history."""
    index = next(
        (i for i, t in enumerate(turns) if t.turn_id == turn_id and t.role == "assistant"), None
    )
    if index is None:
        return None
    return _dialogue_for(turns[:index], turns[index].text, turn_id)


def _dialogue_for(
    turns: tuple[HistoryTurn, ...], reply: str, reply_id: str, failed_reply: str | None = None
) -> Dialogue:
    """The reply, the user message(s) it answers, and the earlier turns as history.

    In a recovery episode the failed reply travels along and the user's message(s) since
    are the complaint the reply must answer.
    """
    split = len(turns)
    while split > 0 and turns[split - 1].role == "user":
        split -= 1
    asked = "\n".join(t.text for t in turns[split:])
    history = tuple(Turn(role=t.role, text=t.text) for t in turns[:split])
    if failed_reply is None:
        return Dialogue(user_message=asked, reply=reply, history=history, id=reply_id)
    return Dialogue(
        user_message=asked,
        reply=reply,
        history=history,
        failed_reply=failed_reply,
        complaint=asked,
        id=reply_id,
    )
