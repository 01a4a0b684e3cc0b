"""Every dashboard query runs on a real Prometheus scraping a real exporter of the worker's
metrics and evaluating the shipped recording rules (rendered with `correction: live`), and
returns series; the corrected dissatisfaction rate matches benchmark.correction and is the
rate the alerts read."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import start_http_server

from benchmark.correction import rogan_gladen
from dashboards import recorded, render, rules, ux_overview
from dashboards.coverage import panel_queries, variable_queries
from stream.broker import free_port
from stream.metrics import Metrics
from tests.support.ledger import count
from tests.support.prometheus import Prometheus

pytestmark = pytest.mark.integration

# Grafana fills these in before a query reaches Prometheus; the values are what a user
# would pick (All = ".*").
VARIABLES = {
    "$__rate_interval": "15s",
    "$__range": "1m",
    "$scenario": ".*",
    "$assistant": ".*",
    "$job": ".*",
    "$scorer": ".*",
}
# The UX overview's scorer variable is single-valued (one heatmap per scorer).
VARIABLES_BY_DASHBOARD = {ux_overview.UID: {"$scorer": "ux_judge"}}
BAD_SHARE, BAD_ACC, GOOD_ACC = 0.3, 0.7, 0.8
# Explicit thumbs per tick: enough for the live accuracy's 100-per-class minimum in 16
# ticks. Live sensitivity 1/2, live specificity 1, unlike the benchmark's figures.
THUMBS = 10
LIVE_SENSITIVITY, LIVE_SPECIFICITY = 0.5, 1.0


def substitute(expr: str, uid: str = "") -> str:
    chosen = {**VARIABLES, **VARIABLES_BY_DASHBOARD.get(uid, {})}
    for name, value in sorted(chosen.items(), key=lambda item: -len(item[0])):
        expr = expr.replace(name, value)
    left = re.findall(r"\$\w+", expr)
    assert not left, f"unknown template variables {left} in {expr}"
    return expr


def feed(metrics: Metrics) -> None:
    """One tick of traffic touching every metric (10 turns, 3 of them bad)."""
    m = metrics
    scenario, assistant = "Casual Chat & Companionship", "bot-a"
    m.consumed.inc(12)
    m.redelivered.inc()
    count(m, "uxmon_events_rejected_total", "invalid_json")
    count(m, "uxmon_feedback_total", "thumbs_down")
    count(m, "uxmon_feedback_total", "thumbs_up")
    count(m, "uxmon_labels_total", "explicit", "thumbs_down")
    count(m, "uxmon_labels_total", "implicit", "satisfied")
    for verdict, label in (("bad", "disliked"), ("good", "disliked"), ("good", "liked")):
        count(
            m, "uxmon_label_verdicts_total", "ux_judge", "v1", verdict, label, "explicit", n=THUMBS
        )
    bad = round(10 * BAD_SHARE)
    count(m, "uxmon_turns_scored_total", "ux_judge", "bad", scenario, assistant, n=bad)
    count(m, "uxmon_turns_scored_total", "ux_judge", "good", scenario, assistant, n=10 - bad)
    count(m, "uxmon_turns_scored_total", "grm", "good", scenario, assistant, n=2)
    count(m, "uxmon_turn_verdicts_total", "bad", "ux_judge", scenario, assistant, n=3)
    count(m, "uxmon_turn_verdicts_total", "good", "ux_judge", scenario, assistant, n=5)
    count(m, "uxmon_turn_verdicts_total", "good", "grm", scenario, assistant, n=2)
    for score in (0.1, 0.45, 0.55, 0.9):
        m.score.labels("ux_judge").observe(score)
        m.score.labels("grm").observe(score)
    m.batch_size.observe(8)
    m.scoring_seconds.labels("ux_judge").observe(0.2)
    m.scoring_seconds.labels("grm").observe(1.5)
    m.event_to_score.observe(0.4)
    m.consumer_lag.labels("0").set(3)
    m.consumer_lag.labels("1").set(0)
    m.conversations.set(42)
    m.evicted.inc()
    m.assignments.inc()
    m.rereads.inc()
    m.assigned_partitions.set(4)
    m.scorer_errors.labels("grm").inc()
    for reaction in ("complaint", "rephrase", "satisfied", "no_follow_up"):
        count(m, "uxmon_reactions_total", reaction, scenario, assistant)
    count(m, "uxmon_judge_reaction_pairs_total", "ux_judge", "bad", "true")
    count(m, "uxmon_judge_reaction_pairs_total", "ux_judge", "good", "false", n=2)
    count(m, "uxmon_judge_reaction_pairs_total", "ux_judge", "good", "true")
    count(m, "uxmon_recovery_episodes_opened_total", "reaction", scenario, assistant)
    count(m, "uxmon_recovery_episodes_closed_total", "recovered", scenario, assistant)
    count(m, "uxmon_recovery_episodes_closed_total", "gave_up", scenario, assistant)
    m.episodes_open.set(2)
    m.recovery_seconds.observe(45)
    m.recovery_turns.observe(2)
    count(m, "uxmon_grm_verdicts_total", "uncertain")
    count(m, "uxmon_grm_skipped_total", "confident", n=8)
    m.grm_budget.set(17)
    m.benchmark_failures.labels("grm", "task1").inc()


def describe(metrics: Metrics) -> None:
    m = metrics
    m.describe_worker("0.1.0", [("ux_judge", "v1"), ("grm", "v1")])
    for metric, value in {
        "bad_acc": BAD_ACC,
        "good_acc": GOOD_ACC,
        "avg_acc": 0.75,
        "auroc": 0.8,
        "ece": 0.05,
        "n": 200,
    }.items():
        m.benchmark_metric.labels("ux_judge", "v1", "task1", metric).set(value)
    m.benchmark_metric.labels("grm", "v1", "task2", "good_pct").set(0.5)
    m.benchmark_metric.labels("grm", "v1", "task3", "recovery_rate").set(0.1)
    m.benchmark_last_success.labels("ux_judge", "task1").set(time.time() - 60)
    m.benchmark_seconds.labels("ux_judge", "task1").set(12.5)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    metrics = Metrics(process=True)  # as the worker builds them
    describe(metrics)
    port = free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=metrics.registry)
    try:
        workdir: Path = tmp_path_factory.mktemp("prometheus")
        written = rules.write(rules.RulesConfig(correction="live"), workdir / "rendered")
        rule_files = [path for path in written if path.parent.name == "rules"]
        with Prometheus(
            workdir, [f"127.0.0.1:{port}"], scrape_interval="1s", rule_files=rule_files
        ) as running:
            # Enough scrapes for every 15 s rate window to see the counters grow.
            for _ in range(16):
                feed(metrics)
                time.sleep(1)
            yield running
    finally:
        server.shutdown()
        thread.join(5)


def all_queries() -> list[tuple[str, str]]:
    found = []
    for uid, dashboard in render.as_dicts().items():
        for expr in (*panel_queries(dashboard), *variable_queries(dashboard)):
            found.append((uid, expr))
    return found


def to_instant(expr: str) -> str:
    """label_values(metric, label) is Grafana's, not PromQL: query the metric itself."""
    found = re.fullmatch(r"label_values\((\w+), (\w+)\)", expr)
    return f"count by ({found[2]}) ({found[1]})" if found else expr


