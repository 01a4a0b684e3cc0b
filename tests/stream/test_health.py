"""Liveness (stream/health.py): what /healthz says, and the server that says it."""

from __future__ import annotations

import httpx
from prometheus_client import CollectorRegistry, Counter

from stream.health import HEALTH_PATH, Health, serve


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_worker_is_healthy_while_its_loop_turns_and_its_batches_move() -> None:
    clock = Clock()
    health = Health(loop_bound_s=10, progress_bound_s=60, clock=clock)
    assert health.check().reason.startswith("starting")  # before the loop's first turn
    health.beat()
    assert health.check().healthy
    clock.now = 11
    verdict = health.check()
    assert not verdict.healthy and "event loop has not turned for 11.0s" in verdict.reason
    health.beat()
    health.lags([0, 3])  # records wait
    clock.now = 59
    health.beat()
    assert health.check().healthy  # 59 s since the last progress
    clock.now = 72
    health.beat()
    verdict = health.check()
    assert not verdict.healthy and "no batch was applied for 72.0s" in verdict.reason
    health.progressed()
    assert health.check().healthy


def test_an_idle_worker_is_healthy() -> None:
    clock = Clock()
    health = Health(loop_bound_s=10, progress_bound_s=60, clock=clock)
    health.lags([5])
    clock.now = 500
    health.beat()
    health.lags([0, 0])  # nothing waits: nothing to make progress on
    assert health.check().healthy
    assert health.loop_turned_within(1) and not health.loop_turned_within(0)


def test_the_server_answers_healthz_and_metrics_on_its_own_thread() -> None:
    registry = CollectorRegistry()
    Counter("uxmon_probe", "A counter.", registry=registry).inc()
    health = Health(loop_bound_s=10, progress_bound_s=60)
    server, _ = serve("127.0.0.1", 0, registry, health)
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        starting = httpx.get(url + HEALTH_PATH)
        assert starting.status_code == 503 and not starting.json()["healthy"]
        health.beat()
        assert httpx.get(url + HEALTH_PATH).json() == {"healthy": True, "reason": "ok"}
        assert "uxmon_probe_total 1.0" in httpx.get(url + "/metrics").text
        accept = {"Accept": "application/openmetrics-text"}
        assert httpx.get(url + "/metrics", headers=accept).text.endswith("# EOF\n")
    finally:
        server.shutdown()
