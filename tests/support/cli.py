"""Run the installed command line as a user would: a fresh process, no UXMON_* settings of
the test session's environment unless given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def uxmon(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # No width either: pytest-xdist's workers set COLUMNS=80, and help is rendered for a pipe.
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("UXMON_") and k not in ("COLUMNS", "LINES", "TERMINAL_WIDTH")
    }
    return subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        env={**clean, **env},
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
