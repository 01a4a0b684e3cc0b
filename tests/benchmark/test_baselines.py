"""CI's regression gate: the shipped default scorer against its committed baseline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "benchmark" / "baselines" / "ux_judge.task1.json"
HELDOUT = ROOT / "benchmark" / "data" / "task1_heldout.jsonl"


def uxmon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )


@pytest.mark.models
def test_the_default_ux_judge_does_not_regress_against_its_baseline(tmp_path: Path) -> None:
    candidate = tmp_path / "ux_judge.task1.json"
    run = uxmon(
        "bench",
        "--task",
        "task1",
        "--data",
        str(HELDOUT),
        "--scorer",
        "ux_judge",
        "--out",
        str(candidate),
        "--no-progress",
    )
    assert run.returncode == 0, run.stderr[-2000:]

    gate = uxmon("gate", "--baseline", str(BASELINE), "--candidate", str(candidate))

    assert gate.returncode == 0, gate.stdout[-3000:]
    report = json.loads(candidate.read_text())
    assert report["n"] == 800 and report["scorer"] == "ux_judge"
