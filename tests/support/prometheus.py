"""A real Prometheus (and Alertmanager) from the Debian packages, for integration tests.

`make test` installs them (see the Makefile's `services` target); tests start their own
instances on free loopback ports with throw-away storage.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from stream.broker import free_port

REPO = Path(__file__).resolve().parents[2]


class ServiceMissing(RuntimeError):
    pass


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise ServiceMissing(
            f"{name} is not installed; run `make services` "
            "(apt-get install prometheus prometheus-alertmanager)"
        )
    return path


class _Process:
    def __init__(self, args: list[str], log: Path, ready_url: str) -> None:
        self._args = args
        self._log = log
        self._ready_url = ready_url
        self._proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 20) -> None:
        with self._log.open("ab") as out:
            self._proc = subprocess.Popen(self._args, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"{self._args[0]} exited; see {self._log}")
            try:
                if httpx.get(self._ready_url, timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError(f"{self._args[0]} not ready after {timeout_s}s; see {self._log}")

    def stop(self) -> None:
        if self._proc and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


def durable_series_relabeling() -> list[dict[str, Any]]:
    """The uxmon job's metric relabelling, as deploy/prometheus/prometheus.yml has it."""
    config = yaml.safe_load((REPO / "deploy" / "prometheus" / "prometheus.yml").read_text())
    [job] = [job for job in config["scrape_configs"] if job["job_name"] == "uxmon"]
    relabeling: list[dict[str, Any]] = job["metric_relabel_configs"]
    return relabeling


class Prometheus(_Process):
    """`prometheus` scraping `targets` every `scrape_interval`, with optional rule files."""

    def __init__(
        self,
        workdir: Path,
        targets: list[str],
        *,
        scrape_interval: str = "1s",
        rule_files: list[Path] = (),  # type: ignore[assignment]
        alertmanager: str | None = None,
        extra_config: dict[str, Any] | None = None,
    ) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config: dict[str, Any] = {
            "global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
            "scrape_configs": [
                {
                    "job_name": "uxmon",
                    "static_configs": [{"targets": list(targets)}],
                    "metric_relabel_configs": durable_series_relabeling(),
                }
            ],
            "rule_files": [str(p) for p in rule_files],
        }
        if alertmanager:
            config["alerting"] = {
                "alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]
            }
        config.update(extra_config or {})
        self.config_path = workdir / "prometheus.yml"
        self.config_path.write_text(yaml.safe_dump(config))
        (workdir / "tsdb").mkdir(exist_ok=True)
        super().__init__(
            [
                _binary("prometheus"),
                f"--config.file={self.config_path}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-lifecycle",
                "--enable-feature=exemplar-storage",  # as deploy/ runs it
            ],
            workdir / "prometheus.log",
            f"{self.url}/-/ready",
        )

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; returns the result vector (raises on a PromQL error)."""
        response = httpx.get(f"{self.url}/api/v1/query", params={"query": expr}, timeout=10)
        body = response.json()
        if body.get("status") != "success":
            raise ValueError(f"query failed: {body.get('error')} ({expr})")
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def exemplars(self, expr: str, since_s: float = 3600) -> list[dict[str, str]]:
        """The label sets of the exemplars stored for `expr`'s series in the last `since_s`."""
        now = time.time()
        params = {"query": expr, "start": str(now - since_s), "end": str(now)}
        response = httpx.get(f"{self.url}/api/v1/query_exemplars", params=params, timeout=10)
        body = response.json()
        if body.get("status") != "success":
            raise ValueError(f"exemplar query failed: {body.get('error')} ({expr})")
        return [e["labels"] for series in body["data"] for e in series["exemplars"]]

    def wait_for(self, expr: str, timeout_s: float = 60) -> list[dict[str, Any]]:
        """Poll until `expr` returns a non-empty vector."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = self.query(expr)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.5)

    def __enter__(self) -> Prometheus:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


class Alertmanager(_Process):
    """`prometheus-alertmanager` routing every alert to one webhook URL."""

    def __init__(self, workdir: Path, webhook_url: str, config: dict[str, Any] | None = None):
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.address}"
        config = config or {
            "route": {
                "receiver": "test",
                "group_wait": "1s",
                "group_interval": "1s",
                "repeat_interval": "1h",
            },
            "receivers": [{"name": "test", "webhook_configs": [{"url": webhook_url}]}],
        }
        self.config_path = workdir / "alertmanager.yml"
        self.config_path.write_text(yaml.safe_dump(config))
        (workdir / "am-data").mkdir(exist_ok=True)
        super().__init__(
            [
                _binary("prometheus-alertmanager"),
                f"--config.file={self.config_path}",
                f"--storage.path={workdir / 'am-data'}",
                f"--web.listen-address={self.address}",
                "--cluster.listen-address=",
            ],
            workdir / "alertmanager.log",
            f"{self.url}/-/ready",
        )

    def __enter__(self) -> Alertmanager:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()
