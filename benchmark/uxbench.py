"""Load UXBench (or a team's own data in its format) through `datasets`, then adapt it.

Sources:

- "hub" or "mengze-hong/UXBench": `datasets.load_dataset("mengze-hong/UXBench", config,
  split=split)` (needs network access to the hub; the data's licence forbids
  redistribution, so it is never copied into this repository);
- a local .jsonl / .json / .parquet file;
- a local directory laid out like the hub: `<dir>/<config>/*.jsonl|json|parquet`
  (files named after the split, e.g. `test.jsonl`, are preferred), or files directly
  in the directory when no config is given.

Local files are read directly (JSON lines or a JSON array; Parquet through pyarrow):
every malformed line is reported with its number, and nothing is cached or locked.
`datasets` serves only the hub. Adapters from records to scorer items live in
`benchmark.adapters` and are re-exported here.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

from benchmark.adapters import (
    DISLIKED,
    LIKED,
    RecoveryCandidate,
    Task1Item,
    Task2Item,
    Task3Item,
    response_text,
    task1_item,
    task2_item,
    task3_candidates,
    task3_item,
)
from benchmark.errors import RecordError, SourceError

__all__ = [
    "CONFIGS",
    "HUB_REPO",
    "TASK1_CONFIGS",
    "Task1Item",
    "Task2Item",
    "Task3Item",
    "load_records",
    "load_task1",
    "load_task2",
    "load_task3",
    "response_text",
    "task1_item",
    "task2_item",
    "task3_item",
]

log = logging.getLogger(__name__)

HUB_REPO = "mengze-hong/UXBench"
TASK1_CONFIGS = ("task1_judge_bad", "task1_judge_good")
CONFIGS = (*TASK1_CONFIGS, "task2_eval", "task3_recovery")
_DEFAULT_LABEL = {"task1_judge_bad": DISLIKED, "task1_judge_good": LIKED}
_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}

OnError = Literal["raise", "skip"]
Item = TypeVar("Item")


def _is_hub(source: str) -> bool:
    return source in ("hub", HUB_REPO)


Source = str | os.PathLike[str]


def load_records(
    source: Source, config: str | None = None, split: str = "test", limit: int | None = None
) -> list[dict[str, Any]]:
    """Raw records from the hub, a file or a directory (see the module docstring)."""
    source = os.fspath(source)
    if _is_hub(source):
        import datasets  # heavy, and only the hub needs it

        if config is None:
            raise SourceError(
                f"the hub dataset needs a config; known configs: {', '.join(CONFIGS)}"
            )
        hub_split = split if limit is None else f"{split}[:{limit}]"
        return list(datasets.load_dataset(HUB_REPO, config, split=hub_split).to_list())
    path = Path(source)
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = _files_in(path, config, split)
    else:
        raise SourceError(
            f"expected 'hub', {HUB_REPO!r}, a file or a directory; {source!r} does not exist"
        )
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for file in files:
        records += _read_local(file, problems)
    if problems:
        more = f" (and {len(problems) - MAX_SHOWN} more)" if len(problems) > MAX_SHOWN else ""
        raise SourceError(
            f"{len(problems)} malformed records: " + "; ".join(problems[:MAX_SHOWN]) + more
        )
    return records if limit is None else records[:limit]


MAX_SHOWN = 10  # malformed records named in one error


def _read_local(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    """The records of one local file; each malformed one is added to `problems` by line
    number and reason (never its text)."""
    if _builder(path) == "parquet":
        import pyarrow.parquet as pq

        try:
            return list(pq.read_table(path).to_pylist())
        except Exception as exc:  # pyarrow raises several types for a damaged file
            kind = type(exc).__name__
            raise SourceError(f"{path.name}: not a readable Parquet file ({kind})") from None
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() == ".json" and text.lstrip().startswith("["):
        try:
            whole = json.loads(text)
        except ValueError as exc:
            problems.append(f"{path.name}: invalid JSON at line {getattr(exc, 'lineno', '?')}")
            return []
        rows = [(i + 1, r) for i, r in enumerate(whole)]
        where = "item"
    else:
        rows = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except ValueError as exc:
                problems.append(f"{path.name}:{number}: invalid JSON ({type(exc).__name__})")
        where = "line"
    records = []
    for number, record in rows:
        if isinstance(record, dict):
            records.append(record)
        else:
            problems.append(
                f"{path.name}: {where} {number} is a {type(record).__name__}, not an object"
            )
    if not rows and not problems:
        problems.append(f"{path.name}: no records")
    return records


def _builder(path: Path) -> str:
    builder = _BUILDERS.get(path.suffix.lower())
    if builder is None:
        raise SourceError(f"expected a .jsonl, .json or .parquet file, got {path.name!r}")
    return builder


def _supported(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir() if p.is_file() and p.suffix.lower() in _BUILDERS)


def _files_in(directory: Path, config: str | None, split: str) -> list[Path]:
    if config is None:
        files = _supported(directory)
        if not files:
            configs = sorted(p.name for p in directory.iterdir() if p.is_dir())
            raise SourceError(
                f"{directory} holds no data files; pass a config (found: "
                f"{', '.join(configs) or 'none'})"
            )
        return files
    sub = directory / config
    if sub.is_dir():
        files = _supported(sub)
        named = [f for f in files if f.stem == split or f.stem.startswith(f"{split}-")]
        if named or files:
            return named or files
    flat = [f for f in _supported(directory) if f.stem == config]
    if flat:
        return flat
    configs = sorted(p.name for p in directory.iterdir() if p.is_dir())
    raise SourceError(
        f"no data for config {config!r} in {directory} (found configs: "
        f"{', '.join(configs) or 'none'})"
    )


def _adapt(
    records: Sequence[dict[str, Any]],
    adapt: Callable[[dict[str, Any]], Item],
    on_error: OnError,
    skipped: list[RecordError] | None,
    what: str,
) -> list[Item]:
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    items: list[Item] = []
    dropped = 0
    for record in records:
        try:
            items.append(adapt(record))
        except RecordError as exc:
            if on_error == "raise":
                raise
            dropped += 1
            if skipped is not None:
                skipped.append(exc)
    if dropped:
        log.warning("skipped %d malformed %s records of %d", dropped, what, len(records))
    return items


def _task1_configs(source: str, config: str | None) -> list[str | None]:
    # a config subdirectory or a flat <config>.jsonl both count as "hub-like"
    if config is not None:
        return [config]
    if _is_hub(source):
        return list(TASK1_CONFIGS)
    path = Path(source)
    if path.is_dir() and any(
        (path / c).is_dir() or any(path.glob(f"{c}.*")) for c in TASK1_CONFIGS
    ):
        return [c for c in TASK1_CONFIGS if (path / c).is_dir() or any(path.glob(f"{c}.*"))]
    return [None]


def load_task1(
    source: Source,
    *,
    config: str | None = None,
    split: str = "test",
    limit: int | None = None,
    on_error: OnError = "raise",
    skipped: list[RecordError] | None = None,
) -> list[Task1Item]:
    """Task-1 items. Without a config, the hub (or a hub-like directory) gives both
    task1_judge_bad and task1_judge_good; `limit` then applies per config. A record
    without ground_truth takes its label from its config.

    A malformed record raises RecordError (naming cid and field); with on_error="skip"
    it is left out, logged in a count, and appended to `skipped` when one is passed.
    """
    source = os.fspath(source)
    items: list[Task1Item] = []
    for cfg in _task1_configs(source, config):
        records = load_records(source, cfg, split, limit)
        default = _DEFAULT_LABEL.get(cfg or "")
        items += _adapt(
            records, partial(task1_item, default_label=default), on_error, skipped, "Task-1"
        )
    return items


def load_task2(
    source: Source,
    *,
    config: str | None = "task2_eval",
    split: str = "test",
    limit: int | None = None,
    on_error: OnError = "raise",
    skipped: list[RecordError] | None = None,
) -> list[Task2Item]:
    cfg = None if Path(source).is_file() else config
    return _adapt(load_records(source, cfg, split, limit), task2_item, on_error, skipped, "Task-2")


def load_task3(
    source: Source,
    *,
    config: str | None = "task3_recovery",
    split: str = "test",
    limit: int | None = None,
    on_error: OnError = "raise",
    skipped: list[RecordError] | None = None,
) -> list[Task3Item]:
    cfg = None if Path(source).is_file() else config
    return _adapt(load_records(source, cfg, split, limit), task3_item, on_error, skipped, "Task-3")


def load_task3_candidates(
    source: Source, *, split: str = "test", limit: int | None = None
) -> list[RecoveryCandidate]:
    """Labelled recovery attempts (benchmark.adapters.task3_candidates) from a file or a
    directory of files; `limit` counts records (contexts)."""
    records = load_records(source, None, split, limit)
    return [c for record in records for c in task3_candidates(record)]
