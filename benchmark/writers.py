"""The multi-writer corpus: UXBench-shaped records written by hand by independent writers.

Every record names its `writer`. Quality is measured only across writers (train on some,
test on another: `benchmark.crosswriter`), because records by one writer share topics,
phrasing and habits that a model can learn without learning the task.

Layout (`benchmark/data/writers/` is the bundled corpus; a team can add its own):

    <root>/task1/<writer>.jsonl   Task-1 records + `writer`, `lang`, `pair` (contrastive
                                  pairs: same context and query, one liked, one disliked)
    <root>/task3/<writer>.jsonl   Task-3 records + `writer`, `lang`, `fixing_reply`,
                                  `non_fixing_reply` (two recovery attempts, one that fixes
                                  the failure and one that does not)

`check_task1` measures what must hold for the records to be evidence: labels balanced per
writer, reply length not giving the label away, no giveaway words, enough contrastive
pairs and multi-turn histories.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from benchmark.adapters import LIKED, Task1Item, Task3Item, task1_item, task3_item
from benchmark.errors import RecordError, SourceError
from benchmark.metrics import auroc

T = TypeVar("T")


def bundled_corpus() -> Path:
    """The corpus that ships with uxmon (written for it by independent writers)."""
    return Path(str(resources.files("benchmark") / "data" / "writers"))


@dataclass(frozen=True, slots=True)
class Written1:
    """A Task-1 item and who wrote it."""

    item: Task1Item
    writer: str
    lang: str
    pair: str | None  # contrastive pair id, shared by the liked and the disliked record


@dataclass(frozen=True, slots=True)
class Written3:
    """A Task-3 context with two attempts to recover: one fixes the failure, one does not."""

    item: Task3Item  # reply "" (use `attempts`)
    writer: str
    lang: str
    fixing: str
    non_fixing: str

    def attempts(self) -> tuple[Task3Item, Task3Item]:
        """(the fixing attempt, the non-fixing one) as scorable recovery items."""
        return self.item.with_reply(self.fixing), self.item.with_reply(self.non_fixing)


def _records(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise SourceError(f"{path}:{number}: not JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise SourceError(f"{path}:{number}: expected a JSON object")
            yield number, record


def _files(root: Path, task: str) -> list[Path]:
    folder = root / task
    files = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
    if not files:
        raise SourceError(f"no {task}/<writer>.jsonl files under {root}")
    return files


def _writer(record: dict[str, Any], path: Path, number: int) -> tuple[str, str]:
    writer, lang = record.get("writer"), record.get("lang")
    if not isinstance(writer, str) or not writer:
        raise SourceError(f"{path}:{number}: expected a `writer` name")
    if writer != path.stem:
        raise SourceError(f"{path}:{number}: writer {writer!r} in the file of {path.stem!r}")
    return writer, lang if isinstance(lang, str) else ""


def _written(
    root: Path | None, task: str, build: Callable[[dict[str, Any], str, str], T]
) -> list[T]:
    """`build(record, writer, lang)` for every record of a corpus task, in file order; a
    bad record names its file and line."""
    out = []
    for path in _files(root or bundled_corpus(), task):
        for number, record in _records(path):
            writer, lang = _writer(record, path, number)
            try:
                out.append(build(record, writer, lang))
            except RecordError as exc:
                raise SourceError(f"{path}:{number}: {exc}") from None
    return out


def _written1(record: dict[str, Any], writer: str, lang: str) -> Written1:
    pair = record.get("pair")
    return Written1(task1_item(record), writer, lang, pair if isinstance(pair, str) else None)


def _written3(record: dict[str, Any], writer: str, lang: str) -> Written3:
    item = task3_item(record)
    fixing, non_fixing = record.get("fixing_reply"), record.get("non_fixing_reply")
    if not isinstance(fixing, str) or not isinstance(non_fixing, str):
        raise RecordError(item.cid, "fixing_reply", "expected it and non_fixing_reply as strings")
    return Written3(item, writer, lang, fixing, non_fixing)


def load_task1(root: Path | None = None) -> list[Written1]:
    """Every Task-1 record of the corpus, in file order."""
    return _written(root, "task1", _written1)


def load_task3(root: Path | None = None) -> list[Written3]:
    """Every Task-3 context of the corpus with its two attempts."""
    return _written(root, "task3", _written3)


def first_per_writer(
    task1: Sequence[Written1], task3: Sequence[Written3], n: int
) -> tuple[list[Written1], list[Written3]]:
    """A fast, fixed subset: per writer the first n/2 liked and n/2 disliked Task-1 records
    and the first n/4 Task-3 contexts, in file order."""
    taken: Counter[tuple[str, int]] = Counter()
    out1 = []
    for r in task1:
        key = (r.writer, r.item.label)
        if taken[key] < n // 2:
            taken[key] += 1
            out1.append(r)
    contexts: Counter[str] = Counter()
    out3 = []
    for r3 in task3:
        if contexts[r3.writer] < n // 4:
            contexts[r3.writer] += 1
            out3.append(r3)
    return out1, out3


# Phrases that name a verdict or a failure instead of showing one. A disliked reply holding
# one tells a model the label without the task; the writers were asked never to use them.
# Ordinary words that happen to be about liking (点赞, 好评 in a caption or a film review)
# are content, not giveaways.
GIVEAWAYS = (
    "不满意的回答",
    "错误示范",
    "反面例子",
    "（错误）",
    "(incorrect)",
    "👎",
    "thumbs down",
    "thumbs-down",
    "bad answer",
    "bad reply",
    "wrong answer",
    "this answer is wrong",
    "failure_dimension",
    "success_dimension",
    "[bad]",
    "[good]",
)


def giveaways(text: str) -> list[str]:
    lowered = text.lower()
    return [word for word in GIVEAWAYS if word in lowered]


@dataclass(frozen=True, slots=True)
class WriterStats:
    writer: str
    records: int
    liked_share: float
    zh_share: float
    length_auroc: float  # P(liked) ranked by reply length alone; 0.5 = no information
    pair_share: float  # share of distinct queries that come as a contrastive pair
    multi_turn_share: float
    giveaway_records: int  # disliked replies holding a giveaway word

    @property
    def length_information(self) -> float:
        """How far reply length alone separates the labels, either way round (0.5-1)."""
        return max(self.length_auroc, 1 - self.length_auroc)


@dataclass(frozen=True, slots=True)
class Requirements:
    min_writers: int = 8
    balance: tuple[float, float] = (0.4, 0.6)
    max_length_information: float = 0.65
    min_pair_share: float = 0.25
    min_multi_turn_share: float = 0.30


def writer_stats(records: Sequence[Written1]) -> list[WriterStats]:
    by_writer: dict[str, list[Written1]] = defaultdict(list)
    for record in records:
        by_writer[record.writer].append(record)
    stats = []
    for writer, items in sorted(by_writer.items()):
        labels = [r.item.label for r in items]
        lengths = [math.log1p(len(r.item.dialogue.reply)) for r in items]
        queries = Counter(_query_key(r) for r in items)
        paired = {_query_key(r) for r in items if r.pair}
        stats.append(
            WriterStats(
                writer=writer,
                records=len(items),
                liked_share=sum(1 for y in labels if y == LIKED) / len(items),
                zh_share=sum(1 for r in items if r.lang == "zh") / len(items),
                length_auroc=auroc(labels, lengths),
                pair_share=len(paired) / len(queries),
                multi_turn_share=sum(1 for r in items if r.item.dialogue.history) / len(items),
                giveaway_records=sum(
                    1 for r in items if r.item.label != LIKED and giveaways(r.item.dialogue.reply)
                ),
            )
        )
    return stats


def _query_key(record: Written1) -> tuple[str, ...]:
    d = record.item.dialogue
    return (record.writer, *(t.text for t in d.history), d.user_message)


def problems(stats: Sequence[WriterStats], need: Requirements | None = None) -> list[str]:
    """What keeps the corpus from being evidence, one line each (empty: nothing)."""
    need = need or Requirements()
    found = []
    if len(stats) < need.min_writers:
        found.append(f"{len(stats)} writers, need at least {need.min_writers}")
    low, high = need.balance
    for s in stats:
        if not low <= s.liked_share <= high:
            found.append(f"{s.writer}: liked share {s.liked_share:.2f} outside {low}-{high}")
        if s.length_information > need.max_length_information:
            found.append(
                f"{s.writer}: reply length alone gives AUROC {s.length_information:.2f} "
                f"(limit {need.max_length_information})"
            )
        if s.pair_share < need.min_pair_share:
            found.append(
                f"{s.writer}: {s.pair_share:.0%} of queries paired, need {need.min_pair_share:.0%}"
            )
        if s.multi_turn_share < need.min_multi_turn_share:
            found.append(
                f"{s.writer}: {s.multi_turn_share:.0%} multi-turn, need "
                f"{need.min_multi_turn_share:.0%}"
            )
        if s.giveaway_records:
            found.append(f"{s.writer}: {s.giveaway_records} disliked replies hold giveaway words")
    return found
