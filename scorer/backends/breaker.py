"""A circuit breaker: stop calling a failing server, probe it again after a cool-down.

closed    -> calls pass; `failure_threshold` consecutive failures open it.
open      -> calls are refused at once until `cooldown_s` has passed.
half_open -> exactly one trial call passes; success closes, failure re-opens.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

State = Literal["closed", "open", "half_open"]
STATE_CODES: dict[State, float] = {"closed": 0.0, "half_open": 1.0, "open": 2.0}


class CircuitBreaker:
    def __init__(
        self,
        failure_threshold: int = 5,
        cooldown_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1 or cooldown_s < 0:
            raise ValueError("failure_threshold must be >= 1 and cooldown_s >= 0")
        self.failure_threshold = failure_threshold
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._state: State = "closed"
        self._failures = 0
        self._opened_at = 0.0
        self._trial_in_flight = False
        self.times_opened = 0

    @property
    def state(self) -> State:
        with self._lock:
            return self._current()

    def _current(self) -> State:
        if self._state == "open" and self._clock() - self._opened_at >= self.cooldown_s:
            self._state = "half_open"
            self._trial_in_flight = False
        return self._state

    def allow(self) -> bool:
        """May a call go out now? In half-open state only the first caller gets a yes."""
        with self._lock:
            state = self._current()
            if state == "closed":
                return True
            if state == "half_open" and not self._trial_in_flight:
                self._trial_in_flight = True
                return True
            return False

    def record_success(self) -> None:
        with self._lock:
            self._state = "closed"
            self._failures = 0
            self._trial_in_flight = False

    def record_failure(self) -> None:
        with self._lock:
            state = self._current()
            self._failures += 1
            if state == "half_open" or self._failures >= self.failure_threshold:
                if state != "open":
                    self.times_opened += 1
                self._state = "open"
                self._opened_at = self._clock()
                self._trial_in_flight = False

    def snapshot(self) -> dict[str, str | float]:
        """State for a health endpoint or a gauge (`state_code`: 0 closed, 1 half-open, 2 open)."""
        with self._lock:
            state = self._current()
            return {
                "state": state,
                "state_code": STATE_CODES[state],
                "consecutive_failures": float(self._failures),
                "times_opened": float(self.times_opened),
            }
