"""Periodic validation inside the running service: benchmark the live scorers on a schedule.

Each run is a child process, `uxmon bench`, so a crash, an out-of-memory kill or a hang
of the benchmark never touches the worker; it is niced and pinned to a few cores (its
torch threads follow the affinity), so live scoring keeps the CPU it needs. A daemon
thread sleeps until the next run (an interval or a cron expression, UTC), runs the
configured scorers one after another, exports the report's metrics as gauges and keeps
the last few reports on disk. A failed run is counted and logged, never fatal.

Runs start `initial_delay_s` after the worker starts, whatever the schedule: the gauges
live in the worker's memory, and the corrected dissatisfaction rate needs them soon after
a deploy, not at the next cron time.
"""

from __future__ import annotations

import logging
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark.result import Report, load_report
from stream.metrics import Metrics

if TYPE_CHECKING:
    from scorer.protocol import Scorer
    from stream.settings import Settings

log = logging.getLogger("uxmon.validation")

# Report metrics exported per task (uxmon_benchmark_metric{metric=...}), when present.
EXPORTED_METRICS: dict[str, tuple[str, ...]] = {
    "task1": ("good_acc", "bad_acc", "avg_acc", "auroc", "ece", "n"),
    "task2": ("good_pct", "good_pct_valid", "n"),
    "task3": ("recovery_rate", "recovery_rate_valid", "n"),
}
KILL_GRACE_S = 5.0  # between SIGTERM and SIGKILL of a run that must stop


@dataclass(frozen=True, slots=True)
class Schedule:
    """When runs happen after the first: every `interval_s`, or at a cron expression's times."""

    interval_s: float
    cron: str | None = None

    def next_run(self, last_start: float, now: float) -> float:
        """Unix time of the next run. An interval counts from the last run's start (a run
        longer than the interval is followed at once); a cron skips the times it missed."""
        if self.cron is None:
            return max(now, last_start + self.interval_s)
        from croniter import croniter

        return float(croniter(self.cron, datetime.fromtimestamp(now, UTC)).get_next(float))

    def describe(self) -> str:
        return f"cron '{self.cron}' (UTC)" if self.cron else f"every {self.interval_s:g}s"


@dataclass(frozen=True, slots=True)
class Target:
    """One live scorer to validate."""

    spec: str  # what `uxmon bench --scorer` gets: a registered name or module.path:Factory
    name: str  # the scorer's own name: the `scorer` label of every uxmon metric
    version: str  # the live scorer's version, to notice when the validated one differs


@dataclass(frozen=True, slots=True)
class Plan:
    """What to validate, on which data, when and within which bounds."""

    data: str
    task: str
    targets: tuple[Target, ...]
    schedule: Schedule
    report_dir: Path
    initial_delay_s: float = 60.0
    timeout_s: float = 3600.0
    keep_reports: int = 10
    limit: int | None = None
    responses: Path | None = None
    cpus: int = 1  # 0 = no pinning
    nice: int = 10
    model_cache: Path | None = None


def live_scorers(settings: Settings) -> list[str]:
    """What the worker scores with: the judges, then the cascade's GRM when there is one."""
    return [*settings.scorers, *([settings.grm] if settings.grm else [])]


def plan_from_settings(settings: Settings, scorers: Sequence[Scorer]) -> Plan | None:
    """The validation plan of a worker, or None when no validation data is configured.

    `scorers` are the worker's scorers, built from `live_scorers(settings)` in that order.
    """
    s = settings
    if not s.validation_data:
        return None
    specs = live_scorers(s)
    by_spec: dict[str, Scorer] = {}
    if len(scorers) == len(specs):
        by_spec = dict(zip(specs, scorers, strict=True))
    wanted = s.validation_scorers or specs
    targets = []
    for spec in wanted:
        live = by_spec.get(spec)
        targets.append(
            Target(
                spec=spec,
                name=live.name if live is not None else spec,
                version=live.version if live is not None else "",
            )
        )
    return Plan(
        data=s.validation_data,
        task=s.validation_task,
        targets=tuple(targets),
        schedule=Schedule(s.validation_interval_s, s.validation_cron),
        report_dir=s.validation_report_dir or s.datadir / s.app_id / "validation",
        initial_delay_s=s.validation_initial_delay_s,
        timeout_s=s.validation_timeout_s,
        keep_reports=s.validation_keep_reports,
        limit=s.validation_limit,
        responses=s.validation_responses,
        cpus=s.validation_cpus,
        nice=s.validation_nice,
        model_cache=s.model_cache,
    )


