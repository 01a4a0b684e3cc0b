"""Where GRM verdict log-probabilities come from: the contract and the registry of backends.

A backend takes filled chat prompts and returns, for each, the log-probabilities of the two
verdict tokens at the first answer position. It never decides the verdict: the GRM does.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from scorer.errors import ScorerError
from scorer.prompts import ChatPrompt, Language
from scorer.runtime import Runtime

BACKENDS: dict[str, str] = {
    "local": "scorer.backends.local:LocalBackend",
    "openai": "scorer.backends.openai_http:OpenAIBackend",
}


class BackendError(ScorerError):
    """A backend that cannot produce verdicts (misconfigured, unreachable, or malformed)."""


class BackendUnavailableError(BackendError):
    """The model server failed after retries, or its circuit breaker is open."""


@dataclass(frozen=True, slots=True)
class VerdictLogprobs:
    """Log-probabilities of the good and bad verdict tokens at the first answer position.

    None means the backend did not see that token; `floor` is then an upper bound on its
    log-probability (the lowest one the backend did see), or None when nothing bounds it.
    """

    good: float | None
    bad: float | None
    floor: float | None = None


@dataclass(frozen=True, slots=True)
class BackendConfig:
    """Everything any backend may need; each backend reads only its own fields."""

    language: Language
    model: str | None = None  # local: folder or HF id; None = the bundled Qwen
    runtime: Runtime | None = None
    cache_dir: Path | None = None
    base_url: str | None = None
    api_key: str | None = None
    model_name: str | None = None
    timeout_s: float = 30.0
    max_retries: int = 3
    concurrency: int = 8
    slow_call_s: float = 5.0
    breaker_cooldown_s: float = 30.0


class TokenMeter(Protocol):
    """Measures and cuts text in the backend's own units (tokens, or an estimate of them)."""

    def count(self, text: str) -> int: ...

    def head(self, text: str, n: int) -> str: ...

    def tail(self, text: str, n: int) -> str: ...

    def count_prompt(self, prompt: ChatPrompt) -> int: ...


class VerdictBackend(Protocol):
    model_id: str  # identifies the weights; part of the GRM's version string
    default_max_prompt: int  # prompt budget in the meter's units

    def load(self) -> None: ...

    def meter(self) -> TokenMeter: ...

    def verdict_logprobs(self, prompts: Sequence[ChatPrompt]) -> list[VerdictLogprobs]: ...

    def health(self) -> dict[str, str | float]: ...


def create_backend(name: str, config: BackendConfig) -> VerdictBackend:
    """Build (not load) the backend called `name`."""
    if name not in BACKENDS:
        raise BackendError(f"unknown GRM backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    module_name, _, attr = BACKENDS[name].partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    backend: VerdictBackend = factory.from_config(config)
    return backend
