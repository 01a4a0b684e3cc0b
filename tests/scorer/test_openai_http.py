"""HTTP-contract tests of the OpenAI-compatible GRM backend against a real local server.

The server is tests/support/grm_server.py, scripted by each test.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator

import pytest

from scorer.backends import BackendError, BackendUnavailableError
from scorer.backends.breaker import CircuitBreaker
from scorer.backends.openai_http import OpenAIBackend, RetryPolicy, verdicts_from_candidates
from scorer.grm import GRM
from scorer.prompts import LANGUAGES, ChatPrompt
from scorer.types import Dialogue, Verdict
from tests.support.grm_server import Action, Stub, serving

ZH = LANGUAGES["zh"]
SECRET = "sk-test-never-log-me"


@pytest.fixture
def server() -> Iterator[tuple[str, Stub]]:
    with serving() as running:
        yield running


def backend(
    url: str,
    *,
    retries: int = 2,
    timeout_s: float = 2.0,
    concurrency: int = 4,
    breaker: CircuitBreaker | None = None,
    slow_call_s: float = 5.0,
) -> OpenAIBackend:
    b = OpenAIBackend(
        ZH,
        url,
        "judge",
        api_key=SECRET,
        timeout_s=timeout_s,
        concurrency=concurrency,
        retry=RetryPolicy(max_retries=retries, backoff_s=0.01, backoff_max_s=0.05),
        breaker=breaker or CircuitBreaker(failure_threshold=50, cooldown_s=60),
        slow_call_s=slow_call_s,
    )
    b.load()
    return b


PROMPT = ChatPrompt("system words", "user words")


def test_request_contract_and_score(server: tuple[str, Stub]) -> None:
    url, stub = server
    grm = GRM(backend="openai", base_url=url, model_name="judge", api_key=SECRET, threshold=0.5)
    grm.load()
    try:
        [score] = grm.score([Dialogue("你好", "你好！")])
    finally:
        grm.close()
    request = stub.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == f"Bearer {SECRET}"
    body = request["body"]
    assert body["model"] == "judge"
    assert body["max_tokens"] == 1 and body["logprobs"] is True and body["top_logprobs"] >= 2
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "你好！" in body["messages"][1]["content"]
    expected = 1 / (1 + math.exp(-(-0.3 + 1.4)))
    assert score.extras["raw_score"] == pytest.approx(expected)
    assert score.p_satisfied == pytest.approx(expected)
    assert score.verdict is Verdict.GOOD
    assert score.version.startswith("judge@openai+p")
    assert grm.health()["state"] == "closed"


def test_verdict_lookup_rules() -> None:
    # A leading-space spelling of a verdict is the same answer: probabilities add up.
    lp = verdicts_from_candidates([("好", math.log(0.2)), (" 好", math.log(0.2)), ("差", -2.0)], ZH)
    assert lp.good == pytest.approx(math.log(0.4))
    # The -9999 stand-in means "not among the top": treated as absent, floor = lowest seen.
    lp = verdicts_from_candidates([("好", -0.1), ("差", -9999.0), ("嗯", -5.0)], ZH)
    assert lp.bad is None and lp.floor == pytest.approx(-5.0)
    lp = verdicts_from_candidates([("嗯", -0.1), ("是", -3.0)], ZH)
    assert lp.good is None and lp.bad is None


def test_one_missing_verdict_is_bounded_and_none_is_unparseable(server: tuple[str, Stub]) -> None:
    url, stub = server
    # One request at a time, so the stub's queued answers meet the dialogues in order.
    grm = GRM(
        backend="openai",
        base_url=url,
        model_name="judge",
        threshold=0.5,
        max_retries=0,
        concurrency=1,
    )
    grm.load()
    try:
        stub.queue = [Action(top=[("好", -0.05), ("嗯", -4.0)]), Action(top=[("嗯", -0.1)])]
        bounded, unparseable = grm.score([Dialogue("q", "a"), Dialogue("q", "b")])
    finally:
        grm.close()
    assert bounded.extras["bounded"] == 1.0 and bounded.extras["margin"] == pytest.approx(3.95)
    assert bounded.verdict is Verdict.GOOD
    assert unparseable.extras["unparseable"] == 1.0 and math.isnan(unparseable.p_satisfied)


def test_retries_5xx_and_429_then_succeeds(server: tuple[str, Stub]) -> None:
    url, stub = server
    b = backend(url, retries=3)
    stub.queue = [
        Action(status=500),
        Action(status=429, headers={"retry-after": "0"}),
        Action(status=503),
    ]
    [lp] = b.verdict_logprobs([PROMPT])
    b.close()
    assert lp.good == pytest.approx(-0.3)
    assert len(stub.requests) == 4
    assert b.health()["state"] == "closed"


def test_client_error_is_not_retried(server: tuple[str, Stub]) -> None:
    url, stub = server
    b = backend(url, retries=3)
    stub.default = Action(status=400)
    with pytest.raises(BackendError, match="HTTP 400") as info:
        b.verdict_logprobs([PROMPT])
    b.close()
    assert not isinstance(info.value, BackendUnavailableError)
    assert len(stub.requests) == 1


def test_malformed_response_is_a_clear_error(server: tuple[str, Stub]) -> None:
    url, stub = server
    b = backend(url)
    stub.default = Action(body=json.dumps({"choices": [{"message": {"content": "好"}}]}))
    with pytest.raises(BackendError, match="logprobs"):
        b.verdict_logprobs([PROMPT])
    b.close()


def test_timeouts_are_retried_then_reported(server: tuple[str, Stub]) -> None:
    url, stub = server
    b = backend(url, retries=1, timeout_s=0.2)
    stub.default = Action(delay_s=0.6)
    started = time.perf_counter()
    with pytest.raises(BackendUnavailableError, match="timed out"):
        b.verdict_logprobs([PROMPT])
    b.close()
    assert time.perf_counter() - started < 2.0
    assert len(stub.requests) == 2


def test_breaker_opens_fails_fast_and_recovers(server: tuple[str, Stub]) -> None:
    url, stub = server
    breaker = CircuitBreaker(failure_threshold=3, cooldown_s=0.4)
    b = backend(url, retries=5, breaker=breaker)
    stub.default = Action(status=500)
    with pytest.raises(BackendUnavailableError, match="circuit is open"):
        b.verdict_logprobs([PROMPT])
    assert len(stub.requests) == 3  # the breaker stopped the retries after 3 failures
    assert b.health()["state"] == "open" and b.health()["state_code"] == 2.0

    with pytest.raises(BackendUnavailableError, match="circuit is open"):
        b.verdict_logprobs([PROMPT])
    assert len(stub.requests) == 3  # refused without touching the server

    time.sleep(0.45)
    assert breaker.state == "half_open"
    with pytest.raises(BackendUnavailableError):  # the trial fails: open again
        b.verdict_logprobs([PROMPT])
    assert len(stub.requests) == 4 and breaker.state == "open"

    time.sleep(0.45)
    stub.default = Action()
    [lp] = b.verdict_logprobs([PROMPT])  # the trial succeeds: closed
    b.close()
    assert lp.good is not None
    assert b.health()["state"] == "closed" and b.health()["times_opened"] == 2.0


def test_half_open_lets_one_trial_through() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=10, clock=lambda: now[0])
    breaker.record_failure()
    assert not breaker.allow()
    now[0] = 10.0
    assert breaker.allow() and not breaker.allow()  # one trial only
    breaker.record_success()
    assert breaker.allow() and breaker.state == "closed"


def test_concurrency_is_bounded(server: tuple[str, Stub]) -> None:
    url, stub = server
    b = backend(url, concurrency=2)
    stub.default = Action(delay_s=0.15)
    results = b.verdict_logprobs([PROMPT] * 6)
    b.close()
    assert len(results) == 6
    assert stub.max_in_flight == 2


def test_api_key_never_in_logs_or_errors(
    server: tuple[str, Stub], caplog: pytest.LogCaptureFixture
) -> None:
    url, stub = server
    b = backend(url, retries=1)
    stub.default = Action(status=502)
    with caplog.at_level(logging.DEBUG), pytest.raises(BackendUnavailableError) as info:
        b.verdict_logprobs([ChatPrompt("s", "private user text")])
    b.close()
    for text in (caplog.text, str(info.value), repr(b)):
        assert SECRET not in text
        assert "private user text" not in text


def test_openai_backend_needs_url_and_model() -> None:
    with pytest.raises(BackendError, match="base_url and model_name"):
        GRM(backend="openai")


def test_an_undecodable_body_counts_as_a_failure_and_settles_the_trial(
    server: tuple[str, Stub],
) -> None:
    # httpx raises DecodingError (neither a timeout nor a transport error) for a body that
    # says gzip and is not; a half-open trial must still resolve, or the circuit never closes.
    url, stub = server
    breaker = CircuitBreaker(failure_threshold=1, cooldown_s=0.2)
    b = backend(url, retries=0, breaker=breaker)
    stub.default = Action(headers={"content-encoding": "gzip"})
    with pytest.raises(BackendUnavailableError, match="unexpected DecodingError"):
        b.verdict_logprobs([PROMPT])
    assert breaker.state == "open"
    time.sleep(0.25)
    assert breaker.state == "half_open"
    with pytest.raises(BackendUnavailableError):  # the failed trial re-opens it
        b.verdict_logprobs([PROMPT])
    assert breaker.state == "open"
    time.sleep(0.25)
    stub.default = Action()
    [lp] = b.verdict_logprobs([PROMPT])  # and the next trial, healthy, closes it
    b.close()
    assert lp.good is not None and breaker.state == "closed"


def test_slow_answers_open_the_breaker_and_are_still_used(server: tuple[str, Stub]) -> None:
    url, stub = server
    breaker = CircuitBreaker(failure_threshold=2, cooldown_s=60)
    b = backend(url, retries=0, breaker=breaker, slow_call_s=0.1)
    stub.default = Action(delay_s=0.3)  # inside the timeout, past the stream's patience
    [first] = b.verdict_logprobs([PROMPT])
    assert first.good is not None and breaker.state == "closed"
    b.verdict_logprobs([PROMPT])
    assert breaker.state == "open"  # two slow answers in a row
    with pytest.raises(BackendUnavailableError, match="circuit is open"):
        b.verdict_logprobs([PROMPT])
    b.close()


def test_a_garbage_answer_counts_as_a_failure(server: tuple[str, Stub]) -> None:
    url, stub = server
    breaker = CircuitBreaker(failure_threshold=2, cooldown_s=60)
    b = backend(url, retries=0, breaker=breaker)
    stub.default = Action(body="<html>502 from a proxy, with status 200</html>")
    for _ in range(2):
        with pytest.raises(BackendError, match="logprobs"):
            b.verdict_logprobs([PROMPT])
    b.close()
    assert breaker.state == "open"
