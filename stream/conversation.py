"""Per-conversation state: bounded history, recent ids, order and replay bookkeeping.

The state is a plain value, serialised to JSON for the faust table (its changelog is how
it survives restarts). It holds turn text, because the scorers need the context; that is
why the changelog topic needs the same access control as the turns topic.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from scorer.types import Dialogue, Role, Turn
from stream.events import Event, FeedbackEvent, Reason, Rejected, TurnEvent

STATE_VERSION = 1


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
class ConversationState:
    turns: tuple[HistoryTurn, ...] = ()
    seen: tuple[str, ...] = ()  # recent turn ids (turns and feedback), newest last
    last_ts: datetime | None = None
    partition: int | None = None
    offset: int = -1  # last applied offset in `partition`
    touched_at: float = 0.0  # wall-clock seconds of the last applied event (for eviction)
    scored: int = 0  # assistant turns sent to scoring

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
        )

    def is_redelivery(self, position: Position) -> bool:
        """True when this record was already applied (a replay after a crash or rebalance)."""
        return self.partition == position.partition and position.offset <= self.offset


@dataclass(frozen=True, slots=True)
class Applied:
    state: ConversationState
    dialogue: Dialogue | None  # set for an assistant turn: what the scorers will see


def apply_event(
    state: ConversationState,
    event: Event,
    position: Position,
    *,
    now_s: float,
    history_turns: int,
    seen_ids: int,
) -> Applied:
    """Fold one valid event into the state; raise Rejected for duplicates and disorder."""
    if _seen_token(event) in state.seen:
        raise Rejected(Reason.DUPLICATE, f"{event.type} id already seen in this conversation")
    if isinstance(event, TurnEvent) and state.last_ts is not None and event.ts < state.last_ts:
        lag = (state.last_ts - event.ts).total_seconds()
        raise Rejected(Reason.OUT_OF_ORDER, f"turn is {lag:.3f}s older than the previous turn")
    moved = replace(
        state,
        seen=(*state.seen, _seen_token(event))[-seen_ids:],
        partition=position.partition,
        offset=position.offset,
        touched_at=now_s,
    )
    if isinstance(event, FeedbackEvent):
        return Applied(moved, None)
    dialogue = _dialogue_for(state.turns, event) if event.role == "assistant" else None
    turns = (*state.turns, HistoryTurn(event.turn_id, event.role, event.text))[-history_turns:]
    return Applied(
        replace(moved, turns=turns, last_ts=event.ts, scored=moved.scored + bool(dialogue)),
        dialogue,
    )


def _seen_token(event: Event) -> str:
    # Feedback about a turn reuses the turn's id; keep their id spaces apart.
    return event.turn_id if isinstance(event, TurnEvent) else f"{event.turn_id}#{event.kind}"


def _dialogue_for(turns: tuple[HistoryTurn, ...], reply: TurnEvent) -> Dialogue:
    """The reply, the user message(s) it answers, and the earlier turns as history."""
    split = len(turns)
    while split > 0 and turns[split - 1].role == "user":
        split -= 1
    asked = "\n".join(t.text for t in turns[split:])
    history = tuple(Turn(role=t.role, text=t.text) for t in turns[:split])
    return Dialogue(user_message=asked, reply=reply.text, history=history, id=reply.turn_id)
