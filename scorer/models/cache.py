"""Where prepared models live, and how bundled files are found without importing their packages."""

from __future__ import annotations

import hashlib
import os
from importlib import metadata
from pathlib import Path

from scorer.errors import ModelMissingError

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "uxmon" / "models"


def cache_dir(override: str | Path | None = None) -> Path:
    """The model cache: `override`, else $UXMON_MODEL_CACHE, else ~/.cache/uxmon/models."""
    path = Path(override or os.environ.get("UXMON_MODEL_CACHE") or DEFAULT_CACHE)
    path.mkdir(parents=True, exist_ok=True)
    return path


def distribution_file(dist: str, version: str, relative: str, install_hint: str) -> Path:
    """Path of `relative` inside installed distribution `dist`, checked to be `version`.

    Reads the installed file list through importlib.metadata, so the carrier package is
    never imported (some carriers are unrelated packages that merely hold the bytes).
    """
    try:
        found = metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        raise ModelMissingError(f"{dist}=={version} is not installed; {install_hint}") from None
    if found.version != version:
        raise ModelMissingError(
            f"{dist} {found.version} is installed but {version} is required; {install_hint}"
        )
    for entry in found.files or ():
        if str(entry).replace("\\", "/") == relative:
            path = Path(str(found.locate_file(entry)))
            if path.is_file():
                return path
    raise ModelMissingError(f"{dist}=={version} is installed but has no {relative}; {install_hint}")


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()
