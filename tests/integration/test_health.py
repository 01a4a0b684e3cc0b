"""Liveness on a real worker: /healthz turns unhealthy within its bound when the event
loop is blocked, while /metrics (served from another thread) still answers."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from stream.health import HEALTH_PATH
from stream.local import LocalWorker
from tests.support.services import worker as spawn_worker

pytestmark = pytest.mark.integration

LOOP_BOUND_S = 3.0
BLOCK_S = 12.0


def healthz(worker: LocalWorker) -> httpx.Response:
    return httpx.get(f"http://127.0.0.1:{worker.metrics_port}{HEALTH_PATH}", timeout=5)


def wait_status(worker: LocalWorker, status: int, timeout_s: float) -> float:
    """Seconds until /healthz answers `status`."""
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if healthz(worker).status_code == status:
            return time.monotonic() - started
        time.sleep(0.1)
    raise TimeoutError(f"/healthz never answered {status} in {timeout_s}s: {healthz(worker).text}")


def test_a_blocked_event_loop_turns_the_worker_unhealthy_within_the_bound(
    broker: str, names: dict[str, str], workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trigger = workdir / "block-now"
    monkeypatch.setenv("UXMON_TEST_BLOCK_LOOP", f"{trigger}:{BLOCK_S}")
    worker = spawn_worker(
        broker,
        names["app_id"],
        workdir,
        faults=True,
        scorers="tests.support.scorers:Keyword",
        grm="",
        health_loop_s=str(LOOP_BOUND_S),
        **{k: v for k, v in names.items() if k != "app_id"},
    ).start()
    try:
        worker.wait_ready()
        wait_status(worker, 200, timeout_s=30)

        trigger.touch()
        unhealthy_after = wait_status(worker, 503, timeout_s=LOOP_BOUND_S + 6)
        assert "event loop has not turned" in healthz(worker).json()["reason"]
        assert httpx.get(worker.url, timeout=5).status_code == 200  # what the old probe saw
        # the heartbeat ticks every second: the block starts within one, then the bound
        assert unhealthy_after <= 1.0 + LOOP_BOUND_S + 1.0

        wait_status(worker, 200, timeout_s=BLOCK_S + 10)  # healthy again once it turns
        assert worker.alive()
    finally:
        worker.stop()
