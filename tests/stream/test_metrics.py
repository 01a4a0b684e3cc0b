from __future__ import annotations

from prometheus_client import generate_latest

from stream.metrics import BoundedLabel, Metrics, all_metric_names


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
    metrics.rejected.labels("duplicate").inc()
    metrics.feedback.labels("copy").inc()
    metrics.turns_scored.labels("s", "good", "Other", "web").inc()
    metrics.score.labels("s").observe(0.3)
    metrics.scoring_seconds.labels("s").observe(0.3)
    metrics.consumer_lag.labels("0").set(3)
    metrics.describe_worker("0.1.0", [("s", "v1")])
    metrics.scorer_errors.labels("grm").inc()
    metrics.reactions.labels("complaint", "Other", "web").inc()
    metrics.judge_reaction_pairs.labels("s", "bad", "true").inc()
    metrics.episodes_opened.labels("reaction", "Other", "web").inc()
    metrics.episodes_closed.labels("recovered", "Other", "web").inc()
    metrics.grm_verdicts.labels("recovery").inc()
    metrics.grm_skipped.labels("budget").inc()
    metrics.benchmark_metric.labels("s", "v1", "task1", "avg_acc").set(0.7)
    metrics.benchmark_last_success.labels("s", "task1").set(1.0)
    metrics.benchmark_failures.labels("s", "task1").inc()
    metrics.benchmark_seconds.labels("s", "task1").set(3.0)
    text = generate_latest(metrics.registry).decode()
    for name in all_metric_names():
        assert f"\n{name}" in text or text.startswith(name) or f" {name} " in text, name
