"""Provisioning of the bundled Qwen GRM weights: locate, assemble, verify, convert once."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import scorer.models.qwen as qwen
from scorer.errors import ModelMissingError


def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three small parts, with the pinned size and hash switched to theirs."""
    parts = []
    for i, chunk in enumerate((b"GGUF", b"-middle-", b"end")):
        part = tmp_path / f"part{i:02d}.bin"
        part.write_bytes(chunk)
        parts.append(part)
    whole = b"GGUF-middle-end"
    monkeypatch.setattr(qwen, "GGUF_SIZE", len(whole))
    monkeypatch.setattr(qwen, "GGUF_SHA256", hashlib.sha256(whole).hexdigest())
    monkeypatch.setattr(qwen, "carrier_files", lambda: parts)
    return parts


def test_carrier_parts_are_found_without_importing_them() -> None:
    import sys

    parts = qwen.carrier_files()
    assert [p.name for p in parts] == [f"part{i:02d}.bin" for i in range(1, 7)]
    assert sum(p.stat().st_size for p in parts) == qwen.GGUF_SIZE
    assert not any(name.startswith("pandas_sns") for name in sys.modules)


def test_missing_carrier_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(qwen, "CARRIER_PARTS", (("uxmon-no-such-carrier", "x/part01.bin"),))
    with pytest.raises(ModelMissingError, match=r"pip install 'uxmon\[grm\]'"):
        qwen.carrier_files()


def test_assembly_checks_size_and_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts = fake_parts(tmp_path, monkeypatch)
    target = tmp_path / "model.gguf"
    assert qwen.assemble_gguf(target, parts) == qwen.GGUF_SHA256
    assert target.read_bytes() == b"GGUF-middle-end"

    with pytest.raises(qwen.BundleIntegrityError, match="bytes, expected"):
        qwen.assemble_gguf(target, parts[:2])
    parts[1].write_bytes(b"-MIDDLE-")  # same size, other bytes
    with pytest.raises(qwen.BundleIntegrityError, match="sha256") as info:
        qwen.assemble_gguf(target, parts)
    assert "force-reinstall" in str(info.value)
    assert isinstance(info.value, ModelMissingError)


def test_prepare_is_atomic_and_then_a_no_op(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_parts(tmp_path, monkeypatch)
    cache = tmp_path / "cache"

    def broken(gguf: Path, out: Path) -> None:
        out.mkdir()
        (out / "config.json").write_text("{}")
        raise RuntimeError("conversion died")

    monkeypatch.setattr(qwen, "_convert", broken)
    with pytest.raises(RuntimeError):
        qwen.prepare_qwen(cache)
    leftovers = [p.name for p in cache.iterdir() if not p.name.endswith(".lock")]
    assert leftovers == []  # no half-written model, no stray GGUF

    calls: list[Path] = []

    def convert(gguf: Path, out: Path) -> None:
        calls.append(gguf)
        out.mkdir()
        for name in ("config.json", "model.safetensors"):
            (out / name).write_text("x")

    monkeypatch.setattr(qwen, "_convert", convert)
    folder = qwen.prepare_qwen(cache)
    manifest = json.loads((folder / qwen.MANIFEST_NAME).read_text())
    assert manifest["upstream"]["license"] == "Apache-2.0"
    assert manifest["gguf_sha256"] == qwen.GGUF_SHA256
    assert not (folder / "model.gguf").exists()
    assert qwen.prepare_qwen(cache) == folder and len(calls) == 1  # re-run: nothing to do
    qwen.prepare_qwen(cache, force=True)
    assert len(calls) == 2


@pytest.mark.models
def test_assembled_gguf_has_the_pinned_hash(tmp_path: Path) -> None:
    target = tmp_path / "model.gguf"
    digest = qwen.assemble_gguf(target)
    assert digest == "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
    assert target.stat().st_size == 491_400_064


@pytest.mark.models
def test_prepared_folder_is_bf16_and_described() -> None:
    folder = qwen.prepare_qwen()
    manifest = qwen.read_manifest(folder)
    assert manifest is not None and manifest["dtype"] == "bfloat16"
    config = json.loads((folder / "config.json").read_text())
    assert "quantization_config" not in config and config["dtype"] == "bfloat16"
    assert (folder / "tokenizer.json").is_file()
