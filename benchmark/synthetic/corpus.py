"""Everything the generator produces, built in memory from one seed, and written out."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmark.synthetic import fixtures, traffic
from benchmark.synthetic.task1 import build_task1

DEFAULT_SEED = 20261120
SEED_PER_LABEL = 1300
HELDOUT_PER_LABEL = 400
CONVERSATIONS = 240
FIXTURE_PER_CONFIG = 130


@dataclass(frozen=True, slots=True)
class Corpus:
    seed: list[dict[str, Any]]  # trains the UX-Judge classifier, calibrates the GRM
    heldout: list[dict[str, Any]]  # evaluation only: disjoint topics, different seed
    fixtures: dict[str, list[dict[str, Any]]]  # hub config -> records
    malformed: list[dict[str, Any]]
    traffic: list[dict[str, Any]]


def build(
    seed: int = DEFAULT_SEED,
    *,
    seed_per_label: int = SEED_PER_LABEL,
    heldout_per_label: int = HELDOUT_PER_LABEL,
    conversations: int = CONVERSATIONS,
    fixture_per_config: int = FIXTURE_PER_CONFIG,
) -> Corpus:
    return Corpus(
        seed=build_task1("seed", seed_per_label, seed, min_per_dim=25),
        heldout=build_task1("heldout", heldout_per_label, seed + 1000, min_per_dim=12),
        fixtures={
            **fixtures.task1_fixtures(seed + 2000, fixture_per_config),
            "task2_eval": fixtures.task2_fixtures(seed + 2001, fixture_per_config),
            "task3_recovery": fixtures.task3_fixtures(seed + 2002, fixture_per_config),
        },
        malformed=fixtures.malformed(),
        traffic=traffic.build_traffic(seed + 3000, conversations),
    )


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8", newline="\n") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
            n += 1
    return n


@dataclass(frozen=True, slots=True)
class Layout:
    out_dir: Path
    fixtures_dir: Path
    traffic_path: Path

    @property
    def seed_file(self) -> Path:
        return self.out_dir / "task1_seed.jsonl"

    @property
    def heldout_file(self) -> Path:
        return self.out_dir / "task1_heldout.jsonl"

    def fixture_file(self, config: str) -> Path:
        return self.fixtures_dir / "uxbench" / config / "test.jsonl"

    @property
    def malformed_file(self) -> Path:
        return self.fixtures_dir / "uxbench_malformed.jsonl"


def write(corpus: Corpus, layout: Layout) -> dict[Path, int]:
    written = {
        layout.seed_file: write_jsonl(layout.seed_file, corpus.seed),
        layout.heldout_file: write_jsonl(layout.heldout_file, corpus.heldout),
        layout.malformed_file: write_jsonl(layout.malformed_file, corpus.malformed),
        layout.traffic_path: write_jsonl(layout.traffic_path, corpus.traffic),
    }
    for config, rows in corpus.fixtures.items():
        written[layout.fixture_file(config)] = write_jsonl(layout.fixture_file(config), rows)
    return written
