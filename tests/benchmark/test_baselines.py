"""CI's regression gate: the shipped scorers against their committed baselines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "benchmark" / "baselines" / "ux_judge.task1.json"
GRM_BASELINE = ROOT / "benchmark" / "baselines" / "grm.task1.json"
# The GRM scores ~1 item/s on 2 shared cores: its baseline and gate use the first records
# of the held-out set, so the gate run stays near two minutes.
GRM_LIMIT = 150
HELDOUT = ROOT / "benchmark" / "data" / "task1_heldout.jsonl"


def uxmon(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )


def bench_and_gate(scorer: str, baseline: Path, out: Path, *options: str) -> dict:
    """Run `uxmon bench` on the held-out set, gate it against `baseline`; the report."""
    run = uxmon(
        "bench", "--task", "task1", "--data", str(HELDOUT), "--scorer", scorer,
        *options, "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    gate = uxmon("gate", "--baseline", str(baseline), "--candidate", str(out))
    assert gate.returncode == 0, gate.stdout[-3000:]
    report: dict = json.loads(out.read_text())
    return report


@pytest.mark.models
def test_the_default_ux_judge_does_not_regress_against_its_baseline(tmp_path: Path) -> None:
    report = bench_and_gate("ux_judge", BASELINE, tmp_path / "ux_judge.task1.json")
    assert report["n"] == 800 and report["scorer"] == "ux_judge"


@pytest.mark.models
def test_the_bundled_grm_does_not_regress_against_its_baseline(tmp_path: Path) -> None:
    out = tmp_path / "grm.task1.json"
    report = bench_and_gate("grm", GRM_BASELINE, out, "--limit", str(GRM_LIMIT))
    baseline = json.loads(GRM_BASELINE.read_text())
    assert report["scorer"] == "grm" and report["n"] == baseline["n"] == GRM_LIMIT
    # the gate pairs on cids: the limited run must hold exactly the baseline's items
    assert {i["cid"] for i in report["items"]} == {i["cid"] for i in baseline["items"]}
    assert report["source"]["items_sha256"] == baseline["source"]["items_sha256"]
