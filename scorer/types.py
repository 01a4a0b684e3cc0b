"""The values scorers consume and produce."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

Role = Literal["user", "assistant"]


class Verdict(StrEnum):
    GOOD = "good"
    BAD = "bad"


@dataclass(frozen=True, slots=True)
class Turn:
    role: Role
    text: str


@dataclass(frozen=True, slots=True)
class Dialogue:
    """What a scorer sees about one assistant reply.

    In recovery mode (`failed_reply` and `complaint` set) the reply answers a complaint
    about `failed_reply`; `user_message` is then the complaint itself.
    """

    user_message: str
    reply: str
    history: tuple[Turn, ...] = ()  # earlier turns, oldest first
    failed_reply: str | None = None
    complaint: str | None = None
    id: str = ""  # caller's handle (turn id, benchmark cid); never interpreted

    @property
    def is_recovery(self) -> bool:
        return self.failed_reply is not None


@dataclass(frozen=True, slots=True)
class Score:
    """A scorer's judgement of one reply.

    `p_satisfied` is the (calibrated where the scorer is) probability that the user was
    satisfied; `verdict` applies the scorer's calibrated threshold to it.
    """

    p_satisfied: float
    verdict: Verdict
    scorer: str
    version: str
    latency_s: float
    extras: dict[str, float] = field(default_factory=dict)