def bench_command(plan: Plan, target: Target, out: Path) -> list[str]:
    """The `uxmon bench` command line of one run."""
    command = [
        sys.executable,
        "-m",
        "stream.cli",
        "bench",
        "--task",
        plan.task,
        "--data",
        plan.data,
        "--scorer",
        target.spec,
        "--out",
        str(out),
        "--no-progress",
    ]
    if plan.limit is not None:
        command += ["--limit", str(plan.limit)]
    if plan.responses is not None:
        command += ["--responses", str(plan.responses)]
    return command


def chosen_cpus(cpus: int) -> set[int]:
    """The cores a run is pinned to: the last `cpus` this process may use (all when 0)."""
    allowed = sorted(os.sched_getaffinity(0))
    return set(allowed if cpus <= 0 else allowed[-cpus:])


def safe_name(name: str) -> str:
    """A scorer name as a directory name (`pkg.mod:Factory` has a colon)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


class RunFailed(Exception):
    """A validation run that produced no usable report; the message is the reason."""


Command = Callable[[Plan, Target, Path], list[str]]


class Validator:
    """Runs the plan on a daemon thread; `stop()` ends the thread and any running child."""

    def __init__(self, plan: Plan, metrics: Metrics, *, command: Command = bench_command) -> None:
        self.plan = plan
        self.metrics = metrics
        self._command = command
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._exported: dict[str, tuple[str, set[str]]] = {}  # scorer -> (version, metrics)
        for target in plan.targets:  # counters exist at 0, so increase() works from start
            metrics.benchmark_failures.labels(target.name, plan.task)

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        if self._thread is not None:
            raise RuntimeError("the validator is already started")
        p = self.plan
        log.info(
            "periodic validation on %s of %s: scorers %s, %s, first run in %gs",
            p.task,
            p.data,
            ", ".join(t.name for t in p.targets),
            p.schedule.describe(),
            p.initial_delay_s,
        )
        self._thread = threading.Thread(target=self._loop, name="uxmon-validation", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 15.0) -> None:
        self._stopping.set()
        with self._lock:
            child = self._child
        if child is not None:
            _end(child)
        if self._thread is not None:
            self._thread.join(timeout_s)

    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _loop(self) -> None:
        due = time.time() + self.plan.initial_delay_s
        while not self._stopping.wait(max(0.0, due - time.time())):
            started = time.time()
            for target in self.plan.targets:
                if self._stopping.is_set():
                    return
                self.run_once(target)
            due = self.plan.schedule.next_run(started, time.time())

    # --- one run -------------------------------------------------------------------------

    def run_once(self, target: Target) -> bool:
        """Validate one scorer now; True when the gauges were updated. Never raises."""
        p = self.plan
        run_dir = p.report_dir / safe_name(target.name) / f"{p.task}-{_stamp()}"
        started = time.monotonic()
        try:
            report = self._run(target, run_dir)
        except Exception as exc:  # a failed run must never take the worker down
            elapsed = time.monotonic() - started
            if self._stopping.is_set():
                log.info("validation of %s stopped with the worker", target.name)
                return False
            reason = str(exc) if isinstance(exc, RunFailed) else type(exc).__name__
            self.metrics.benchmark_failures.labels(target.name, p.task).inc()
            self.metrics.benchmark_seconds.labels(target.name, p.task).set(elapsed)
            log.warning(
                "validation of %s on %s failed (%s) after %.1fs; log: %s",
                target.name,
                p.task,
                reason,
                elapsed,
                run_dir / "bench.log",
            )
            log.debug("last line of the failed run's log: %s", _last_line(run_dir / "bench.log"))
            return False
        finally:
            self._rotate(target)
        elapsed = time.monotonic() - started
        self._export(target, report, elapsed)
        return True

    def _run(self, target: Target, run_dir: Path) -> Report:
        p = self.plan
        run_dir.mkdir(parents=True, exist_ok=True)
        out = run_dir / "report.json"
        env = dict(os.environ)
        env["TOKENIZERS_PARALLELISM"] = "false"
        cpus = chosen_cpus(p.cpus)
        if p.cpus > 0:
            for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
                env[name] = str(len(cpus))
        if p.model_cache is not None:
            env["UXMON_MODEL_CACHE"] = str(p.model_cache)
        with (run_dir / "bench.log").open("wb") as bench_log:
            child = subprocess.Popen(
                self._command(p, target, out),
                stdin=subprocess.DEVNULL,
                stdout=bench_log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group: stop() ends all of it
            )
        with self._lock:
            self._child = child
        try:
            _bound(child.pid, cpus, p.nice)
            if self._stopping.is_set():  # stop() ran before the child was registered
                _end(child)
            try:
                code = child.wait(p.timeout_s)
            except subprocess.TimeoutExpired:
                raise RunFailed(f"timed out after {p.timeout_s:g}s") from None
        except BaseException:
            _end(child)  # whatever went wrong here, no run outlives its supervision
            raise
        finally:
            with self._lock:
                self._child = None
        if code != 0:
            raise RunFailed(f"exit code {code}")
        report = load_report(out)
        if report.task != p.task:
            raise RunFailed(f"expected a {p.task} report, got {report.task}")
        return report

    # --- results -------------------------------------------------------------------------

    def _export(self, target: Target, report: Report, elapsed: float) -> None:
        m = self.metrics
        task = self.plan.task
        previous_version, previous = self._exported.get(target.name, (None, set()))
        if previous_version is not None and previous_version != report.scorer_version:
            for metric in previous:  # one version per scorer and task, never two
                m.benchmark_metric.remove(target.name, previous_version, task, metric)
            previous = set()
        exported = set()
        for metric in EXPORTED_METRICS.get(task, ()):
            value = report.metrics.get(metric)
            if value is None or math.isnan(float(value)):
                if metric in previous:  # undefined this time: drop the stale value
                    m.benchmark_metric.remove(target.name, report.scorer_version, task, metric)
                continue
            m.benchmark_metric.labels(target.name, report.scorer_version, task, metric).set(
                float(value)
            )
            exported.add(metric)
        self._exported[target.name] = (report.scorer_version, exported)
        m.benchmark_last_success.labels(target.name, task).set(time.time())
        m.benchmark_seconds.labels(target.name, task).set(elapsed)
        headline = report.metrics.get(report.headline)
        log.info(
            "validated %s %s on %s: %s %s (n=%d) in %.1fs",
            target.name,
            report.scorer_version,
            task,
            report.headline,
            "n/a" if headline is None else f"{float(headline):.3f}",
            report.n,
            elapsed,
        )
        if target.version and target.version != report.scorer_version:
            log.warning(
                "validated %s version %s differs from the live version %s",
                target.name,
                report.scorer_version,
                target.version,
            )
        if report.errors:
            log.warning(
                "validation of %s: the scorer failed on some items (%s)",
                target.name,
                ", ".join(f"{k}={v}" for k, v in sorted(report.errors.items())),
            )

    def _rotate(self, target: Target) -> None:
        """Keep the newest `keep_reports` run directories of this scorer and task."""
        folder = self.plan.report_dir / safe_name(target.name)
        try:
            runs = sorted(
                p
                for p in folder.iterdir()
                if p.is_dir() and p.name.startswith(f"{self.plan.task}-")
            )
        except OSError:
            return
        for old in runs[: max(0, len(runs) - self.plan.keep_reports)]:
            shutil.rmtree(old, ignore_errors=True)


def start_validation(
    settings: Settings, scorers: Sequence[Scorer], metrics: Metrics
) -> Validator | None:
    """Start the worker's periodic validation; None (and a log line) when it is off."""
    plan = plan_from_settings(settings, scorers)
    if plan is None:
        log.info("periodic validation off (UXMON_VALIDATION_DATA is not set)")
        return None
    validator = Validator(plan, metrics)
    validator.start()
    return validator


def _stamp() -> str:
    # microseconds: two runs in one second (short test intervals) must not share a folder
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def _bound(pid: int, cpus: set[int], nice: int) -> None:
    """Pin and nice the child. Done from here, right after it started: `preexec_fn` is
    unsafe in a process with threads, and the child reads its affinity (torch's thread
    count) only once its imports are done, long after this."""
    try:
        os.sched_setaffinity(pid, cpus)
        os.setpriority(os.PRIO_PROCESS, pid, nice)
    except ProcessLookupError:
        pass  # it already exited; its exit code tells the rest
    except OSError as exc:  # e.g. a container forbids it: run unbounded rather than not at all
        log.warning("could not pin or nice the validation run: %s", type(exc).__name__)


def _end(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, SIGKILL it if it lingers."""
    if child.poll() is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGTERM)
        child.wait(KILL_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    except ProcessLookupError:
        pass


def _last_line(path: Path) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""
