"""Where a benchmark run's data came from: a description, and sha256 of every file read.

A report is only comparable with another when both scored the same data, so each report
carries fingerprints: one per local data file, one of the responses file (tasks 2 and 3),
and one of the adapted items themselves. The items' fingerprint is the only one a hub
source has (`datasets` keeps the hub files in its cache, not where we can name them), and
it also catches two different files that adapt to the same items.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark.uxbench import HUB_REPO

_DATA_SUFFIXES = frozenset({".jsonl", ".json", ".parquet"})
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileDigest:
    path: str
    sha256: str
    bytes: int


@dataclass(frozen=True, slots=True)
class DataSource:
    """What a run read. `unmatched_responses` counts responses whose cid is not an item."""

    description: str
    files: tuple[FileDigest, ...]
    items_sha256: str
    responses: FileDigest | None = None
    unmatched_responses: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "files": [_digest_dict(f) for f in self.files],
            "items_sha256": self.items_sha256,
            "responses": None if self.responses is None else _digest_dict(self.responses),
            "unmatched_responses": self.unmatched_responses,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataSource:
        responses = data.get("responses")
        return cls(
            description=str(data["description"]),
            files=tuple(FileDigest(**f) for f in data.get("files", [])),
            items_sha256=str(data.get("items_sha256", "")),
            responses=None if responses is None else FileDigest(**responses),
            unmatched_responses=int(data.get("unmatched_responses", 0)),
        )


def _digest_dict(digest: FileDigest) -> dict[str, Any]:
    return {"path": digest.path, "sha256": digest.sha256, "bytes": digest.bytes}


def is_hub(source: str) -> bool:
    return source in ("hub", HUB_REPO)


def digest(path: str | os.PathLike[str]) -> FileDigest:
    sha = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            sha.update(chunk)
            size += len(chunk)
    return FileDigest(os.fspath(path), sha.hexdigest(), size)


def data_files(source: str, configs: Sequence[str], split: str = "test") -> list[Path]:
    """The local files a source contributes for `configs`, chosen as `benchmark.uxbench`
    chooses them (split-named files win inside a config directory); [] for the hub."""
    if is_hub(source):
        return []
    path = Path(source)
    if path.is_file():
        return [path]
    if not path.is_dir():
        return []
    found: list[Path] = []
    for config in configs:
        sub = path / config
        if sub.is_dir():
            files = _supported(sub)
            named = [f for f in files if f.stem == split or f.stem.startswith(f"{split}-")]
            found += named or files
        found += [f for f in _supported(path) if f.stem == config]
    return sorted(set(found)) or _supported(path)


def _supported(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in _DATA_SUFFIXES
    )


def describe(source: str, configs: Sequence[str], limit: int | None, split: str = "test") -> str:
    where = f"hub {HUB_REPO}" if is_hub(source) else f"local {source}"
    cut = "" if limit is None else f", first {limit} records per config"
    return f"{where} (configs {', '.join(configs)}; split {split}{cut})"


def fingerprint(rows: Iterable[Sequence[Any]]) -> str:
    """sha256 of JSON rows in a canonical form (sorted, so load order does not matter)."""
    lines = sorted(json.dumps(list(row), ensure_ascii=False, sort_keys=True) for row in rows)
    sha = hashlib.sha256()
    for line in lines:
        sha.update(line.encode("utf-8"))
        sha.update(b"\n")
    return sha.hexdigest()
