"""Recovery episodes: after the user shows dissatisfaction, does the assistant win them back?

An episode opens on an assistant turn the user was dissatisfied with (a dissatisfied
reaction, a thumbs-down or regenerate, or optionally a confident BAD verdict). Each later
assistant reply is a recovery attempt, judged by the GRM in recovery mode (or the UX-Judge
when the GRM did not score it). The episode closes:

- recovered: the attempt was judged good and the user's reaction to it was not
  dissatisfied (no follow-up included: silence after a fix is not a complaint);
- failed:    the attempt was judged bad, or the user was dissatisfied with it again;
- gave_up:   the user abandoned or dismissed, left after the failure without an attempt,
             or the episode ran past its limit (assistant turns or time).

The verdict judges the attempt itself, so it comes first in event time: a bad verdict
fails the episode whatever the user does next. In processing order it may come second
(the user's next message can sit in the same batch as the attempt, and scoring happens
after the fold), so a reaction seen before its attempt's verdict leaves a `Pending` close
that the verdict settles once the batch is scored. The outcome never depends on batching.

Everything here is a pure function over immutable values, so it is tested without Kafka.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Any

from scorer.types import Score
from stream.reactions import Reaction, is_dissatisfied


class Trigger(StrEnum):
    REACTION = "reaction"
    FEEDBACK = "feedback"
    VERDICT = "verdict"


class Outcome(StrEnum):
    RECOVERED = "recovered"
    FAILED = "failed"
    GAVE_UP = "gave_up"


# Reactions that end an episode as the user giving up rather than as a failed attempt.
GIVING_UP = frozenset({Reaction.ABANDON, Reaction.DISMISS})


@dataclass(frozen=True, slots=True)
class Episode:
    id: str  # the failed assistant turn's id
    trigger: Trigger
    opened_ts: datetime  # event time of what opened it (the time limit runs on it)
    scenario: str | None = None
    assistant_id: str | None = None
    attempts: int = 0
    attempt: str | None = None  # the newest recovery reply's turn id
    attempt_ts: datetime | None = None
    verdict: str | None = None  # the newest attempt's verdict, once scored

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "trigger": str(self.trigger),
            "opened_ts": self.opened_ts.isoformat(),
            "scenario": self.scenario,
            "assistant_id": self.assistant_id,
            "attempts": self.attempts,
            "attempt": self.attempt,
            "attempt_ts": self.attempt_ts.isoformat() if self.attempt_ts else None,
            "verdict": self.verdict,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Episode | None:
        if not data:
            return None
        return cls(
            id=data["id"],
            trigger=Trigger(data["trigger"]),
            opened_ts=datetime.fromisoformat(data["opened_ts"]),
            scenario=data.get("scenario"),
            assistant_id=data.get("assistant_id"),
            attempts=data.get("attempts", 0),
            attempt=data.get("attempt"),
            attempt_ts=(
                datetime.fromisoformat(data["attempt_ts"]) if data.get("attempt_ts") else None
            ),
            verdict=data.get("verdict"),
        )


@dataclass(frozen=True, slots=True)
class Closed:
    episode: Episode
    outcome: Outcome
    closed_ts: datetime  # event time of what closed it (the clock's time for a timeout)
    cause: str  # what decided: a reaction name, "verdict", "feedback", "limit", "timeout"

    @property
    def seconds(self) -> float:
        return max(0.0, (self.closed_ts - self.episode.opened_ts).total_seconds())


@dataclass(frozen=True, slots=True)
class Pending:
    """The user reacted to an attempt before its verdict was known; the verdict decides."""

    episode: Episode
    closed_ts: datetime
    cause: str
    unless_bad: Outcome  # the outcome the reaction alone gives

    def settle(self, verdict: str | None) -> Closed:
        # Without any verdict (every scorer failed on the attempt) the reaction decides.
        episode = replace(self.episode, verdict=verdict)
        if verdict == "bad":
            return Closed(episode, Outcome.FAILED, self.closed_ts, "verdict")
        return Closed(episode, self.unless_bad, self.closed_ts, self.cause)


Step = tuple[Episode | None, Closed | Pending | None]


def on_attempt(episode: Episode, turn_id: str, ts: datetime, max_turns: int) -> Step:
    """An assistant reply while the episode is open: the next attempt, or past the limit."""
    if episode.attempts >= max_turns:
        return None, Closed(episode, Outcome.GAVE_UP, ts, "limit")
    attempt = replace(
        episode, attempts=episode.attempts + 1, attempt=turn_id, attempt_ts=ts, verdict=None
    )
    return attempt, None


def on_reaction(episode: Episode, turn_id: str, reaction: Reaction, ts: datetime) -> Step:
    """The user's reaction to an assistant turn (ignored unless it is about this episode)."""
    if episode.attempt is None:
        # Still no attempt: only the failed turn itself matters. More complaining keeps the
        # episode open; leaving ends it.
        if turn_id != episode.id:
            return episode, None
        if reaction in GIVING_UP or reaction is Reaction.NO_FOLLOW_UP:
            return None, Closed(episode, Outcome.GAVE_UP, ts, str(reaction))
        return episode, None
    if turn_id != episode.attempt:
        return episode, None
    if reaction in GIVING_UP:
        by_reaction = Outcome.GAVE_UP
    elif is_dissatisfied(reaction):
        by_reaction = Outcome.FAILED
    else:
        by_reaction = Outcome.RECOVERED
    return None, _close(episode, ts, str(reaction), by_reaction)


def _close(episode: Episode, ts: datetime, cause: str, by_reaction: Outcome) -> Closed | Pending:
    pending = Pending(episode, ts, cause, by_reaction)
    return pending if episode.verdict is None else pending.settle(episode.verdict)


def on_feedback(episode: Episode, turn_id: str, dissatisfied: bool, ts: datetime) -> Step:
    """Explicit feedback on the current attempt counts like a reaction to it."""
    if episode.attempt is None or turn_id != episode.attempt:
        return episode, None
    return None, _close(
        episode, ts, "feedback", Outcome.FAILED if dissatisfied else Outcome.RECOVERED
    )


def on_verdict(episode: Episode, turn_id: str, verdict: str, ts: datetime) -> Step:
    """The judged verdict of an attempt (after scoring). BAD fails the episode at once."""
    if turn_id != episode.attempt:
        return episode, None
    if verdict == "bad":
        return None, Closed(replace(episode, verdict=verdict), Outcome.FAILED, ts, "verdict")
    return replace(episode, verdict=verdict), None


def deciding_score(scores: Sequence[Score], grm_name: str | None) -> Score | None:
    """The score whose verdict is the turn's verdict of record, the one episodes go by:
    the GRM's when it scored the turn (it is the stronger scorer out of writer:
    docs/validation.md), else the first judge's. The cascade sends the GRM the judge's
    uncertain turns and every recovery attempt, so this is where the two differ."""
    for score in scores:
        if grm_name is not None and score.scorer == grm_name:
            return score
    return scores[0] if scores else None


def on_clock(episode: Episode, now: datetime, timeout_s: float) -> Step:
    """The time limit: an episode open this long ends as the user giving up."""
    if (now - episode.opened_ts).total_seconds() >= timeout_s:
        return None, Closed(episode, Outcome.GAVE_UP, now, "timeout")
    return episode, None
