"""Scorer health: is the worker keeping up (throughput, latency, lag), what is it dropping
(dead letters, GRM skips, scorer errors), and are its workers up and balanced."""

from __future__ import annotations

from grafana_foundation_sdk.models.dashboard import Dashboard

from dashboards.panels import (
    BYTES,
    COUNT,
    PER_MINUTE,
    PER_SECOND,
    RATIO,
    SECONDS,
    THIRD,
    Board,
    Query,
    datasource_variable,
    graph,
    label_table,
    label_variable,
    single_value,
)
from dashboards.promql import (
    increase,
    mean,
    per_minute,
    quantile,
    rate,
    ratio,
    select,
    total,
)
from dashboards.vocabulary import JOB
from stream.metrics import (
    ASSIGNED_PARTITIONS,
    ASSIGNMENTS,
    BATCH_SIZE,
    CONSUMER_LAG,
    CONVERSATIONS,
    EVENT_TO_SCORE_SECONDS,
    EVENTS_CONSUMED,
    EVENTS_REDELIVERED,
    EVENTS_REJECTED,
    EVICTED,
    GRM_BACKEND_STATE,
    GRM_BUDGET,
    GRM_SKIPPED,
    GRM_VERDICTS,
    OFFSET_RESETS,
    REREADS,
    SCORER_ERRORS,
    SCORING_SECONDS,
    TURNS_SCORED,
    UNKNOWN_FIELDS,
    WORKER,
)

UID = "uxmon-scorer-health"

WORKER_INFO = f"{WORKER}_info"  # an Info metric is exposed with the _info suffix
# Prometheus' own per-target health series (1 when the last scrape succeeded).
_SCRAPE_UP = "up"
# prometheus-client's process collector (the worker registers it): resident memory.
_RESIDENT_MEMORY = "process_resident_memory_bytes"


def _quantiles(histogram: str, *by: str, qs: tuple[float, ...] = (0.5, 0.9, 0.99)) -> list[Query]:
    prefix = "".join(f"{{{{{label}}}}} " for label in by)
    return [
        Query(quantile(q, histogram, *by, matchers=(JOB,)), f"{prefix}p{round(q * 100)}")
        for q in qs
    ]


