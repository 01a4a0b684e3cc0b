"""GRM outages against a worker. A server that accepts connections and never answers: the
UX-Judge's scores keep flowing (one batch waits the GRM deadline, later ones skip the busy
GRM), the skips are counted by reason, and nothing is lost. A server that answers garbage
or too slowly: the breaker opens, the gauge shows it, and verdicts are back within one
cooldown of the server's return."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from stream.local import LocalWorker
from tests.support.grm_server import Action, Stub, serving
from tests.support.services import produce
from tests.support.traffic import conversations, encode

pytestmark = pytest.mark.integration


@pytest.fixture
def silent_server() -> Iterator[str]:
    """Accepts every connection, reads, and never writes a byte."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    listener.close()


def test_a_silent_grm_server_never_holds_back_the_judges_scores(
    broker: str,
    names: dict[str, str],
    start_worker: Callable[..., LocalWorker],
    silent_server: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("UXMON_TEST_GRM_URL", silent_server)
    monkeypatch.setenv("UXMON_TEST_GRM_TIMEOUT_S", "20")  # hangs far past the deadline
    worker = start_worker(
        grm="tests.support.scorers:RemoteGRM",
        grm_deadline_s=1.0,
        grm_uncertain_margin=1.0,  # every turn is "uncertain": the GRM is wanted everywhere
        grm_rate=100.0,
        grm_burst=100.0,
        batch_max=8,
    )
    events = conversations(40, exchanges=2)
    turns = sum(1 for e in events if e["role"] == "assistant")
    produce(broker, names["turns_topic"], map(encode, events))
    worker.wait_for("uxmon_turns_scored_total", turns, timeout_s=120)

    deadline = worker.total("uxmon_grm_skipped_total", reason="deadline")
    busy = worker.total("uxmon_grm_skipped_total", reason="busy")
    assert deadline >= 1 and busy >= 1
    assert worker.total("uxmon_grm_verdicts_total") == 0
    # every turn the judge scored is accounted for by the cascade: skipped for a reason
    assert worker.total("uxmon_grm_skipped_total") == turns
    # the hung call holds the GRM for its 20 s timeout: only the first batch's picks (at
    # most grm_max_per_batch, 4) waited for the deadline; every later pick was skipped busy
    assert deadline <= 4
    assert worker.alive()


@pytest.fixture
def grm_server() -> Iterator[tuple[str, Stub]]:
    with serving() as running:
        yield running


COOLDOWN_S = 3.0
OPEN = 2.0  # uxmon_grm_backend_state: 0 closed, 1 half-open, 2 open


def test_garbage_and_slow_answers_open_the_breaker_and_verdicts_return_within_a_cooldown(
    broker: str,
    names: dict[str, str],
    start_worker: Callable[..., LocalWorker],
    grm_server: tuple[str, Stub],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, stub = grm_server
    monkeypatch.setenv("UXMON_TEST_GRM_URL", url)
    monkeypatch.setenv("UXMON_TEST_GRM_COOLDOWN_S", str(COOLDOWN_S))
    monkeypatch.setenv("UXMON_TEST_GRM_SLOW_S", "0.5")
    worker = start_worker(
        scorers="tests.support.scorers:Keyword",
        grm="tests.support.scorers:RemoteGRM",
        grm_deadline_s=3.0,
        grm_uncertain_margin=1.0,  # every turn is "uncertain": the GRM is wanted everywhere
        grm_rate=100.0,
        grm_burst=100.0,
        batch_max=4,
        timers_interval_s=0.5,
    )
    sent = 0

    def send(n: int) -> None:
        nonlocal sent
        events = conversations(n, exchanges=1, prefix=f"c{sent}")  # new turns each time
        produce(broker, names["turns_topic"], map(encode, events))
        sent += sum(1 for e in events if e["role"] == "assistant")

    def until_open() -> None:
        deadline = time.monotonic() + 60
        while worker.total("uxmon_grm_backend_state") != OPEN:
            assert time.monotonic() < deadline, "the breaker never opened"
            send(2)
            time.sleep(0.5)

    def until_verdicts() -> float:
        started, before = time.monotonic(), worker.total("uxmon_grm_verdicts_total")
        while worker.total("uxmon_grm_verdicts_total") == before:
            assert time.monotonic() - started < 60, "no verdict after the server came back"
            send(1)
            time.sleep(0.25)
        return time.monotonic() - started

    # 200 with a body that is no completion (a proxy's error page): failures, then open
    stub.default = Action(body="<html>upstream error</html>")
    until_open()
    assert worker.total("uxmon_grm_skipped_total", reason="failed") >= 1
    stub.default = Action()
    back_after = until_verdicts()

    # every answer inside the HTTP timeout, but slower than the stream can wait for
    stub.default = Action(delay_s=1.0)
    until_open()
    stub.default = Action()
    back_after = max(back_after, until_verdicts())

    # one cooldown, plus the first batch after it and a gauge tick
    assert back_after <= COOLDOWN_S + 4.0
    worker.wait_for("uxmon_turns_scored_total", sent, timeout_s=60)  # the judge never stopped
    assert worker.alive()
