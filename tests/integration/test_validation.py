"""Periodic validation inside a real worker on the real broker, read back through a real
Prometheus (the Debian package) scraping the worker."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stream.local import LocalWorker
from stream.metrics import (
    BENCHMARK_FAILURES,
    BENCHMARK_LAST_SUCCESS,
    BENCHMARK_METRIC,
    TURNS_SCORED,
)
from tests.integration.conftest import TEST_SCORER
from tests.support.prometheus import Prometheus
from tests.support.services import produce
from tests.support.traffic import conversations, encode

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]
# Large enough that a run on one niced core outlasts the traffic the test sends meanwhile
# (the judge got twice as fast; 300 records of the file above no longer did). With 1,200
# the test took 262 s, with 500 137 s, and the run still outlasted the traffic.
LONG_RUN = Path(__file__).resolve().parents[2] / "benchmark" / "data" / "writers" / "task1"
LONG_RUN_LIMIT = 500


def scraping(worker: LocalWorker, workdir: Path) -> Prometheus:
    return Prometheus(workdir / "prometheus", [f"127.0.0.1:{worker.metrics_port}"])


def first_value(result: list[dict]) -> float:
    assert result, "no series"
    return float(result[0]["value"][1])


def runs(report_dir: Path) -> list[Path]:
    folder = report_dir / TEST_SCORER
    return sorted(folder.iterdir()) if folder.exists() else []


def test_scheduled_validation_exports_its_report_while_the_stream_goes_on(
    broker: str, names: dict[str, str], start_worker: Start, workdir: Path
) -> None:
    report_dir = workdir / "reports"
    worker = start_worker(
        validation_data=str(LONG_RUN),
        validation_limit=str(LONG_RUN_LIMIT),  # long enough to overlap the traffic below
        validation_initial_delay_s="0",
        validation_interval_s="3600",
        validation_report_dir=str(report_dir),
    )
    with scraping(worker, workdir) as prometheus:
        # The first run starts as soon as the scorers are loaded; send traffic while it runs.
        deadline = time.monotonic() + 120
        while not runs(report_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        (run,) = runs(report_dir)
        events = conversations(30, exchanges=2)
        expected = sum(e["role"] == "assistant" for e in events)
        sent = time.monotonic()
        produce(broker, names["turns_topic"], map(encode, events))
        worker.wait_for(TURNS_SCORED, expected, timeout_s=120)
        scored_in = time.monotonic() - sent
        validating = not (run / "report.json").exists()

        avg = prometheus.wait_for(
            f'{BENCHMARK_METRIC}{{scorer="{TEST_SCORER}",task="task1",metric="avg_acc"}}',
            timeout_s=600,
        )
        last = prometheus.wait_for(
            f'{BENCHMARK_LAST_SUCCESS}{{scorer="{TEST_SCORER}",task="task1"}}', timeout_s=120
        )
        failures = prometheus.query(f'{BENCHMARK_FAILURES}{{scorer="{TEST_SCORER}"}}')
        info = prometheus.query("uxmon_worker_info")

    report = json.loads((run / "report.json").read_text())
    assert validating, "the validation run ended before the traffic was scored"
    assert scored_in < 30, f"{expected} turns took {scored_in:.1f}s during validation"
    assert report["n"] == LONG_RUN_LIMIT and report["scorer"] == TEST_SCORER
    assert first_value(avg) == pytest.approx(report["metrics"]["avg_acc"])
    assert avg[0]["metric"]["version"] == report["scorer_version"]
    assert f"{TEST_SCORER}={report['scorer_version']}" in info[0]["metric"]["scorers"]
    assert time.time() - 900 < first_value(last) <= time.time()
    assert first_value(failures) == 0
    assert worker.alive()


def test_a_failing_validation_is_counted_and_the_worker_keeps_scoring(
    broker: str, names: dict[str, str], start_worker: Start, workdir: Path
) -> None:
    worker = start_worker(
        validation_data=str(workdir / "no-such-data.jsonl"),
        validation_initial_delay_s="0",
        validation_interval_s="1",
        validation_report_dir=str(workdir / "reports"),
    )
    with scraping(worker, workdir) as prometheus:
        failed = f'{BENCHMARK_FAILURES}{{scorer="{TEST_SCORER}",task="task1"}} >= 2'
        assert prometheus.wait_for(failed, timeout_s=180), worker.log_tail()

        events = conversations(10, exchanges=2)
        expected = sum(e["role"] == "assistant" for e in events)
        produce(broker, names["turns_topic"], map(encode, events))
        scored = prometheus.wait_for(f"sum({TURNS_SCORED}) >= {expected}", timeout_s=120)
        succeeded = prometheus.query(BENCHMARK_LAST_SUCCESS)
        exported = prometheus.query(BENCHMARK_METRIC)

    assert first_value(scored) == expected
    assert succeeded == [] and exported == []
    assert worker.alive()
    assert f"validation of {TEST_SCORER} on task1 failed (exit code 2" in worker.log_tail(400)
