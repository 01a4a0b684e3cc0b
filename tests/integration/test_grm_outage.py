"""A GRM server that accepts connections and never answers: the UX-Judge's scores keep
flowing (one batch waits the GRM deadline, later ones skip the busy GRM), the skips are
counted by reason, and nothing is lost."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from stream.local import LocalWorker
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
