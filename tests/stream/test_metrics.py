from __future__ import annotations

from prometheus_client import generate_latest

from stream.metrics import EXEMPLAR_RUNES, BoundedLabel, Metrics, all_metric_names, exemplar_ids
from tests.support.ledger import count


def test_bounded_label_caps_cardinality() -> None:
    free = BoundedLabel(limit=2)
    assert [free(v) for v in ["web", "app", "api", "web", None]] == [
        "web",
        "app",
        "other",
        "web",
        "none",
    ]
    fixed = BoundedLabel(limit=99, allowed=["web"])
    assert fixed("app") == "other" and fixed("web") == "web"


def test_every_declared_name_is_exported() -> None:
    metrics = Metrics()
    count(metrics, "uxmon_events_rejected_total", "duplicate")
    count(metrics, "uxmon_feedback_total", "copy")
    count(metrics, "uxmon_turns_scored_total", "s", "good", "Other", "web")
    metrics.score.labels("s").observe(0.3)
    metrics.scoring_seconds.labels("s").observe(0.3)
    metrics.consumer_lag.labels("0").set(3)
    metrics.describe_worker("0.1.0", [("s", "v1")])
    metrics.scorer_errors.labels("grm").inc()
    count(metrics, "uxmon_reactions_total", "complaint", "Other", "web")
    count(metrics, "uxmon_judge_reaction_pairs_total", "s", "bad", "true")
    count(metrics, "uxmon_recovery_episodes_opened_total", "reaction", "Other", "web")
    count(metrics, "uxmon_recovery_episodes_closed_total", "recovered", "Other", "web")
    count(metrics, "uxmon_grm_verdicts_total", "recovery")
    count(metrics, "uxmon_grm_skipped_total", "budget")
    metrics.benchmark_metric.labels("s", "v1", "task1", "avg_acc").set(0.7)
    metrics.benchmark_last_success.labels("s", "task1").set(1.0)
    metrics.benchmark_failures.labels("s", "task1").inc()
    metrics.benchmark_seconds.labels("s", "task1").set(3.0)
    text = generate_latest(metrics.registry).decode()
    for name in all_metric_names():
        assert f"\n{name}" in text or text.startswith(name) or f" {name} " in text, name


def test_exemplar_ids_fit_the_openmetrics_limit() -> None:
    assert exemplar_ids("c1", "t1") == {"conversation_id": "c1", "turn_id": "t1"}
    assert exemplar_ids("c1", None) == {"conversation_id": "c1"}
    long_turn = "t" * (EXEMPLAR_RUNES - len("conversation_id") - len("turn_id") - 1)
    assert exemplar_ids("c1", long_turn) == {"conversation_id": "c1"}  # both would not fit
    assert exemplar_ids("c" * EXEMPLAR_RUNES, "t1") is None
