"""The fault-injection run of bench/faults.py at CI size: three workers in one group, two
SIGKILLs, a rolling restart and a broker restart while traffic flows; no assistant turn
may be lost, and every one is counted exactly once, by the workers and by Prometheus."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.faults_run import QUICK, run_faults

pytestmark = pytest.mark.integration


# A quiet 2-core machine takes ~235 s (three workers' starts and restarts dominate); twice
# that, so a loaded machine reports the run's own catch-up failure instead of a timeout.
@pytest.mark.timeout(480)
def test_killed_and_restarted_workers_lose_no_turn_and_count_each_once(tmp_path: Path) -> None:
    result = run_faults(QUICK, tmp_path)
    scores, counters = result["scores"], result["counters"]
    kinds = [f["kind"] for f in result["faults"]]
    evidence = f"see {tmp_path} and {result['invariants']}"

    assert kinds.count("sigkill") >= QUICK.kills
    assert "rolling_restart" in kinds and "broker_restart" in kinds
    assert result["traffic"]["events_sent"] >= QUICK.events
    assert result["committed"] == result["highwater"], evidence  # the group caught up
    assert scores["missing"] == 0, scores["missing_turns"]  # (turn, partition, offset)
    assert scores["not_in_turns_topic"] == 0
    assert result["dead_letters"]["count"] == 0, result["dead_letters"]
    assert result["unexpected_exits"] == [], evidence
    # Every turn counted once, over every kill and restart: by the workers' durable
    # totals (stream/ledger.py), and by Prometheus on one unbroken series per partition.
    distinct = counters["distinct_assistant_turns"]
    assert counters["shown_by_workers_at_end"] == distinct, evidence
    assert counters["prometheus_last"] == distinct, evidence
    assert counters["prometheus_samples_reset_rule"] == distinct, evidence
    assert counters["prometheus_drops"] == 0, evidence
    assert counters["prometheus_series_with_instance"] == 0, evidence
    assert result["passed"], evidence
