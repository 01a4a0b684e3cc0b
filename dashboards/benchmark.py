"""Benchmark: the periodic validation of the scorers inside the service. How good each scorer
version is on the validation set, and whether validation still runs."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from dashboards.panels import (
    COUNT,
    RATIO,
    SECONDS,
    THIRD,
    Board,
    Query,
    datasource_variable,
    graph,
    label_variable,
    single_value,
)
from dashboards.promql import RANGE_WINDOW, eq, increase, matches, ratio, select, total
from dashboards.recorded import (
    BENCHMARK_SENSITIVITY,
    BENCHMARK_SPECIFICITY,
    LIVE_SENSITIVITY,
    LIVE_SPECIFICITY,
)
from dashboards.vocabulary import BAD, GOOD, JOB, TASK1
from stream.metrics import (
    BENCHMARK_FAILURES,
    BENCHMARK_LAST_SUCCESS,
    BENCHMARK_METRIC,
    BENCHMARK_SECONDS,
    LABEL_VERDICTS,
)

UID = "uxmon-benchmark"

_FILTERS = (JOB, matches("scorer", "$scorer"))
_PER_VERSION = ("scorer", "version", "task", "metric")
_PER_VERSION_LEGEND = "{{scorer}} {{version}} {{task}} {{metric}}"


def _validation(metric_pattern: str, *matchers: str) -> str:
    chosen = select(BENCHMARK_METRIC, *_FILTERS, matches("metric", metric_pattern), *matchers)
    return total(chosen, *_PER_VERSION, how="max")


def _task1(metric: str) -> str:
    chosen = select(BENCHMARK_METRIC, *_FILTERS, eq("task", TASK1), eq("metric", metric))
    return total(chosen, "scorer", "version", how="max")


_LIVE = ("scorer", "version", "source", "label")
_LIVE_WINDOW = "1d"  # as the recording rules' uxmon:live_recall:ratio1d


def _live_recall() -> str:
    """Each scorer's recall of the turns users labelled liked or disliked, over a day."""
    filters = (JOB, matches("scorer", "$scorer"))

    def counted(*matchers: str) -> str:
        return increase(LABEL_VERDICTS, *filters, *matchers, window=_LIVE_WINDOW)

    hits = (
        f"{counted(eq('verdict', BAD), eq('label', 'disliked'))} "
        f"or {counted(eq('verdict', GOOD), eq('label', 'liked'))}"
    )
    return ratio(total(hits, *_LIVE), total(counted(), *_LIVE))


def _age() -> str:
    return (
        f"time() - {total(select(BENCHMARK_LAST_SUCCESS, *_FILTERS), 'scorer', 'task', how='max')}"
    )


