"""A uxmon worker in a child process on this machine: for the demo, benchmarks and tests.

The child is a real `uxmon serve`, configured only through UXMON_* variables, so what runs
here is what runs in production (kill -9 included).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from stream.broker import free_port
from stream.metrics import CONSUMER_LAG, EVENTS_CONSUMED, EVENTS_REDELIVERED, EVENTS_REJECTED

Samples = dict[str, list[tuple[dict[str, str], float]]]

# What a worker on the embedded broker needs: quick group joins and the changelog
# work-around for tansu's wrong ListOffsets (see docs/operations.md). Not for production.
EMBEDDED_BROKER_SETTINGS = {
    "session_timeout_s": "3",
    "heartbeat_interval_s": "1",
    "producer_max_batch_size": "1",
}


def scrape(url: str) -> Samples:
    """Every sample of a /metrics page by sample name: [(labels, value), ...]."""
    out: Samples = defaultdict(list)
    for family in text_string_to_metric_families(httpx.get(url, timeout=5).text):
        for sample in family.samples:
            out[sample.name].append((sample.labels, sample.value))
    return out


def total(samples: Samples, name: str, **match: str) -> float:
    """Sum of `name` over the label sets that match every `label=value` given."""
    return sum(
        v
        for labels, v in samples.get(name, [])
        if all(labels.get(k) == want for k, want in match.items())
    )


class LocalWorker:
    def __init__(
        self,
        broker: str,
        app_id: str,
        workdir: Path,
        pythonpath: str | None = None,
        **settings: Any,
    ) -> None:
        self.metrics_port = int(settings.pop("metrics_port", 0)) or free_port()
        workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = workdir / f"worker-{app_id}-{self.metrics_port}.log"
        self.env = {**os.environ, "UXMON_DATADIR": str(workdir / "data")}
        if pythonpath:
            self.env["PYTHONPATH"] = pythonpath
        for key, value in {
            **EMBEDDED_BROKER_SETTINGS,
            "broker": broker,
            "app_id": app_id,
            "metrics_port": str(self.metrics_port),
            **settings,
        }.items():
            self.env[f"UXMON_{key.upper()}"] = (
                value if isinstance(value, str) else json.dumps(value)
            )
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    def start(self) -> LocalWorker:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "stream.cli", "serve"],
                env=self.env,
                stdout=log,
                stderr=log,
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def samples(self) -> Samples:
        """The worker's metrics now. A durable counter's label set reads 0 on the first
        scrape that meets it (stream/ledger.py), so the page is read twice."""
        scrape(self.url)
        return scrape(self.url)

    def total(self, name: str, **match: str) -> float:
        return total(self.samples(), name, **match)

    def wait_for(self, name: str, value: float, timeout_s: float = 120) -> float:
        """Until the sum of `name` reaches `value`; fails early if the worker dies."""
        deadline = time.monotonic() + timeout_s
        seen = -1.0
        while time.monotonic() < deadline:
            if not self.alive():
                raise RuntimeError(f"worker exited; log:\n{self.log_tail()}")
            try:
                seen = self.total(name)
            except httpx.HTTPError:
                seen = -1.0
            if seen >= value:
                return seen
            time.sleep(0.25)
        raise TimeoutError(
            f"{name} reached {seen}, wanted {value}; {self._progress()}; log:\n{self.log_tail()}"
        )

    def _progress(self) -> str:
        """Where each partition stands, for a timeout's message."""
        try:
            samples = self.samples()
        except httpx.HTTPError:
            return "metrics unreachable"
        lag = {labels["partition"]: v for labels, v in samples.get(CONSUMER_LAG, [])}
        counts = " ".join(
            f"{name.split('_')[2]}={total(samples, name):.0f}"  # uxmon_events_<what>_total
            for name in (EVENTS_CONSUMED, EVENTS_REDELIVERED, EVENTS_REJECTED)
        )
        return f"{counts} lag by partition={dict(sorted(lag.items()))}"

    def wait_ready(self, timeout_s: float = 600) -> None:
        """Until the worker owns partitions (it loads its scorers before joining the group)."""
        self.wait_for("uxmon_assigned_partitions", 1, timeout_s)

    def kill9(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.alive():
            assert self.process is not None
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def log_tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])
