"""The Scorer protocol: a small object with a fixed lifecycle."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from scorer.types import Dialogue, Score


@runtime_checkable
class Scorer(Protocol):
    """`load()` once (heavy: weights, threads); then `score()` any number of batches.

    `score` returns one Score per dialogue, in order. It must be safe to call from a
    worker thread (the stream runs it off the event loop), one call at a time.
    """

    name: str
    version: str

    def load(self) -> None: ...

    def score(self, batch: Sequence[Dialogue]) -> list[Score]: ...
