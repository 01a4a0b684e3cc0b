from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from stream.local import LocalWorker
from tests.support.services import worker as spawn_worker

# The scorer the integration tests run: the real default unless a developer overrides it.
TEST_SCORER = os.environ.get("UXMON_TEST_SCORER", "ux_judge")


@pytest.fixture
def names() -> dict[str, str]:
    """Fresh topic names and app id per test: tests share one broker, never its state."""
    tag = uuid.uuid4().hex[:8]
    return {
        "app_id": f"uxmon-{tag}",
        "turns_topic": f"turns-{tag}",
        "scores_topic": f"scores-{tag}",
        "dlq_topic": f"dlq-{tag}",
    }


@pytest.fixture
def start_worker(
    broker: str, names: dict[str, str], workdir: Path
) -> Iterator[Callable[..., LocalWorker]]:
    started: list[LocalWorker] = []

    def start(**settings: Any) -> LocalWorker:
        merged = {
            "scorers": TEST_SCORER,
            "grm": "",  # the GRM only where a test is about it: it costs ~6 s and 1.5 GB
            **{k: v for k, v in names.items() if k != "app_id"},
            **settings,
        }
        running = spawn_worker(broker, names["app_id"], workdir, **merged).start()
        started.append(running)
        running.wait_ready()
        return running

    yield start
    for running in started:
        running.stop()
