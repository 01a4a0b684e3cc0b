"""Which assistant turns the GRM scores, within a budget.

The UX-Judge scores every turn; the GRM is slower (a causal LM) and is spent where it
matters most, in this order:

1. recovery replies (an episode is open): scored whatever the token bucket says;
2. turns the UX-Judge is least sure about (score within `uncertain_margin` of its
   threshold), closest first;
3. a random sample of the rest (`sample_rate`), so the GRM also sees ordinary traffic.

Everything but recovery replies needs a token from a bucket refilled at `rate` verdicts/s
(holding at most `burst`). Recovery replies take tokens too, so under a flood of them the
other kinds wait. At most `max_per_batch` GRM verdicts run per batch, recovery replies
first: the bound keeps a batch's time in check even when complaints pile up (a recovery
reply past it is judged by the UX-Judge instead). Every turn the GRM does not score gets
a skip reason: `confident` (not chosen), `budget` (no token), `queue_full` (batch bound),
`failed` (the GRM raised or gave no verdict), `deadline` (it had not answered when the
batch's GRM deadline passed) and `busy` (an earlier call is still running: a hung server
costs one batch a deadline, not every batch).
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

T = TypeVar("T")


class Chosen(StrEnum):
    RECOVERY = "recovery"
    UNCERTAIN = "uncertain"
    SAMPLE = "sample"


class Skipped(StrEnum):
    CONFIDENT = "confident"
    BUDGET = "budget"
    QUEUE_FULL = "queue_full"
    FAILED = "failed"  # chosen, but the GRM raised or gave no verdict
    DEADLINE = "deadline"  # chosen, but no answer within the batch's GRM deadline
    BUSY = "busy"  # chosen, but the GRM is still working on an earlier batch


@dataclass(frozen=True, slots=True)
class Candidate:
    index: int  # position in the batch
    recovery: bool
    judge_p: float  # the UX-Judge's P(satisfied)
    judge_threshold: float  # the UX-Judge's calibrated cut


@dataclass(slots=True)
class Choice:
    chosen: dict[int, Chosen] = field(default_factory=dict)
    skipped: dict[int, Skipped] = field(default_factory=dict)


class Budget:
    """A token bucket plus the priority rules above. Used from one thread at a time."""

    def __init__(
        self,
        rate: float,
        burst: float,
        max_per_batch: int,
        uncertain_margin: float,
        sample_rate: float,
        *,
        seed: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.max_per_batch = max_per_batch
        self.uncertain_margin = uncertain_margin
        self.sample_rate = sample_rate
        self._random = random.Random(seed)
        self._clock = clock
        self._last = clock()
        self.tokens = burst

    def _refill(self) -> None:
        now = self._clock()
        self.tokens = min(self.burst, self.tokens + self.rate * (now - self._last))
        self._last = now

    def choose(self, candidates: Sequence[Candidate]) -> Choice:
        self._refill()
        choice = Choice()
        slots = self.max_per_batch
        for c in candidates:
            if not c.recovery:
                continue
            if slots <= 0:
                choice.skipped[c.index] = Skipped.QUEUE_FULL
                continue
            choice.chosen[c.index] = Chosen.RECOVERY
            slots -= 1
            # Debt is bounded, so a burst of recoveries delays the rest but never
            # starves them for longer than burst / rate seconds.
            self.tokens = max(-self.burst, self.tokens - 1)
        others = [c for c in candidates if not c.recovery]
        distance = {c.index: abs(c.judge_p - c.judge_threshold) for c in others}
        uncertain = sorted(
            (c for c in others if distance[c.index] < self.uncertain_margin),
            key=lambda c: (distance[c.index], c.index),
        )
        wanted = [(c, Chosen.UNCERTAIN) for c in uncertain]
        for c in others:
            # Draw for every candidate, chosen or not, so the sample does not depend on
            # how many were uncertain.
            sampled = self._random.random() < self.sample_rate
            if c not in uncertain and sampled:
                wanted.append((c, Chosen.SAMPLE))
        for c, reason in wanted:
            if slots <= 0:
                choice.skipped[c.index] = Skipped.QUEUE_FULL
            elif self.tokens < 1:
                choice.skipped[c.index] = Skipped.BUDGET
            else:
                choice.chosen[c.index] = reason
                self.tokens -= 1
                slots -= 1
        for c in others:
            if c.index not in choice.chosen and c.index not in choice.skipped:
                choice.skipped[c.index] = Skipped.CONFIDENT
        return choice


class Deadline:
    """Runs GRM calls on a thread of their own and waits for each at most `seconds`.

    A call that overruns keeps its thread (a forward pass or an HTTP request cannot be
    interrupted) and its result is dropped; until it ends, further calls are refused at
    once, so the batches that follow wait for nothing. The thread is a daemon: a worker
    that stops does not wait for a hung server either.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._running: Future[Any] | None = None

    def run(self, call: Callable[[], T]) -> T | Skipped:
        if self._running is not None and not self._running.done():
            return Skipped.BUSY
        running: Future[T] = Future()
        self._running = running

        def target() -> None:
            try:
                running.set_result(call())
            except BaseException as exc:  # handed to the waiting batch, which re-raises
                running.set_exception(exc)

        threading.Thread(target=target, name="uxmon-grm", daemon=True).start()
        try:
            return running.result(timeout=self.seconds)
        except FutureTimeout:
            return Skipped.DEADLINE
