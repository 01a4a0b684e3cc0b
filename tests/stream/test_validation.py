"""Periodic validation: schedule, settings, and a run's report turned into gauges.

Runs here are real child processes, but of tiny stand-in commands (copy a report, exit
with an error, hang): no model is loaded. tests/integration/test_validation.py runs the
real `uxmon bench` inside a real worker.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from stream.metrics import (
    BENCHMARK_FAILURES,
    BENCHMARK_LAST_SUCCESS,
    BENCHMARK_METRIC,
    BENCHMARK_SECONDS,
    Metrics,
)
from stream.settings import Settings
from stream.validation import (
    Command,
    Plan,
    Schedule,
    Target,
    Validator,
    bench_command,
    plan_from_settings,
)
from tests.support.scorers import Keyword

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "tests" / "data" / "sample_bench_report.json"  # a real `uxmon bench` report
UX_JUDGE = Target(spec="ux_judge", name="ux_judge", version="")


def ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def plan(tmp_path: Path, **changes: object) -> Plan:
    fields: dict[str, object] = {
        "data": "tests/data/synthetic_task1.jsonl",
        "task": "task1",
        "targets": (UX_JUDGE,),
        "schedule": Schedule(3600),
        "report_dir": tmp_path / "reports",
        "initial_delay_s": 0.0,
        "timeout_s": 30.0,
    }
    fields.update(changes)
    return Plan(**fields)  # type: ignore[arg-type]


def python(code: str, *args: str) -> list[str]:
    return [sys.executable, "-c", code, *args]


def copies(report: Path) -> Command:
    """A stand-in for `uxmon bench` that writes `report` as its result."""
    return lambda _plan, _target, out: python(
        "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[2])", str(report), str(out)
    )


def value(metrics: Metrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels)


# --- schedule ----------------------------------------------------------------------------


def test_an_interval_counts_from_the_last_start_and_never_lies_in_the_past() -> None:
    every_minute = Schedule(60)
    assert every_minute.next_run(last_start=1000, now=1010) == 1060
    assert every_minute.next_run(last_start=1000, now=1200) == 1200  # the run took too long


def test_a_cron_gives_its_next_time_in_utc_and_skips_missed_ones() -> None:
    nightly = Schedule(60, cron="0 3 * * *")
    assert nightly.next_run(ts("2026-01-01T00:00:00"), ts("2026-01-01T01:00:00")) == ts(
        "2026-01-01T03:00:00"
    )
    assert nightly.next_run(ts("2026-01-01T02:59:00"), ts("2026-01-01T04:00:00")) == ts(
        "2026-01-02T03:00:00"
    )
    assert Schedule(60, cron="*/5 * * * *").next_run(0, ts("2026-01-01T00:01:00")) == ts(
        "2026-01-01T00:05:00"
    )


# --- settings ----------------------------------------------------------------------------


def test_validation_is_off_unless_data_is_configured() -> None:
    assert plan_from_settings(Settings(), [Keyword()]) is None


def test_a_bad_cron_fails_at_start_naming_the_field() -> None:
    with pytest.raises(ValidationError) as error:
        Settings(validation_cron="61 * * * *")
    (only,) = error.value.errors()
    assert only["loc"] == ("validation_cron",)
    assert "61 * * * *" in only["msg"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"validation_task": "task9"}, "task1, task2, task3"),
        ({"scorers": ["ux_judge"], "grm": "", "validation_scorers": "grm"}, "live scorers"),
        ({"validation_data": "hub", "validation_task": "task3"}, "validation_responses"),
        ({"validation_interval_s": 0}, "greater than 0"),
        ({"validation_nice": 20}, "less than or equal to 19"),
    ],
)
def test_bad_validation_settings_fail(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(**settings)  # type: ignore[arg-type]


def test_the_plan_validates_the_chosen_live_scorers_by_their_own_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("UXMON_SCORERS", "ux_judge")
    monkeypatch.setenv("UXMON_GRM", "tests.support.scorers:Keyword")  # the cascade's GRM
    monkeypatch.setenv("UXMON_VALIDATION_SCORERS", "tests.support.scorers:Keyword")
    monkeypatch.setenv("UXMON_VALIDATION_DATA", "some.jsonl")
    monkeypatch.setenv("UXMON_VALIDATION_CRON", "0 3 * * *")
    monkeypatch.setenv("UXMON_VALIDATION_LIMIT", "20")
    monkeypatch.setenv("UXMON_DATADIR", str(tmp_path))
    monkeypatch.setenv("UXMON_APP_ID", "app")
    settings = Settings()
    judge, grm = Keyword(), Keyword()
    grm.version = "live-7"

    chosen = plan_from_settings(settings, [judge, grm])  # as the worker built them

    assert chosen is not None
    assert chosen.targets == (
        Target(spec="tests.support.scorers:Keyword", name="keyword", version="live-7"),
    )
    assert chosen.schedule == Schedule(86_400.0, "0 3 * * *")
    assert chosen.report_dir == tmp_path / "app" / "validation"
    command = bench_command(chosen, chosen.targets[0], tmp_path / "r.json")
    assert command[1:] == [
        "-m",
        "stream.cli",
        "bench",
        "--task",
        "task1",
        "--data",
        "some.jsonl",
        "--scorer",
        "tests.support.scorers:Keyword",
        "--out",
        str(tmp_path / "r.json"),
        "--no-progress",
        "--limit",
        "20",
    ]


# --- one run -----------------------------------------------------------------------------


def test_a_successful_run_exports_the_report_as_gauges(tmp_path: Path) -> None:
    metrics = Metrics()
    report = json.loads(BASELINE.read_text())
    validator = Validator(plan(tmp_path), metrics, command=copies(BASELINE))

    before = time.time()
    assert validator.run_once(UX_JUDGE)

    version = report["scorer_version"]
    for metric in ("good_acc", "bad_acc", "avg_acc", "auroc", "ece", "n"):
        labels = {"scorer": "ux_judge", "version": version, "task": "task1", "metric": metric}
        assert value(metrics, BENCHMARK_METRIC, **labels) == pytest.approx(
            report["metrics"][metric]
        )
    exported = {s.labels["metric"] for f in metrics.benchmark_metric.collect() for s in f.samples}
    assert exported == {"good_acc", "bad_acc", "avg_acc", "auroc", "ece", "n"}
    last = value(metrics, BENCHMARK_LAST_SUCCESS, scorer="ux_judge", task="task1")
    assert last is not None and before <= last <= time.time()
    seconds = value(metrics, BENCHMARK_SECONDS, scorer="ux_judge", task="task1")
    assert seconds is not None and 0 < seconds < 30
    assert value(metrics, BENCHMARK_FAILURES, scorer="ux_judge", task="task1") == 0
    (run,) = (tmp_path / "reports" / "ux_judge").iterdir()
    assert (run / "report.json").read_text() == BASELINE.read_text()


def test_a_failed_run_is_counted_and_logged_without_its_output(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    metrics = Metrics()
    secret = "用户说的话 user text"
    failing = python("import sys; print(sys.argv[1], file=sys.stderr); sys.exit(3)", secret)
    validator = Validator(plan(tmp_path), metrics, command=lambda *_: failing)

    with caplog.at_level(logging.DEBUG, logger="uxmon.validation"):
        assert not validator.run_once(UX_JUDGE)

    assert value(metrics, BENCHMARK_FAILURES, scorer="ux_judge", task="task1") == 1
    assert value(metrics, BENCHMARK_LAST_SUCCESS, scorer="ux_judge", task="task1") is None
    assert not list(metrics.benchmark_metric.collect()[0].samples)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "exit code 3" in warnings[0]
    assert secret not in warnings[0]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(secret in line for line in debug)  # only the last line, only at DEBUG


def test_a_run_over_its_timeout_is_killed_and_counted(tmp_path: Path) -> None:
    metrics = Metrics()
    pid_file = tmp_path / "pid"
    hang = python(
        "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)",
        str(pid_file),
    )
    validator = Validator(plan(tmp_path, timeout_s=1.0), metrics, command=lambda *_: hang)

    started = time.monotonic()
    assert not validator.run_once(UX_JUDGE)

    assert time.monotonic() - started < 10
    assert value(metrics, BENCHMARK_FAILURES, scorer="ux_judge", task="task1") == 1
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_an_unreadable_report_is_a_failure(tmp_path: Path) -> None:
    metrics = Metrics()
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    validator = Validator(plan(tmp_path), metrics, command=copies(junk))

    assert not validator.run_once(UX_JUDGE)
    assert value(metrics, BENCHMARK_FAILURES, scorer="ux_judge", task="task1") == 1


def test_a_new_scorer_version_replaces_the_old_series(tmp_path: Path) -> None:
    metrics = Metrics()
    report = json.loads(BASELINE.read_text())
    old_version = report["scorer_version"]
    report["scorer_version"] = "next-version"
    report["metrics"]["auroc"] = None  # undefined this time
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(report))

    results = [BASELINE, newer]
    validator = Validator(
        plan(tmp_path), metrics, command=lambda *args: copies(results.pop(0))(*args)
    )
    assert validator.run_once(UX_JUDGE)
    assert validator.run_once(UX_JUDGE)

    series = {
        (s.labels["version"], s.labels["metric"])
        for f in metrics.benchmark_metric.collect()
        for s in f.samples
    }
    assert ("next-version", "avg_acc") in series
    assert ("next-version", "auroc") not in series
    assert not {m for v, m in series if v == old_version} & {"good_acc", "avg_acc", "auroc"}


def test_only_the_newest_reports_are_kept(tmp_path: Path) -> None:
    validator = Validator(plan(tmp_path, keep_reports=2), Metrics(), command=copies(BASELINE))
    for _ in range(4):
        validator.run_once(UX_JUDGE)
    runs = sorted(p.name for p in (tmp_path / "reports" / "ux_judge").iterdir())
    assert len(runs) == 2


def test_a_run_is_niced_and_pinned(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    probe = python(
        "import json, os, sys, time; time.sleep(0.5); json.dump("
        "[os.getpriority(os.PRIO_PROCESS, 0), sorted(os.sched_getaffinity(0)), "
        "os.environ.get('OMP_NUM_THREADS')], open(sys.argv[1], 'w')); sys.exit(1)",
        str(seen),
    )
    validator = Validator(plan(tmp_path, cpus=1, nice=7), Metrics(), command=lambda *_: probe)

    validator.run_once(UX_JUDGE)

    nice, cores, threads = json.loads(seen.read_text())
    assert nice == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 7)
    assert cores == [max(os.sched_getaffinity(0))]
    assert threads == "1"


# --- the thread --------------------------------------------------------------------------


def test_runs_repeat_on_the_schedule_until_stopped(tmp_path: Path) -> None:
    metrics = Metrics()
    validator = Validator(
        plan(tmp_path, schedule=Schedule(0.2), keep_reports=100),
        metrics,
        command=copies(BASELINE),
    )
    validator.start()
    try:
        deadline = time.monotonic() + 30
        runs: list[Path] = []
        while len(runs) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
            folder = tmp_path / "reports" / "ux_judge"
            if folder.exists():
                runs = [p for p in folder.iterdir() if (p / "report.json").exists()]
    finally:
        validator.stop()
    assert len(runs) >= 3
    assert value(metrics, BENCHMARK_FAILURES, scorer="ux_judge", task="task1") == 0


def test_stop_ends_a_running_child_without_counting_a_failure(tmp_path: Path) -> None:
    metrics = Metrics()
    pid_file = tmp_path / "pid"
    hang = python(
        "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)",
        str(pid_file),
    )
    validator = Validator(plan(tmp_path, timeout_s=600), metrics, command=lambda *_: hang)
    validator.start()
    deadline = time.monotonic() + 20
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)

    started = time.monotonic()
    validator.stop()

    assert time.monotonic() - started < 10
    assert not validator.running()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
    assert value(metrics, BENCHMARK_FAILURES, scorer="ux_judge", task="task1") == 0
