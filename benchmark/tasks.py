"""Benchmark tasks, declared as data and versioned, in a registry.

A task says which UXBench configs it reads, how its items become scorer inputs (`Case`),
what counts as success on one item (`outcome`), which metric is its headline (what the
gate compares) and how per-item results become its metrics (`summarise`). A task's
version changes whenever its items or metrics change meaning, so reports of different
versions are never compared silently.

- task1 (UX Judge): the scorer predicts liked/disliked on the reply in the data.
  Good-Acc, Bad-Acc, Avg-Acc (stratified bootstrap 95% CIs), AUROC and ECE of
  P(satisfied) over the items that got a valid score, the reliability table, confusion
  matrix, and breakdowns by scenario / dimension / difficulty. An unparseable verdict
  counts as wrong (UXBench's rule).
- task2 (UX Eval): Good% = share of the supplied replies rated good. Items without a
  reply are reported as missing and are outside the denominator; a reply whose judgment
  failed counts as not good. `good_pct_valid` uses only valid judgments.
- task3_judge (recovery verdicts): labelled recovery attempts (a Task-3 context with a
  candidate reply that fixes the failure or not); the task-1 metrics of the verdicts, plus
  `pair_accuracy`, the share of contexts whose fixing attempt scores above its
  non-fixing one (ties count half).
- task3 (UX Recovery): Recovery Rate = share of recovery replies rated good, with both
  denominators: `recovery_rate` over all items (a missing reply or a failed judgment is
  not a recovery; comparable with UXBench's published rates) and `recovery_rate_valid`
  over valid judgments.

Rates in tasks 2 and 3 have Wilson 95% intervals: they are single binomial proportions,
and Wilson stays inside [0, 1] and is sensible near 0, where recovery rates live.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from benchmark import metrics
from benchmark.adapters import Task1Item, Task2Item, Task3Item
from benchmark.errors import BenchmarkError
from benchmark.metrics import Confusion, Interval, ReliabilityBin
from benchmark.provenance import DataSource, data_files, describe, digest, fingerprint
from benchmark.responses import load_responses
from benchmark.result import ItemResult, Metric, Status
from benchmark.uxbench import (
    TASK1_CONFIGS,
    load_task1,
    load_task2,
    load_task3,
    load_task3_candidates,
)
from scorer.types import Dialogue

LEVEL = 0.95
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 0
NO_GROUP = "(none)"


class UnknownTaskError(BenchmarkError, KeyError):
    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(f"unknown task {name!r}; known tasks: {', '.join(sorted(known))}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class TaskInputError(BenchmarkError):
    """Inputs that do not fit the task, e.g. a missing or superfluous responses file."""


@dataclass(frozen=True, slots=True)
class Case:
    """One item as the runner sees it. `dialogue` is None when no reply was supplied."""

    cid: str
    dialogue: Dialogue | None
    label: int | None  # task 1: 1 liked / 0 disliked; None for tasks without labels
    groups: Mapping[str, str]  # breakdown keys (scenario, dimension, ...) to values


@dataclass(frozen=True, slots=True)
class Prepared:
    cases: list[Case]
    source: DataSource


@dataclass(frozen=True, slots=True)
class Summary:
    metrics: dict[str, Metric]
    intervals: dict[str, Interval]
    breakdowns: dict[str, list[dict[str, Any]]]
    reliability: list[ReliabilityBin] = field(default_factory=list)
    confusion: Confusion | None = None


CaseLoader = Callable[[str, int | None, Mapping[str, str] | None], list[Case]]
Outcome = Callable[[int | None, Status, str | None], int | None]


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    version: str
    title: str
    configs: tuple[str, ...]
    headline: str
    balanced: bool  # the headline is the mean of per-label success rates (Avg-Acc)
    response_field: str | None  # field of the responses file; None: replies are in the data
    load_cases: CaseLoader
    outcome: Outcome
    summarise: Callable[[Sequence[ItemResult]], Summary]

    def prepare(
        self,
        source: str,
        *,
        limit: int | None = None,
        responses: str | None = None,
    ) -> Prepared:
        """Load the task's items from `source` (and replies from `responses`)."""
        replies = None
        responses_digest = None
        if self.response_field is None and responses is not None:
            raise TaskInputError(
                f"{self.name} judges the replies in the data; expected no responses file, "
                f"got {responses}"
            )
        if self.response_field is not None:
            if responses is None:
                raise TaskInputError(
                    f"{self.name} needs a responses file (JSONL of {{cid, "
                    f"{self.response_field}}}); none was given"
                )
            replies = load_responses(responses, self.response_field)
            responses_digest = digest(responses)
        cases = self.load_cases(source, limit, replies)
        cids = {c.cid for c in cases}
        source_info = DataSource(
            description=describe(source, self.configs, limit),
            files=tuple(digest(p) for p in data_files(source, self.configs)),
            items_sha256=fingerprint(_case_row(c) for c in cases),
            responses=responses_digest,
            unmatched_responses=0 if replies is None else len(set(replies) - cids),
        )
        return Prepared(cases, source_info)


