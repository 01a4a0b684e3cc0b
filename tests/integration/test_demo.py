"""The README's first command, run headless for a few seconds."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from stream.commands.demo import AHEAD, CHUNK

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
    assert "uxmon inspect" in result.stdout and "uxmon dashboards" in result.stdout
    scored = [int(n) for n in re.findall(r"scored=(\d+)", result.stdout)]
    # How many it scores in 30 s is the machine's speed (35 on a loaded 2-core CI machine,
    # where the old floor of 50 failed): a benchmark's figure, not this test's.
    assert scored and scored[-1] > 0, result.stdout[-2000:]
    assert scored == sorted(scored)  # live numbers only grow
    reactions = [int(n) for n in re.findall(r"reactions=(\d+)", result.stdout)]
    assert reactions and reactions[-1] > 0, result.stdout[-2000:]  # users' next messages read

    # Paced to the worker: --rate 100 is more than two cores score, yet the replay never
    # runs more than a window ahead (a chunk may start just under the limit; the line's
    # counts are read a moment apart), so events do not pile up in the topic.
    for sent, consumed in re.findall(r"sent=(\d+) consumed=(\d+)", result.stdout):
        assert int(sent) - int(consumed) <= AHEAD + 2 * CHUNK, result.stdout[-2000:]
    # Unpaced, with the GRM on every recovery reply, this mean passed 15 s within 30 s and
    # kept growing; paced it stays near 4 s. The bound leaves room for a busy machine.
    (mean,) = re.findall(r"final: .*mean_event_to_score=([\d.]+)s", result.stdout)
    assert float(mean) < 10, result.stdout[-2000:]
