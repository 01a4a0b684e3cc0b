"""The `uxmon` command's boundary, run as a user runs it (a child process): mistakes end in
one line and an exit code, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def uxmon(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("UXMON_")}
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        env={**clean, **env},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_version() -> None:
    done = uxmon("--version")
    assert done.returncode == 0 and done.stdout.startswith("uxmon ")


@pytest.mark.parametrize(
    ("args", "env", "code", "says"),
    [
        (["serve"], {"UXMON_SCORERS": "nope"}, 2, "unknown scorer 'nope'; known scorers:"),
        (["serve"], {"UXMON_GRM": "nope"}, 2, "unknown scorer 'nope'"),
        (["serve", "--broker", "x"], {}, 2, "broker (command line): "),
        (["dashboards", "render", "--out", "/proc/uxmon/x"], {}, 1, "'/proc/uxmon'"),
        (  # before any scoring: a long run must not fail at its very end
            [
                "bench",
                "--task",
                "task1",
                "--data",
                "tests/data/uxbench",
                "--scorer",
                "ux_judge",
                "--out",
                "/nope/r.json",
            ],
            {},
            2,
            "--out: /nope is not a directory",
        ),
    ],
)
def test_a_mistake_is_one_line_and_an_exit_code(
    args: list[str], env: dict[str, str], code: int, says: str
) -> None:
    done = uxmon(*args, **env)
    assert done.returncode == code
    assert says in done.stderr
    assert "Traceback" not in done.stderr and "╭" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_a_mistyped_variable_is_warned_about_with_the_likely_one() -> None:
    done = uxmon("serve", "--broker", "x", UXMON_BATCHMAX="5")
    assert "UXMON_BATCHMAX is not a uxmon setting and is ignored (did you mean " in done.stderr
    assert "UXMON_BATCH_MAX?)" in done.stderr


def test_an_unreachable_broker_is_named_within_seconds(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text('{"conversation_id": "c"}\n')
    for args, env in (
        (["replay", str(events)], {"UXMON_BROKER": "127.0.0.1:1"}),  # replay reads settings
        (["serve", "--broker", "127.0.0.1:1"], {}),  # checked before any model loads
    ):
        done = uxmon(*args, **env)
        assert done.returncode == 1, done.stderr
        assert "no Kafka broker answers at 127.0.0.1:1" in done.stderr
        assert "Traceback" not in done.stderr
