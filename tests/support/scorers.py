"""Stand-in scorers for tests only (the product's defaults are the real models).

`Slow` wraps any scorer and sleeps first: it makes one batch take as long as a test needs.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Sequence

from scorer.protocol import Scorer
from scorer.registry import create
from scorer.types import Dialogue, Score, Verdict


class Keyword:
    """Deterministic: 'bad' when the reply is shorter than the user message. Unit tests only."""

    name = "keyword"
    version = "test-1"

    def __init__(self, **_: object) -> None:
        self.loaded = False

    def load(self) -> None:
        self.loaded = True

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        out = []
        for d in batch:
            p = 0.2 if len(d.reply) < len(d.user_message) else 0.8
            out.append(
                Score(p, Verdict.GOOD if p >= 0.5 else Verdict.BAD, self.name, self.version, 0.0)
            )
        return out


class Repetition(Keyword):
    """'bad' when the reply says a sentence twice: the bundled sample traffic's commonest
    failure (verbosity), so it agrees with that traffic's thumbs better than chance.
    Tests only."""

    name = "repetition"
    version = "test-r1"

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        out = []
        for d in batch:
            parts = [p.strip() for p in re.split(r"[。！？.!?\n]", d.reply) if len(p.strip()) >= 6]
            p = 0.2 if len(parts) != len(set(parts)) else 0.8
            out.append(
                Score(p, Verdict.GOOD if p >= 0.5 else Verdict.BAD, self.name, self.version, 0.0)
            )
        return out


class Contrary(Repetition):
    """The opposite of Repetition on every turn: a candidate that disagrees. Tests only."""

    name = "contrary"
    version = "test-c1"

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        return [
            Score(
                1 - s.p_satisfied,
                Verdict.BAD if s.verdict is Verdict.GOOD else Verdict.GOOD,
                self.name,
                self.version,
                0.0,
            )
            for s in super().score(batch)
        ]


class Slow:
    """Sleeps UXMON_TEST_SLOW_S seconds per batch, then delegates to UXMON_TEST_SLOW_INNER."""

    def __init__(self, **options: object) -> None:
        self.delay = float(os.environ.get("UXMON_TEST_SLOW_S", "10"))
        inner = os.environ.get("UXMON_TEST_SLOW_INNER", "tests.support.scorers:Keyword")
        self.inner = create(inner, **({} if ":" in inner else options))
        self.name = self.inner.name
        self.version = self.inner.version

    def load(self) -> None:
        self.inner.load()
        self.version = self.inner.version

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        time.sleep(self.delay)
        return self.inner.score(batch)


def RemoteGRM(**_: object) -> Scorer:
    """The GRM over HTTP at $UXMON_TEST_GRM_URL, with short timeouts (outage tests)."""
    from scorer.grm import GRM

    return GRM(
        backend="openai",
        base_url=os.environ["UXMON_TEST_GRM_URL"],
        model_name="judge",
        timeout_s=float(os.environ.get("UXMON_TEST_GRM_TIMEOUT_S", "2")),
        slow_call_s=float(os.environ.get("UXMON_TEST_GRM_SLOW_S", "5")),
        breaker_cooldown_s=float(os.environ.get("UXMON_TEST_GRM_COOLDOWN_S", "30")),
        max_retries=0,
        threshold=0.5,
    )
