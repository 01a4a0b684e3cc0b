"""The built-in GRM pointed at an OpenAI-compatible server by settings alone
(UXMON_GRM_BACKEND, _BASE_URL, _MODEL, _API_KEY_FILE, _CONCURRENCY): a real worker sends
its verdict calls there with the key, and never writes the key to its log."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from stream.local import LocalWorker
from tests.support.grm_server import serving
from tests.support.services import produce
from tests.support.traffic import conversations, encode

pytestmark = pytest.mark.integration

KEY = "sk-test-0123456789"


def test_the_grm_runs_on_a_server_named_in_the_settings(
    broker: str, names: dict[str, str], start_worker: Callable[..., LocalWorker], workdir: Path
) -> None:
    key_file = workdir / "grm-key"
    key_file.write_text(KEY + "\n")
    with serving() as (url, stub):
        worker = start_worker(
            scorers="tests.support.scorers:Keyword",
            grm="grm",
            grm_backend="openai",
            grm_base_url=url,
            grm_model="judge",
            grm_api_key_file=str(key_file),
            grm_concurrency="2",
            grm_uncertain_margin=1.0,  # every turn is "uncertain": the GRM is wanted everywhere
            grm_rate=100.0,
            grm_burst=100.0,
            grm_max_per_batch=10,
        )
        events = conversations(6, exchanges=1)
        produce(broker, names["turns_topic"], map(encode, events))
        worker.wait_for("uxmon_grm_verdicts_total", 6, timeout_s=120)
        assert worker.total("uxmon_turns_scored_total", scorer="grm") == 6

    assert stub.requests, "the worker never called the server"
    assert {r["auth"] for r in stub.requests} == {f"Bearer {KEY}"}
    assert {r["body"]["model"] for r in stub.requests} == {"judge"}
    assert stub.max_in_flight <= 2
    assert KEY not in worker.log_path.read_text(errors="replace")