def _case_row(case: Case) -> list[Any]:
    d = case.dialogue
    if d is None:
        return [case.cid, case.label, None]
    history = [[t.role, t.text] for t in d.history]
    return [case.cid, case.label, d.user_message, d.reply, history, d.failed_reply, d.complaint]


# --- items to cases ---


def _task1_cases(source: str, limit: int | None, _: Mapping[str, str] | None) -> list[Case]:
    return [_task1_case(item) for item in load_task1(source, limit=limit)]


def _task1_case(item: Task1Item) -> Case:
    groups = {"scenario": item.scenario, "dimension": item.dimension, "difficulty": item.difficulty}
    return Case(item.cid, item.dialogue, item.label, groups)


def _task2_cases(source: str, limit: int | None, replies: Mapping[str, str] | None) -> list[Case]:
    return [_task2_case(item, replies or {}) for item in load_task2(source, limit=limit)]


def _task2_case(item: Task2Item, replies: Mapping[str, str]) -> Case:
    reply = replies.get(item.cid)
    groups = {
        "scenario": item.scenario,
        "dimension": item.dimension,
        "difficulty": item.difficulty,
        "signal_type": item.signal_type,
    }
    dialogue = None if reply is None else item.with_reply(reply).dialogue
    return Case(item.cid, dialogue, None, groups)


def _task3_cases(source: str, limit: int | None, replies: Mapping[str, str] | None) -> list[Case]:
    return [_task3_case(item, replies or {}) for item in load_task3(source, limit=limit)]


def _task3_case(item: Task3Item, replies: Mapping[str, str]) -> Case:
    reply = replies.get(item.cid)
    dialogue = None if reply is None else item.with_reply(reply).dialogue
    return Case(item.cid, dialogue, None, {"scenario": item.scenario, "dimension": item.dimension})


def _task3_judge_cases(source: str, limit: int | None, _: Mapping[str, str] | None) -> list[Case]:
    return [
        Case(
            c.item.cid,
            c.item.dialogue,
            c.label,
            {"scenario": c.item.scenario, "dimension": c.item.dimension, "pair": c.pair or ""},
        )
        for c in load_task3_candidates(source, limit=limit)
    ]


# --- what counts as success on one item ---


def _judged_correctly(label: int | None, status: Status, verdict: str | None) -> int | None:
    if status != "scored":
        return 0  # UXBench: an unparseable verdict is wrong
    return int(_prediction(verdict) == label)


def _good_among_replies(label: int | None, status: Status, verdict: str | None) -> int | None:
    if status == "missing":
        return None  # outside Good%'s denominator; reported as missing
    return int(status == "scored" and verdict == "good")


def _recovered(label: int | None, status: Status, verdict: str | None) -> int | None:
    return int(status == "scored" and verdict == "good")  # all items are the denominator


def _prediction(verdict: str | None) -> int | None:
    if verdict == "good":
        return metrics.LIKED
    if verdict == "bad":
        return metrics.DISLIKED
    return None


# --- summaries ---


def wilson(successes: int, n: int, level: float = LEVEL) -> Interval:
    """Wilson score interval for a binomial proportion; NaN when n is 0."""
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, level)
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    # at 0 or n successes the bound is exactly 0 or 1; rounding would leave ~1e-17
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Interval(p, low, high, level)


def _rate(successes: int, n: int) -> float:
    return successes / n if n else math.nan


