"""Shared fixtures. Integration tests use real services started here, never mocks."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream.broker import EmbeddedBroker

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Kafka-protocol broker (tansu) on loopback for the whole session."""
    log = tmp_path_factory.mktemp("broker") / "tansu.log"
    with EmbeddedBroker(log_path=log) as running:
        yield running.address


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