def build() -> Dashboard:
    board = Board(
        UID,
        "uxmon / Benchmark",
        "The scorers' periodic validation (UXBench-format data) per scorer version: "
        "accuracy, calibration, and whether the runs succeed.",
    ).variables(
        datasource_variable(),
        label_variable("job", "Scrape job", BENCHMARK_METRIC),
        label_variable("scorer", "Scorer", BENCHMARK_METRIC),
    )

    board.row("Validation results").add(
        graph(
            "Task 1 accuracy per scorer version",
            "Good-Acc (recall on liked turns), Bad-Acc (recall on disliked turns, where "
            "judges are weakest) and Avg-Acc, from the last validation run of each scorer "
            "version.",
            [
                Query(
                    _validation("good_acc|bad_acc|avg_acc", eq("task", TASK1)), _PER_VERSION_LEGEND
                )
            ],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Ranking and calibration",
            "AUROC (how well scores rank disliked below liked turns; 0.5 is chance) and ECE "
            "(expected calibration error; lower is better).",
            [Query(_validation("auroc|ece"), _PER_VERSION_LEGEND)],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Youden's J (trust in the corrected rate)",
            "Bad-Acc + Good-Acc - 1 per scorer version. The corrected dissatisfaction rate "
            "needs J > 0, and its noise grows like 1/J², so a small J deserves little trust.",
            [Query(f"{_task1('bad_acc')} + {_task1('good_acc')} - 1", "{{scorer}} {{version}}")],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Task 2 Good% and Task 3 recovery rate",
            "Share of generated replies the GRM rates good (Task 2) and share of recovery "
            "replies rated good (Task 3).",
            [Query(_validation("good_pct|recovery_rate"), _PER_VERSION_LEGEND)],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Live recall against the users' labels",
            "Over the last day, the share of turns users labelled disliked that the scorer "
            "judged bad (live Bad-Acc) and of those labelled liked it judged good (live "
            "Good-Acc), per scorer version and label source: explicit (thumbs, regenerate, "
            "copy) or implicit (complaint, satisfied follow-up: the reaction detector's calls, "
            "noisier). Needs the labels topic (docs/labels.md); the Wilson bounds are "
            "recorded as uxmon:live_recall_wilson_lower/upper:ratio1d.",
            [Query(_live_recall(), "{{scorer}} {{version}} {{source}} {{label}}")],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Accuracy behind the corrected rate: live vs benchmark",
            "Sensitivity (Bad-Acc) and specificity (Good-Acc) per scorer: from the last "
            "validation run, and live against explicit thumbs over 7 days (drawn where a "
            "class has at least 100 thumbs). The corrected rate and the SLO alerts use the "
            "benchmark figures, or the live ones where the rules are rendered with "
            "correction: live (docs/alerts.md). A lasting gap means the validation set does "
            "not look like this team's traffic, or that thumbing users are no random sample "
            "(docs/labels.md). Recorded series: needs the recording rules; not filtered by "
            "job (the rules aggregate per scorer).",
            [
                Query(select(recorded, matches("scorer", "$scorer")), f"{{{{scorer}}}} {name}")
                for recorded, name in (
                    (LIVE_SENSITIVITY, "live sensitivity"),
                    (LIVE_SPECIFICITY, "live specificity"),
                    (BENCHMARK_SENSITIVITY, "benchmark sensitivity"),
                    (BENCHMARK_SPECIFICITY, "benchmark specificity"),
                )
            ],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "Items validated",
            "Items in the last validation run (n); a sudden drop means the data changed.",
            [Query(_validation("n"), _PER_VERSION_LEGEND)],
            unit=COUNT,
        ),
    )

    board.row("Validation runs").add(
        single_value(
            "Oldest last success",
            "Time since the last successful validation run, for the stalest scorer and "
            "task. Red past a day.",
            Query(f"max({_age()})"),
            unit=SECONDS,
            width=THIRD,
            red_above=86400,
        ),
        single_value(
            "Failed runs (whole range)",
            "Validation runs that failed over the selected range (logged, never fatal).",
            Query(
                total(increase(BENCHMARK_FAILURES, *_FILTERS, window=RANGE_WINDOW)),
                instant=True,
            ),
            unit=COUNT,
            width=THIRD,
            red_above=0.5,
        ),
        single_value(
            "Longest last run",
            "Wall time of the slowest scorer and task's last validation run.",
            Query(total(select(BENCHMARK_SECONDS, *_FILTERS), how="max")),
            unit=SECONDS,
            width=THIRD,
        ),
        graph(
            "Time since last success",
            "Per scorer and task.",
            [Query(_age(), "{{scorer}} {{task}}")],
            unit=SECONDS,
        ),
        graph(
            "Failed runs",
            "Validation runs that failed in each interval, per scorer and task.",
            [
                Query(
                    total(increase(BENCHMARK_FAILURES, *_FILTERS), "scorer", "task"),
                    "{{scorer}} {{task}}",
                )
            ],
            unit=COUNT,
            bars=True,
        ),
        graph(
            "Run duration",
            "Wall time of the last validation run, per scorer and task.",
            [
                Query(
                    total(select(BENCHMARK_SECONDS, *_FILTERS), "scorer", "task", how="max"),
                    "{{scorer}} {{task}}",
                )
            ],
            unit=SECONDS,
        ),
    )
    return board.build()