# Groups with an order of their own are listed in it (others after, largest first).
_NATURAL_ORDER = {"difficulty": ("easy", "medium", "hard")}


def _by_group(
    results: Sequence[ItemResult], key: str, row: Callable[[Sequence[ItemResult]], dict[str, Any]]
) -> list[dict[str, Any]]:
    """One row per value of `key`: in the key's natural order where it has one (difficulty:
    easy, medium, hard), else largest group first (ties by name), so output is stable."""
    groups: dict[str, list[ItemResult]] = {}
    for r in results:
        groups.setdefault(r.groups.get(key) or NO_GROUP, []).append(r)
    natural = _NATURAL_ORDER.get(key, ())

    def rank(kv: tuple[str, list[ItemResult]]) -> tuple[int, int, str]:
        name, members = kv
        place = natural.index(name) if name in natural else len(natural)
        return (place, -len(members), name)

    ordered = sorted(groups.items(), key=rank)
    return [{"group": name, "n": len(members), **row(members)} for name, members in ordered]


def _mean_score(results: Sequence[ItemResult]) -> float:
    scores = [r.score for r in results if r.score is not None]
    return sum(scores) / len(scores) if scores else math.nan


def _summarise_task1(results: Sequence[ItemResult]) -> Summary:
    labels = [int(r.label if r.label is not None else -1) for r in results]
    predictions = [_prediction(r.verdict) if r.status == "scored" else None for r in results]
    scored = [r for r in results if r.status == "scored" and r.score is not None]
    scored_labels = [int(r.label or 0) for r in scored]
    scored_scores = [float(r.score or 0.0) for r in scored]
    functions = {
        "good_acc": metrics.good_acc,
        "bad_acc": metrics.bad_acc,
        "avg_acc": metrics.avg_acc,
    }
    intervals = {
        name: metrics.bootstrap_ci(
            fn,
            labels,
            predictions,
            n_resamples=BOOTSTRAP_RESAMPLES,
            level=LEVEL,
            seed=BOOTSTRAP_SEED,
        )
        for name, fn in functions.items()
    }
    summary_metrics: dict[str, Metric] = {
        "n": len(results),
        "n_liked": labels.count(metrics.LIKED),
        "n_disliked": labels.count(metrics.DISLIKED),
        "n_scored": len(scored),
        "n_unparseable": sum(r.status == "unparseable" for r in results),
        **{name: interval.estimate for name, interval in intervals.items()},
        "auroc": metrics.auroc(scored_labels, scored_scores),
        "ece": metrics.ece(scored_labels, scored_scores) if scored else math.nan,
        "mean_score": _mean_score(results),
    }

    def row(members: Sequence[ItemResult]) -> dict[str, Any]:
        liked = [m for m in members if m.label == metrics.LIKED]
        disliked = [m for m in members if m.label == metrics.DISLIKED]
        return {
            "n_liked": len(liked),
            "n_disliked": len(disliked),
            "rate": _rate(sum(m.outcome or 0 for m in members), len(members)),
            "good_acc": _rate(sum(m.outcome or 0 for m in liked), len(liked)),
            "bad_acc": _rate(sum(m.outcome or 0 for m in disliked), len(disliked)),
        }

    return Summary(
        metrics=summary_metrics,
        intervals=intervals,
        breakdowns={k: _by_group(results, k, row) for k in ("scenario", "dimension", "difficulty")},
        reliability=metrics.reliability_table(scored_labels, scored_scores),
        confusion=metrics.confusion(labels, predictions),
    )


def pair_accuracy(results: Sequence[ItemResult]) -> float:
    """Share of pairs (same `pair` group, one label 1 and one 0, both scored) whose label-1
    member scores higher; ties count half. NaN without pairs."""
    members: dict[str, dict[int, int]] = {}
    for i, r in enumerate(results):
        pair = r.groups.get("pair")
        if pair and r.status == "scored" and r.score is not None and r.label is not None:
            members.setdefault(pair, {})[r.label] = i
    scores = [r.score or 0.0 for r in results]
    pairs = [(m[1], m[0]) for m in members.values() if set(m) == {0, 1}]
    return metrics.pair_accuracy(scores, pairs)


def _summarise_task3_judge(results: Sequence[ItemResult]) -> Summary:
    summary = _summarise_task1(results)
    summary.metrics["pair_accuracy"] = pair_accuracy(results)
    return summary


