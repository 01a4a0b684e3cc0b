"""A user's request together with every way an assistant could answer it.

A kind of conversation (facts, how-tos, writing, ...) builds a `Situation`; the corpus
assembler then picks the good reply or one bad reply per failure dimension. Keeping
both in one object is what lets a disliked record and its liked twin share the same
request shape, so that labels follow from the reply's relation to the request rather
than from the request itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from random import Random
from typing import Literal

Lang = Literal["zh", "en"]
Split = Literal["seed", "heldout"]

# How the user framed the request. Every kind honours each ask it declares in good
# replies, so an ask in the query never predicts the label on its own.
ASK_KINDS = ("plain", "brief", "detail", "count", "bullets", "table", "no_explain", "two_part")

Reply = Callable[[], str]


@dataclass(frozen=True, slots=True)
class Ask:
    kind: str
    n: int = 0  # for count / bullets


@dataclass(slots=True)
class Situation:
    kind: str
    topic: str  # "<kind>:<item>", unique per content item; seed and held-out never share one
    lang: Lang
    scenario: str
    success: str  # the success dimension a good reply to this request earns
    query: str
    good: Reply
    bad: Mapping[str, Reply]
    # The same request without its constraint, and the constraint as a follow-up turn
    # ("太长了，一句话说"), so the assembler can spread one request over two turns.
    base_query: str = ""
    base_reply: Reply | None = None
    followup: str = ""
    register: Literal["task", "warm"] = "task"
    noun: str = ""  # names the topic ("珠穆朗玛峰的高度"), for follow-ups that refer back
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of conversation: its failure modes (per ask) and its builder."""

    name: str
    # failure dimension -> {ask kind -> relative weight of building that failure from it}
    failures: Mapping[str, Mapping[str, float]]
    build: Callable[[Random, Lang, Split, Ask], Situation]
    # ask kind -> how to draw n for it (count / bullets asks)
    counts: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    langs: tuple[Lang, ...] = ("zh", "en")

    def ask(self, rng: Random, kind: str) -> Ask:
        low, high = self.counts.get(kind, (0, 0))
        return Ask(kind, rng.randint(low, high) if high else 0)
