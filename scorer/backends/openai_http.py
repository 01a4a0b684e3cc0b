"""Verdict log-probabilities from an OpenAI-compatible chat server (vLLM serves the UXBench GRM).

Each prompt becomes one chat completion of one token with `logprobs` and `top_logprobs`;
the verdict tokens are looked up among the returned candidates. Requests run on a bounded
thread pool, are retried with exponential backoff and jitter on timeouts, connection
errors, 429 and 5xx, and pass through a circuit breaker so a dead server is not hammered.
"""

from __future__ import annotations

import logging
import math
import random
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from scorer.backends import (
    BackendConfig,
    BackendError,
    BackendUnavailableError,
    VerdictLogprobs,
)
from scorer.backends.breaker import CircuitBreaker
from scorer.prompts import ChatPrompt, Language

log = logging.getLogger(__name__)

# OpenAI's documented stand-in for "not among the top 20"; treat it as absent.
ABSENT_LOGPROB = -9999.0
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class CharMeter:
    """Budgets in characters: the server tokenizes, and one CJK character is at most about
    one token, so a character budget never under-counts Chinese text."""

    chat_overhead = 32  # role markers the server's chat template adds

    def count(self, text: str) -> int:
        return len(text)

    def head(self, text: str, n: int) -> str:
        return text[: max(n, 0)]

    def tail(self, text: str, n: int) -> str:
        return text[len(text) - n :] if n > 0 else ""

    def count_prompt(self, prompt: ChatPrompt) -> int:
        return len(prompt.system) + len(prompt.user) + self.chat_overhead


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter (half fixed, half random), or the server's wish."""
        step = min(self.backoff_max_s, self.backoff_s * 2**attempt)
        wait = step / 2 + random.uniform(0, step / 2)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait


