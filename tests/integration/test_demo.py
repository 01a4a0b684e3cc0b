"""The README's first command, run headless for a few seconds."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_demo_scores_sample_traffic() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "stream.cli",
            "demo",
            "--headless",
            "--duration",
            "30",
            "--metrics-port",
            "0",
            "--rate",
            "100",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "metrics at http://127.0.0.1:" in result.stdout
    scored = [int(n) for n in re.findall(r"scored=(\d+)", result.stdout)]
    assert scored and scored[-1] > 50, result.stdout[-2000:]
    assert scored == sorted(scored)  # live numbers only grow
    reactions = [int(n) for n in re.findall(r"reactions=(\d+)", result.stdout)]
    assert reactions and reactions[-1] > 0, result.stdout[-2000:]  # users' next messages read
