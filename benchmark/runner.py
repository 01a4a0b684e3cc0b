"""Run a scorer over a task's cases and summarise the results in a `Report`.

A benchmark measures the scorer as deployed, failures included, so a failing scorer
never crashes a run: when a batch raises or returns the wrong number of scores, its
items are scored again one at a time, and an item that still raises, gets no score or
gets an invalid one (probability outside [0, 1], unknown verdict) is "unparseable",
which every task counts as a failure. Only exception type names are recorded, since a
third-party scorer's messages may quote the dialogue.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import cast

from benchmark.errors import BenchmarkError
from benchmark.provenance import DataSource, fingerprint
from benchmark.result import ItemResult, Report, Status
from benchmark.tasks import Case, Task
from scorer.protocol import Scorer
from scorer.types import Dialogue, Score

log = logging.getLogger(__name__)

_VERDICTS = frozenset({"good", "bad"})


class RunError(BenchmarkError):
    """Inputs a run cannot start from: no cases, repeated cids, a bad batch size."""


def run(
    task: Task,
    items: Sequence[Case],
    scorer: Scorer,
    *,
    batch_size: int = 32,
    progress: bool = False,
    source: DataSource | None = None,
) -> Report:
    """Score every case that has a reply (the scorer must be loaded) and build the Report.

    `source` describes the data (from `Task.prepare`); without it the report carries only
    a fingerprint of the cases.
    """
    _check(items, batch_size)
    start = time.perf_counter()
    errors: Counter[str] = Counter()
    scorable = [c for c in items if c.dialogue is not None]
    scores: dict[str, Score | None] = {}
    with _bar(progress, len(scorable), f"{task.name} · {scorer.name}") as advance:
        for offset in range(0, len(scorable), batch_size):
            batch = scorable[offset : offset + batch_size]
            dialogues = [c.dialogue for c in batch if c.dialogue is not None]
            for case, score in zip(batch, _score_batch(scorer, dialogues, errors), strict=True):
                scores[case.cid] = score
            advance(len(batch))
    results = [_result(task, case, case.cid in scores, scores.get(case.cid)) for case in items]
    summary = task.summarise(results)
    if errors:
        log.warning("scorer %s failed on some items: %s", scorer.name, dict(sorted(errors.items())))
    return Report(
        task=task.name,
        task_version=task.version,
        headline=task.headline,
        scorer=scorer.name,
        scorer_version=scorer.version,
        n=len(items),
        metrics=summary.metrics,
        intervals=summary.intervals,
        breakdowns=summary.breakdowns,
        reliability=summary.reliability,
        confusion=summary.confusion,
        source=source
        or DataSource("cases passed in directly", (), fingerprint([c.cid, c.label] for c in items)),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        elapsed_s=round(time.perf_counter() - start, 3),
        errors=dict(sorted(errors.items())),
        items=results,
    )


def _check(items: Sequence[Case], batch_size: int) -> None:
    if batch_size < 1:
        raise RunError(f"expected a batch size of at least 1, got {batch_size}")
    if not items:
        raise RunError("expected at least one case to score, got none")
    seen: set[str] = set()
    for case in items:
        if case.cid in seen:
            raise RunError(
                f"expected unique cids (reports pair items by cid); {case.cid!r} repeats"
            )
        seen.add(case.cid)


def _score_batch(
    scorer: Scorer, dialogues: list[Dialogue], errors: Counter[str]
) -> list[Score | None]:
    try:
        scores = list(scorer.score(dialogues))
    except Exception as exc:  # any scorer failure is data about the scorer, not a crash
        errors["batch_raised"] += 1
        errors[f"exception:{type(exc).__name__}"] += 1
        if len(dialogues) == 1:
            errors["item_raised"] += 1
            return [None]
    else:
        if len(scores) == len(dialogues):
            return [_valid(s, errors) for s in scores]
        errors["batch_wrong_length"] += 1
    # retry one by one so that only the items that fail count as unparseable
    return [_score_one(scorer, d, errors) for d in dialogues]


def _score_one(scorer: Scorer, dialogue: Dialogue, errors: Counter[str]) -> Score | None:
    try:
        scores = list(scorer.score([dialogue]))
    except Exception as exc:  # see _score_batch
        errors["item_raised"] += 1
        errors[f"exception:{type(exc).__name__}"] += 1
        return None
    if len(scores) != 1:
        errors["item_no_score"] += 1
        return None
    return _valid(scores[0], errors)


def _valid(score: object, errors: Counter[str]) -> Score | None:
    p = getattr(score, "p_satisfied", None)
    verdict = getattr(score, "verdict", None)
    ok = (
        isinstance(p, int | float)
        and not isinstance(p, bool)
        and math.isfinite(p)
        and 0.0 <= p <= 1.0
        and str(verdict) in _VERDICTS
    )
    if not ok:
        errors["invalid_score"] += 1
        return None
    return cast(Score, score)  # duck-typed: it has what the report needs from a Score


def _result(task: Task, case: Case, attempted: bool, score: Score | None) -> ItemResult:
    status: Status = "missing"
    value: float | None = None
    verdict: str | None = None
    if attempted and score is None:
        status = "unparseable"
    elif score is not None:
        status, value, verdict = "scored", float(score.p_satisfied), str(score.verdict)
    return ItemResult(
        cid=case.cid,
        label=case.label,
        score=value,
        verdict=verdict,
        status=status,
        outcome=task.outcome(case.label, status, verdict),
        groups=dict(case.groups),
    )


@contextmanager
def _bar(enabled: bool, total: int, description: str) -> Iterator[Callable[[int], None]]:
    if not enabled:
        yield lambda _: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task_id = bar.add_task(description, total=total)
        yield lambda k: bar.advance(task_id, k)
