"""The kinds of conversation the generator knows, and how often each is drawn."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from benchmark.synthetic.kinds import (
    books,
    calc,
    chat,
    concepts,
    emotional,
    facts,
    howto,
    office,
    writing,
)
from benchmark.synthetic.situation import Kind, Lang

# Relative share of each kind among records whose failure it can produce. Knowledge
# and how-to questions dominate real assistant traffic; the rest keep every scenario and
# success pattern well represented.
SHARES: dict[str, float] = {
    "facts": 1.0,
    "concepts": 0.8,
    "howto": 0.9,
    "calc": 0.8,
    "writing": 0.7,
    "emotional": 0.6,
    "chat": 0.45,
    "books": 0.4,
    "office-notes": 0.5,
    "office-email": 0.3,
    "office-formula": 0.4,
    "office-translate": 0.3,
}

KINDS: tuple[Kind, ...] = (
    facts.KIND,
    concepts.KIND,
    howto.KIND,
    calc.KIND,
    writing.KIND,
    emotional.KIND,
    chat.KIND,
    books.KIND,
    *office.KINDS,
)
BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}


def for_failure(rng: Random, dimension: str, lang: Lang) -> Kind:
    """Draw a kind able to fail along `dimension` in `lang`."""
    able = [k for k in KINDS if dimension in k.failures and lang in k.langs]
    return _weighted(rng, able, [SHARES[k.name] for k in able])


def any_kind(rng: Random, lang: Lang) -> Kind:
    able = [k for k in KINDS if lang in k.langs]
    return _weighted(rng, able, [SHARES[k.name] for k in able])


def _weighted(rng: Random, items: Sequence[Kind], weights: Sequence[float]) -> Kind:
    if not items:
        raise ValueError("no kind can produce this failure in this language")
    return rng.choices(list(items), weights=list(weights), k=1)[0]
