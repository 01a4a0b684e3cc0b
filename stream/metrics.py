"""Every metric the worker exports, declared once. Labels come only from closed sets.

Names are module constants so dashboards and alert rules can import them
(docs/metrics.md is the catalogue).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info

EVENTS_CONSUMED = "uxmon_events_consumed_total"
EVENTS_REJECTED = "uxmon_events_rejected_total"
EVENTS_REDELIVERED = "uxmon_events_redelivered_total"
FEEDBACK = "uxmon_feedback_total"
TURNS_SCORED = "uxmon_turns_scored_total"
SCORE = "uxmon_score"
BATCH_SIZE = "uxmon_batch_size"
SCORING_SECONDS = "uxmon_scoring_seconds"
EVENT_TO_SCORE_SECONDS = "uxmon_event_to_score_seconds"
CONSUMER_LAG = "uxmon_consumer_lag_messages"
CONVERSATIONS = "uxmon_conversations_in_state"
EVICTED = "uxmon_conversations_evicted_total"
ASSIGNMENTS = "uxmon_partition_assignments_total"
ASSIGNED_PARTITIONS = "uxmon_assigned_partitions"
WORKER = "uxmon_worker"  # Info: exported as uxmon_worker_info

OTHER = "other"


class BoundedLabel:
    """Maps free values (assistant ids, model versions) onto at most `limit` label values.

    An allow-list fixes the set; without one, the first `limit` distinct values seen keep
    their own label and the rest become 'other', so cardinality stays bounded.
    """

    def __init__(self, limit: int, allowed: Iterable[str] = (), fallback: str = OTHER) -> None:
        self._allowed = set(allowed)
        self._fixed = bool(self._allowed)
        self._limit = limit
        self._fallback = fallback

    def __call__(self, value: str | None) -> str:
        if not value:
            return "none"
        if value in self._allowed:
            return value
        if not self._fixed and len(self._allowed) < self._limit:
            self._allowed.add(value)
            return value
        return self._fallback


SCORE_BUCKETS = tuple(i / 20 for i in range(1, 21))
SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


class Metrics:
    """The worker's metrics on their own registry (tests build as many as they like)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.consumed = Counter(EVENTS_CONSUMED, "Records read from the turns topic.", registry=r)
        self.rejected = Counter(
            EVENTS_REJECTED,
            "Records sent to the dead-letter topic, by reason.",
            ["reason"],
            registry=r,
        )
        self.redelivered = Counter(
            EVENTS_REDELIVERED,
            "Records skipped because they were already applied (replay after restart).",
            registry=r,
        )
        self.feedback = Counter(
            FEEDBACK, "Explicit feedback events, by kind.", ["kind"], registry=r
        )
        self.turns_scored = Counter(
            TURNS_SCORED,
            "Assistant turns scored, by scorer and verdict.",
            ["scorer", "verdict", "scenario", "assistant"],
            registry=r,
        )
        self.score = Histogram(
            SCORE,
            "Scores (probability the user was satisfied).",
            ["scorer"],
            buckets=SCORE_BUCKETS,
            registry=r,
        )
        self.batch_size = Histogram(
            BATCH_SIZE, "Assistant turns per scoring batch.", buckets=BATCH_BUCKETS, registry=r
        )
        self.scoring_seconds = Histogram(
            SCORING_SECONDS,
            "Wall time of one scorer on one batch.",
            ["scorer"],
            buckets=SECONDS_BUCKETS,
            registry=r,
        )
        self.event_to_score = Histogram(
            EVENT_TO_SCORE_SECONDS,
            "From the event's ts to its score being published.",
            buckets=SECONDS_BUCKETS,
            registry=r,
        )
        self.consumer_lag = Gauge(
            CONSUMER_LAG,
            "Records behind the high-water mark, per partition.",
            ["partition"],
            registry=r,
        )
        self.conversations = Gauge(
            CONVERSATIONS, "Conversations held in this worker's state.", registry=r
        )
        self.evicted = Counter(EVICTED, "Idle conversations evicted from state.", registry=r)
        self.assignments = Counter(
            ASSIGNMENTS,
            "Partition assignments received (one per rebalance this worker saw).",
            registry=r,
        )
        self.assigned_partitions = Gauge(
            ASSIGNED_PARTITIONS, "Turns-topic partitions this worker owns now.", registry=r
        )
        self.worker = Info(WORKER, "Worker build and scorer versions.", registry=r)

    def describe_worker(self, version: str, scorers: Sequence[tuple[str, str]]) -> None:
        self.worker.info({"version": version, "scorers": ",".join(f"{n}={v}" for n, v in scorers)})


def counter_total(counter: Counter) -> float:
    """Sum of a counter over all its label sets."""
    return sum(
        sample.value
        for family in counter.collect()
        for sample in family.samples
        if sample.name.endswith("_total")
    )


def all_metric_names() -> list[str]:
    """Names as Prometheus exposes them (counters gain _total, Info gains _info)."""
    return sorted(
        {
            EVENTS_CONSUMED,
            EVENTS_REJECTED,
            EVENTS_REDELIVERED,
            FEEDBACK,
            TURNS_SCORED,
            SCORE,
            BATCH_SIZE,
            SCORING_SECONDS,
            EVENT_TO_SCORE_SECONDS,
            CONSUMER_LAG,
            CONVERSATIONS,
            EVICTED,
            ASSIGNMENTS,
            ASSIGNED_PARTITIONS,
            f"{WORKER}_info",
        }
    )