@pytest.mark.parametrize(("uid", "expr"), all_queries())
def test_query_returns_series(prometheus: Prometheus, uid: str, expr: str) -> None:
    query = to_instant(substitute(expr, uid))
    assert prometheus.query(query), f"{uid}: no series for {query}"


def test_corrected_rate_is_rogan_gladen_with_the_alerts_accuracy(prometheus: Prometheus) -> None:
    # A window over all the traffic: the counters stopped when feeding ended, and this test
    # may run long after (a 15 s window would then hold no increase).
    whole = "1h"
    uid = ux_overview.UID  # its $scorer picks the scorer the rates read

    def value(expr: str) -> list[float]:
        return [float(s["value"][1]) for s in prometheus.query(substitute(expr, uid))]

    # With the rules loaded, the live figures the alerts' correction uses; the benchmark's
    # remain the fallback where the rules are not.
    assert value(ux_overview.benchmark_accuracy("bad_acc")) == pytest.approx([BAD_ACC])
    sensitivity = ux_overview.correction_accuracy(recorded.CORRECTION_SENSITIVITY, "bad_acc")
    specificity = ux_overview.correction_accuracy(recorded.CORRECTION_SPECIFICITY, "good_acc")
    assert value(sensitivity) == pytest.approx([LIVE_SENSITIVITY])
    assert value(specificity) == pytest.approx([LIVE_SPECIFICITY])

    expected = rogan_gladen(BAD_SHARE, LIVE_SENSITIVITY, LIVE_SPECIFICITY).prevalence
    assert expected is not None
    assert value(ux_overview.raw_dissatisfaction(window=whole)) == pytest.approx([BAD_SHARE])
    assert value(ux_overview.corrected_dissatisfaction(window=whole)) == pytest.approx([expected])
    by_scenario = ux_overview.corrected_dissatisfaction("scenario", window=whole)
    assert value(by_scenario) == pytest.approx([expected])
    # the alerts' series (one assistant here, so the same population)
    assert value("uxmon:dissatisfaction_rate_corrected:ratio_rate1h") == pytest.approx([expected])