def _counts(results: Sequence[ItemResult]) -> dict[str, int]:
    return {
        "n": len(results),
        "n_missing": sum(r.status == "missing" for r in results),
        "n_unparseable": sum(r.status == "unparseable" for r in results),
        "n_valid": sum(r.status == "scored" for r in results),
        "n_good": sum(r.status == "scored" and r.verdict == "good" for r in results),
    }


def _summarise_task2(results: Sequence[ItemResult]) -> Summary:
    c = _counts(results)
    with_reply = c["n"] - c["n_missing"]
    intervals = {
        "good_pct": wilson(c["n_good"], with_reply),
        "good_pct_valid": wilson(c["n_good"], c["n_valid"]),
    }

    def row(members: Sequence[ItemResult]) -> dict[str, Any]:
        g = _counts(members)
        return {
            "n_missing": g["n_missing"],
            "rate": _rate(g["n_good"], g["n"] - g["n_missing"]),
        }

    keys = ("scenario", "dimension", "difficulty", "signal_type")
    return Summary(
        metrics={
            **c,
            "n_with_reply": with_reply,
            "good_pct": intervals["good_pct"].estimate,
            "good_pct_valid": intervals["good_pct_valid"].estimate,
            "mean_score": _mean_score(results),
        },
        intervals=intervals,
        breakdowns={k: _by_group(results, k, row) for k in keys},
    )


def _summarise_task3(results: Sequence[ItemResult]) -> Summary:
    c = _counts(results)
    intervals = {
        "recovery_rate": wilson(c["n_good"], c["n"]),
        "recovery_rate_valid": wilson(c["n_good"], c["n_valid"]),
    }

    def row(members: Sequence[ItemResult]) -> dict[str, Any]:
        g = _counts(members)
        return {
            "n_missing": g["n_missing"],
            "rate": _rate(g["n_good"], g["n"]),
            "rate_valid": _rate(g["n_good"], g["n_valid"]),
        }

    return Summary(
        metrics={
            **c,
            "n_recovered": c["n_good"],
            "recovery_rate": intervals["recovery_rate"].estimate,
            "recovery_rate_valid": intervals["recovery_rate_valid"].estimate,
            "mean_score": _mean_score(results),
        },
        intervals=intervals,
        breakdowns={k: _by_group(results, k, row) for k in ("scenario", "dimension")},
    )


# --- the registry ---

_TASKS: dict[str, Task] = {}


def register(task: Task) -> Task:
    _TASKS[task.name] = task
    return task


def known_tasks() -> list[str]:
    return sorted(_TASKS)


def get_task(name: str) -> Task:
    try:
        return _TASKS[name]
    except KeyError:
        raise UnknownTaskError(name, known_tasks()) from None


TASK1 = register(
    Task(
        name="task1",
        version="1",
        title="UX Judge: liked or disliked?",
        configs=TASK1_CONFIGS,
        headline="avg_acc",
        balanced=True,
        response_field=None,
        load_cases=_task1_cases,
        outcome=_judged_correctly,
        summarise=_summarise_task1,
    )
)
TASK2 = register(
    Task(
        name="task2",
        version="1",
        title="UX Eval: Good% of generated replies",
        configs=("task2_eval",),
        headline="good_pct",
        balanced=False,
        response_field="generated_response",
        load_cases=_task2_cases,
        outcome=_good_among_replies,
        summarise=_summarise_task2,
    )
)
TASK3_JUDGE = register(
    Task(
        name="task3_judge",
        version="1",
        title="Recovery verdicts: did the attempt fix the failure?",
        configs=("task3_recovery",),
        headline="avg_acc",
        balanced=True,
        response_field=None,
        load_cases=_task3_judge_cases,
        outcome=_judged_correctly,
        summarise=_summarise_task3_judge,
    )
)
TASK3 = register(
    Task(
        name="task3",
        version="1",
        title="UX Recovery: Recovery Rate after a complaint",
        configs=("task3_recovery",),
        headline="recovery_rate",
        balanced=False,
        response_field="recovery_response",
        load_cases=_task3_cases,
        outcome=_recovered,
        summarise=_summarise_task3,
    )
)