class OpenAIBackend:
    default_max_prompt = 8000  # characters

    def __init__(
        self,
        language: Language,
        base_url: str,
        model_name: str,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        concurrency: int = 8,
        retry: RetryPolicy | None = None,
        breaker: CircuitBreaker | None = None,
        top_logprobs: int = 20,
        slow_call_s: float = 5.0,
    ) -> None:
        if concurrency < 1:
            raise BackendError(f"concurrency must be >= 1; got {concurrency}")
        self._language = language
        self._base_url = base_url.rstrip("/") + "/"
        self._model_name = model_name
        self._api_key = api_key
        self._timeout_s = timeout_s
        self._concurrency = concurrency
        self._retry = retry or RetryPolicy()
        self.breaker = breaker or CircuitBreaker()
        self._top_logprobs = top_logprobs
        # An answer that comes after the stream has moved on (its GRM deadline, 5 s by
        # default) is as good as none: slow answers open the breaker as failures do.
        self._slow_call_s = slow_call_s
        self._client: Any = None
        self._pool: ThreadPoolExecutor | None = None
        self._meter = CharMeter()
        self.model_id = f"{model_name}@openai"

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIBackend(base_url={self._base_url!r}, model_name={self._model_name!r})"

    @classmethod
    def from_config(cls, config: BackendConfig) -> OpenAIBackend:
        if not config.base_url or not config.model_name:
            raise BackendError("the openai GRM backend needs base_url and model_name")
        return cls(
            config.language,
            config.base_url,
            config.model_name,
            api_key=config.api_key,
            timeout_s=config.timeout_s,
            concurrency=config.concurrency,
            retry=RetryPolicy(max_retries=config.max_retries),
            breaker=CircuitBreaker(cooldown_s=config.breaker_cooldown_s),
            slow_call_s=config.slow_call_s,
        )

    def load(self) -> None:
        import httpx

        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        self._client = httpx.Client(
            base_url=self._base_url,
            headers=headers,
            timeout=httpx.Timeout(self._timeout_s),
            limits=httpx.Limits(
                max_connections=self._concurrency, max_keepalive_connections=self._concurrency
            ),
        )
        self._pool = ThreadPoolExecutor(self._concurrency, thread_name_prefix="grm-http")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._client is not None:
            self._client.close()
            self._client = None

    def meter(self) -> CharMeter:
        return self._meter

    def health(self) -> dict[str, str | float]:
        return self.breaker.snapshot()

    def verdict_logprobs(self, prompts: Sequence[ChatPrompt]) -> list[VerdictLogprobs]:
        if self._pool is None:
            raise BackendError("the openai GRM backend is not loaded; call load() first")
        futures = [self._pool.submit(self._one, p) for p in prompts]
        results: list[VerdictLogprobs] = []
        first_error: BaseException | None = None
        for future in futures:  # wait for all, so no request outlives this call
            try:
                results.append(future.result())
            except BaseException as exc:
                first_error = first_error or exc
        if first_error is not None:
            raise first_error
        return results

    def _payload(self, prompt: ChatPrompt) -> dict[str, Any]:
        return {
            "model": self._model_name,
            "messages": prompt.messages(),
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": self._top_logprobs,
        }

    def _one(self, prompt: ChatPrompt) -> VerdictLogprobs:
        import httpx

        payload = self._payload(prompt)
        problem = "no attempt made"
        for attempt in range(self._retry.max_retries + 1):
            if not self.breaker.allow():
                raise BackendUnavailableError(
                    f"GRM server circuit is {self.breaker.state}; last problem: {problem}"
                )
            retry_after: float | None = None
            started = time.monotonic()
            try:
                response = self._client.post("chat/completions", json=payload)
            except httpx.TimeoutException:
                problem = f"timed out after {self._timeout_s} s"
            except httpx.TransportError as exc:
                problem = f"transport error {type(exc).__name__}"
            except Exception as exc:  # e.g. httpx.DecodingError: still the server's failure,
                # and it must settle a half-open trial, or the breaker never closes again
                problem = f"unexpected {type(exc).__name__}"
            else:
                status = response.status_code
                if status < 400:
                    try:
                        verdicts = self._parse(response)
                    except BackendError:
                        self.breaker.record_failure()  # garbage is the server's failure
                        raise
                    took = time.monotonic() - started
                    if took > self._slow_call_s:
                        log.warning("GRM server answered in %.1f s (slow: a failure)", took)
                        self.breaker.record_failure()
                    else:
                        self.breaker.record_success()
                    return verdicts
                if status not in RETRYABLE_STATUS:
                    # The server is up and refused this request: retrying will not help,
                    # and it says nothing about the server's health.
                    self.breaker.record_success()
                    raise BackendError(f"GRM server answered HTTP {status} (not retryable)")
                problem = f"HTTP {status}"
                retry_after = _retry_after(response.headers.get("retry-after"))
            self.breaker.record_failure()
            if attempt < self._retry.max_retries:
                wait = self._retry.delay(attempt, retry_after)
                log.warning(
                    "GRM server request failed (%s); retry %d in %.2f s", problem, attempt + 1, wait
                )
                time.sleep(wait)
        raise BackendUnavailableError(
            f"GRM server failed {self._retry.max_retries + 1} attempts; last problem: {problem}"
        )

    def _parse(self, response: Any) -> VerdictLogprobs:
        try:
            position = response.json()["choices"][0]["logprobs"]["content"][0]
            candidates = [(position["token"], position["logprob"])]
            candidates += [(c["token"], c["logprob"]) for c in position.get("top_logprobs") or ()]
        except (ValueError, KeyError, IndexError, TypeError):
            raise BackendError(
                "GRM server response has no choices[0].logprobs.content[0] with tokens and "
                "logprobs; does the server support logprobs on chat completions?"
            ) from None
        return verdicts_from_candidates(candidates, self._language)


def verdicts_from_candidates(
    candidates: Sequence[tuple[str, float]], language: Language
) -> VerdictLogprobs:
    """Find the verdict tokens among (token, logprob) candidates.

    Servers may render a token with a leading space; such spellings of a verdict are the
    same answer, so their probabilities are summed. Each distinct spelling counts once.
    """
    seen: dict[str, float] = {}
    for token, logprob in candidates:
        if isinstance(token, str) and isinstance(logprob, int | float):
            value = float(logprob)
            if value > ABSENT_LOGPROB and math.isfinite(value):
                seen[token] = value
    floor = min(seen.values()) if seen else None

    def total(word: str) -> float | None:
        matches = [lp for token, lp in seen.items() if token.strip() == word]
        if not matches:
            return None
        top = max(matches)
        return top + math.log(sum(math.exp(lp - top) for lp in matches))

    return VerdictLogprobs(total(language.good), total(language.bad), floor)


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date; our own backoff is good enough
