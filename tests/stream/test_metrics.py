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
    text = generate_latest(metrics.registry).decode()
    for name in all_metric_names():
        assert f"\n{name}" in text or text.startswith(name) or f" {name} " in text, name
