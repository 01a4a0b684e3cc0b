"""Every metric the worker exports, declared once. Labels come only from closed sets.

Names are module constants so dashboards and alert rules can import them
(docs/metrics.md is the catalogue).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)

from stream.ledger import Family, Ledger

EVENTS_CONSUMED = "uxmon_events_consumed_total"
EVENTS_REJECTED = "uxmon_events_rejected_total"
EVENTS_REDELIVERED = "uxmon_events_redelivered_total"
UNKNOWN_FIELDS = "uxmon_event_unknown_fields_total"
FEEDBACK = "uxmon_feedback_total"
LABELS = "uxmon_labels_total"
LABEL_VERDICTS = "uxmon_label_verdicts_total"
TURNS_SCORED = "uxmon_turns_scored_total"
TURN_VERDICTS = "uxmon_turn_verdicts_total"
SCORE = "uxmon_score"
BATCH_SIZE = "uxmon_batch_size"
SCORING_SECONDS = "uxmon_scoring_seconds"
EVENT_TO_SCORE_SECONDS = "uxmon_event_to_score_seconds"
CONSUMER_LAG = "uxmon_consumer_lag_messages"
CONVERSATIONS = "uxmon_conversations_in_state"
EVICTED = "uxmon_conversations_evicted_total"
ASSIGNMENTS = "uxmon_partition_assignments_total"
ASSIGNED_PARTITIONS = "uxmon_assigned_partitions"
REREADS = "uxmon_partition_rereads_total"
GRM_BACKEND_STATE = "uxmon_grm_backend_state"
OFFSET_RESETS = "uxmon_partition_offset_resets_total"
WORKER = "uxmon_worker"  # Info: exported as uxmon_worker_info
SCORER_ERRORS = "uxmon_scorer_errors_total"

# Reactions and recovery (stream/signals.py, stream/recovery.py)
REACTIONS = "uxmon_reactions_total"
JUDGE_REACTION_PAIRS = "uxmon_judge_reaction_pairs_total"
EPISODES_OPENED = "uxmon_recovery_episodes_opened_total"
EPISODES_CLOSED = "uxmon_recovery_episodes_closed_total"
EPISODES_OPEN = "uxmon_recovery_episodes_open"
RECOVERY_SECONDS = "uxmon_recovery_seconds"
RECOVERY_TURNS = "uxmon_recovery_turns"

# The GRM cascade and its budget
GRM_VERDICTS = "uxmon_grm_verdicts_total"
GRM_SKIPPED = "uxmon_grm_skipped_total"
GRM_BUDGET = "uxmon_grm_budget_tokens"

# Periodic validation (benchmark inside the service)
BENCHMARK_METRIC = "uxmon_benchmark_metric"
BENCHMARK_LAST_SUCCESS = "uxmon_benchmark_last_success_timestamp_seconds"
BENCHMARK_FAILURES = "uxmon_benchmark_failures_total"
BENCHMARK_SECONDS = "uxmon_benchmark_duration_seconds"

OTHER = "other"

# What the stream applied, counted exactly once whatever crashes (stream/ledger.py):
# per partition, durable in the table, continued by the partition's next owner.
DURABLE = (
    Family(EVENTS_REJECTED, "Records sent to the dead-letter topic, by reason.", ("reason",)),
    Family(
        UNKNOWN_FIELDS,
        "Fields of valid events that schema v1 does not know, ignored (forward compatible).",
        (),
    ),
    Family(FEEDBACK, "Explicit feedback events, by kind.", ("kind",)),
    Family(
        LABELS,
        "Labelled turns published to the labels topic, by source (explicit, implicit) and "
        "kind (feedback kind or reaction).",
        ("source", "kind"),
    ),
    Family(
        LABEL_VERDICTS,
        "A scorer's verdict on a labelled turn beside the user's label (liked, disliked) "
        "and its source: live sensitivity = (bad, disliked) / disliked, specificity = "
        "(good, liked) / liked.",
        ("scorer", "version", "verdict", "label", "source"),
    ),
    Family(
        TURNS_SCORED,
        "Assistant turns scored, by scorer and verdict.",
        ("scorer", "verdict", "scenario", "assistant"),
    ),
    Family(
        TURN_VERDICTS,
        "Assistant turns by their verdict of record: the GRM's where it scored the turn, "
        "else the UX-Judge's (decided_by says which).",
        ("verdict", "decided_by", "scenario", "assistant"),
    ),
    Family(
        REACTIONS,
        "The user's reaction to an assistant turn (the next message, or its absence).",
        ("reaction", "scenario", "assistant"),
    ),
    Family(
        JUDGE_REACTION_PAIRS,
        "A scorer's verdict on a turn paired with whether the user's reaction was "
        "dissatisfied; agreement = (bad,true) + (good,false) over all.",
        ("scorer", "verdict", "dissatisfied"),
    ),
    Family(
        EPISODES_OPENED,
        "Recovery episodes opened, by what opened them.",
        ("trigger", "scenario", "assistant"),
    ),
    Family(
        EPISODES_CLOSED,
        "Recovery episodes closed, by outcome (recovered, failed, gave_up).",
        ("outcome", "scenario", "assistant"),
    ),
    Family(
        GRM_VERDICTS,
        "Turns the GRM scored, by why they were chosen (recovery, uncertain, sample).",
        ("reason",),
    ),
    Family(
        GRM_SKIPPED,
        "Assistant turns the GRM did not score, by reason (confident, budget, queue_full, failed).",
        ("reason",),
    ),
)


EXEMPLAR_RUNES = 128  # OpenMetrics: an exemplar's label names and values, together


def exemplar_ids(conversation_id: str, turn_id: str | None) -> dict[str, str] | None:
    """The exemplar of a fact about a turn: its ids, the turn's dropped when both do not
    fit the OpenMetrics limit (None when the conversation's alone does not). Never text."""
    whole = {"conversation_id": conversation_id}
    choices = [{**whole, "turn_id": turn_id}, whole] if turn_id else [whole]
    return next((ids for ids in choices if _runes(ids) <= EXEMPLAR_RUNES), None)


def _runes(labels: dict[str, str]) -> int:
    return sum(len(name) + len(value) for name, value in labels.items())


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
RECOVERY_SECONDS_BUCKETS = (5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600)
RECOVERY_TURNS_BUCKETS = (1, 2, 3, 4, 5, 6, 8, 10)


class Metrics:
    """The worker's metrics on their own registry (tests build as many as they like).

    `process` adds prometheus-client's process and Python collectors (`process_*`: resident
    memory, CPU seconds, open files; `python_info`, `python_gc_*`), which a worker exports:
    its memory is the first thing to watch."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process: bool = False) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        if process:
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)
        self.ledger = Ledger(DURABLE)
        r.register(self.ledger)
        self.consumed = Counter(EVENTS_CONSUMED, "Records read from the turns topic.", registry=r)
        self.redelivered = Counter(
            EVENTS_REDELIVERED,
            "Records skipped because they were already applied (replay after restart).",
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
        self.grm_backend_state = Gauge(
            GRM_BACKEND_STATE,
            "The GRM backend's circuit: 0 closed (or a local model), 1 half-open, 2 open.",
            registry=r,
        )
        self.offset_resets = Counter(
            OFFSET_RESETS,
            "Times a partition's next record was already deleted by retention and reading "
            "continued at the log start (those records were never applied).",
            registry=r,
        )
        self.rereads = Counter(
            REREADS,
            "Seeks back to re-read records the consumer skipped (stream/offsets.py).",
            registry=r,
        )
        self.worker = Info(WORKER, "Worker build and scorer versions.", registry=r)
        self.scorer_errors = Counter(
            SCORER_ERRORS,
            "Turns a scorer failed on (backend down, model error), by scorer.",
            ["scorer"],
            registry=r,
        )
        # --- reactions and recovery ---
        self.episodes_open = Gauge(
            EPISODES_OPEN, "Recovery episodes open in this worker's state.", registry=r
        )
        self.recovery_seconds = Histogram(
            RECOVERY_SECONDS,
            "From an episode opening to the reply that recovered it (event time).",
            buckets=RECOVERY_SECONDS_BUCKETS,
            registry=r,
        )
        self.recovery_turns = Histogram(
            RECOVERY_TURNS,
            "Assistant turns from an episode opening to the reply that recovered it.",
            buckets=RECOVERY_TURNS_BUCKETS,
            registry=r,
        )
        # --- GRM cascade ---
        self.grm_budget = Gauge(
            GRM_BUDGET, "GRM verdicts available now in the budget's token bucket.", registry=r
        )
        # --- periodic validation ---
        self.benchmark_metric = Gauge(
            BENCHMARK_METRIC,
            "The last validation run's metrics per scorer version and task.",
            ["scorer", "version", "task", "metric"],
            registry=r,
        )
        self.benchmark_last_success = Gauge(
            BENCHMARK_LAST_SUCCESS,
            "Unix time the last validation run of a scorer and task succeeded.",
            ["scorer", "task"],
            registry=r,
        )
        self.benchmark_failures = Counter(
            BENCHMARK_FAILURES,
            "Validation runs that failed (logged, never fatal).",
            ["scorer", "task"],
            registry=r,
        )
        self.benchmark_seconds = Gauge(
            BENCHMARK_SECONDS,
            "Wall time of the last validation run.",
            ["scorer", "task"],
            registry=r,
        )

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
            LABELS,
            LABEL_VERDICTS,
            TURNS_SCORED,
            TURN_VERDICTS,
            SCORE,
            BATCH_SIZE,
            SCORING_SECONDS,
            EVENT_TO_SCORE_SECONDS,
            CONSUMER_LAG,
            CONVERSATIONS,
            EVICTED,
            ASSIGNMENTS,
            ASSIGNED_PARTITIONS,
            REREADS,
            OFFSET_RESETS,
            UNKNOWN_FIELDS,
            GRM_BACKEND_STATE,
            f"{WORKER}_info",
            SCORER_ERRORS,
            REACTIONS,
            JUDGE_REACTION_PAIRS,
            EPISODES_OPENED,
            EPISODES_CLOSED,
            EPISODES_OPEN,
            RECOVERY_SECONDS,
            RECOVERY_TURNS,
            GRM_VERDICTS,
            GRM_SKIPPED,
            GRM_BUDGET,
            BENCHMARK_METRIC,
            BENCHMARK_LAST_SUCCESS,
            BENCHMARK_FAILURES,
            BENCHMARK_SECONDS,
        }
    )
