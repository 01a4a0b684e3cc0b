"""The fault-injection run of bench/faults.py at CI size: three workers in one group, two
SIGKILLs, a rolling restart and a broker restart while traffic flows; no assistant turn
may be lost, none counted twice, and a count missed only in a kill's window."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.faults_run import BATCH_MAX, QUICK, run_faults

pytestmark = pytest.mark.integration


@pytest.mark.timeout(240)
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
    # Each process's own final count, summed over every process: never a turn twice; a
    # SIGKILL between a batch's state write and its counting costs that batch's count.
    assert counters["lives_with_unknown_count"] == 0, result["lives"]
    distinct, counted = counters["distinct_assistant_turns"], counters["counted_by_worker_lives"]
    assert distinct - QUICK.kills * BATCH_MAX <= counted <= distinct, evidence
    # Prometheus saw no more than that (it misses what a process counted after its last
    # scrape, which the run reports as unscraped_at_exit).
    seen = counters["prometheus_samples_by_life"]
    assert seen + counters["unscraped_at_exit"] == counted
    assert result["passed"], evidence