def build() -> Dashboard:
    board = Board(
        UID,
        "uxmon / Scorer health",
        "Is uxmon keeping up with the assistant's traffic, what does it drop, and are its "
        "workers healthy.",
    ).variables(
        datasource_variable(),
        label_variable("job", "Scrape job", WORKER_INFO),
    )

    board.row("Throughput").add(
        graph(
            "Turns scored per second",
            "Assistant turns scored per second, by scorer. ux_judge scores every assistant "
            "turn; grm only the cascade's subset.",
            [Query(total(rate(TURNS_SCORED, JOB), "scorer"), "{{scorer}}")],
            unit=PER_SECOND,
        ),
        graph(
            "Records read per second",
            "Records read from the turns topic, and records skipped as already applied "
            "(replays after a restart or rebalance).",
            [
                Query(total(rate(EVENTS_CONSUMED, JOB)), "consumed"),
                Query(total(rate(EVENTS_REDELIVERED, JOB)), "redelivered (skipped)"),
                Query(total(rate(UNKNOWN_FIELDS, JOB)), "unknown fields ignored"),
            ],
            unit=PER_SECOND,
        ),
        graph(
            "Scorer errors per minute",
            "Turns a scorer failed on (backend down, model error), by scorer.",
            [Query(per_minute(total(rate(SCORER_ERRORS, JOB), "scorer")), "{{scorer}}")],
            unit=PER_MINUTE,
        ),
        graph(
            "Dead letters per minute by reason",
            "Records sent to the dead-letter topic (invalid records), by reason; see "
            "docs/events.md for the reasons.",
            [Query(per_minute(total(rate(EVENTS_REJECTED, JOB), "reason")), "{{reason}}")],
            unit=PER_MINUTE,
            stacked=True,
        ),
    )

    board.row("Latency").add(
        graph(
            "Scoring latency by scorer",
            "Wall time of one scorer on one batch: median, 90th and 99th percentile.",
            _quantiles(SCORING_SECONDS, "scorer"),
            unit=SECONDS,
        ),
        graph(
            "Event → score latency",
            "From the event's timestamp to its score being published (includes queueing "
            "and lag, so it grows when the worker falls behind).",
            _quantiles(EVENT_TO_SCORE_SECONDS),
            unit=SECONDS,
        ),
        graph(
            "Batch size",
            "Assistant turns per scoring batch (larger batches mean the worker is busy).",
            [
                *_quantiles(BATCH_SIZE, qs=(0.5, 0.9)),
                Query(mean(BATCH_SIZE, matchers=(JOB,)), "mean"),
            ],
            unit=COUNT,
        ),
        graph(
            "Consumer lag by partition",
            "Records behind the high-water mark, per turns-topic partition (the largest "
            "value any worker reports, as a partition may just have moved).",
            [Query(total(select(CONSUMER_LAG, JOB), "partition", how="max"), "{{partition}}")],
            unit=COUNT,
        ),
    )

    verdicts = total(rate(GRM_VERDICTS, JOB))
    skipped = total(rate(GRM_SKIPPED, JOB))
    board.row("GRM cascade and budget").add(
        graph(
            "GRM verdicts by reason",
            "Turns the GRM scored per minute, by why they were chosen: recovery turns, "
            "turns the UX-Judge was unsure of, and a random sample.",
            [Query(per_minute(total(rate(GRM_VERDICTS, JOB), "reason")), "{{reason}}")],
            unit=PER_MINUTE,
            stacked=True,
        ),
        graph(
            "GRM skips by reason",
            "Assistant turns the GRM did not score per minute: confident (not needed), "
            "budget (bucket empty), queue_full, failed.",
            [Query(per_minute(total(rate(GRM_SKIPPED, JOB), "reason")), "{{reason}}")],
            unit=PER_MINUTE,
            stacked=True,
        ),
        graph(
            "GRM coverage",
            "Share of assistant turns the GRM scored (verdicts / (verdicts + skipped)).",
            [Query(ratio(verdicts, f"{verdicts} + {skipped}"), "coverage")],
            unit=RATIO,
            max_value=1,
        ),
        graph(
            "GRM budget tokens",
            "GRM verdicts available now in each worker's token bucket; at 0 the cascade "
            "skips turns for budget.",
            [Query(total(select(GRM_BUDGET, JOB), "instance"), "{{instance}}")],
            unit=COUNT,
        ),
        graph(
            "GRM backend circuit",
            "Each worker's circuit breaker to the GRM server: 0 closed, 1 half-open (one "
            "trial call), 2 open (calls refused until the cool-down ends). A local model "
            "stays at 0.",
            [Query(total(select(GRM_BACKEND_STATE, JOB), "instance"), "{{instance}}")],
            unit=COUNT,
        ),
    )

    board.row("Workers").add(
        single_value(
            "Workers up",
            "Scrape targets of the selected job whose last scrape succeeded.",
            Query(total(select(_SCRAPE_UP, JOB))),
            unit=COUNT,
            width=THIRD,
        ),
        single_value(
            "Assigned partitions",
            "Turns-topic partitions owned by all workers together (should equal the "
            "topic's partition count).",
            Query(total(select(ASSIGNED_PARTITIONS, JOB))),
            unit=COUNT,
            width=THIRD,
        ),
        single_value(
            "Conversations in state",
            "Conversations held in all workers' state.",
            Query(total(select(CONVERSATIONS, JOB))),
            unit=COUNT,
            width=THIRD,
        ),
        graph(
            "Assigned partitions by worker",
            "Partitions each worker owns now.",
            [Query(total(select(ASSIGNED_PARTITIONS, JOB), "instance"), "{{instance}}")],
            unit=COUNT,
        ),
        graph(
            "Rebalances and re-reads",
            "Partition assignments each worker received in the interval (one per "
            "rebalance it saw), seeks back to re-read records the consumer skipped "
            "around a rebalance, and jumps to the log start over records retention "
            "deleted before they were applied (any is data loss: raise retention).",
            [
                Query(total(increase(ASSIGNMENTS, JOB), "instance"), "{{instance}} assignments"),
                Query(total(increase(REREADS, JOB), "instance"), "{{instance}} re-reads"),
                Query(
                    total(increase(OFFSET_RESETS, JOB), "instance"),
                    "{{instance}} retention resets",
                ),
            ],
            unit=COUNT,
            bars=True,
        ),
        graph(
            "Conversations in state and evictions",
            "Conversations each worker holds, and idle conversations evicted per minute.",
            [
                Query(total(select(CONVERSATIONS, JOB), "instance"), "{{instance}} held"),
                Query(
                    per_minute(total(rate(EVICTED, JOB), "instance")),
                    "{{instance}} evicted/min",
                ),
            ],
            unit=COUNT,
        ),
        graph(
            "Worker memory",
            "Resident memory of each worker process (the conversation state lives in it; "
            "compare with the pod's memory limit).",
            [Query(total(select(_RESIDENT_MEMORY, JOB), "instance"), "{{instance}}")],
            unit=BYTES,
        ),
        label_table(
            "Worker versions",
            "Each worker's build version and scorer versions.",
            Query(select(WORKER_INFO, JOB), instant=True, as_table=True),
            hidden=("Time", "Value", "__name__"),
        ),
    )
    return board.build()
