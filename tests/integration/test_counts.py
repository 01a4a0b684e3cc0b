"""Counts that survive any crash (stream/ledger.py), against the real broker and workers."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from stream.local import LocalWorker
from tests.support.services import produce, score_records
from tests.support.services import worker as spawn_worker
from tests.support.traffic import assistant_turns, conversations, encode

pytestmark = pytest.mark.integration

INTERRUPTED = re.compile(
    r"Restore complete!(?:(?!Worker ready).)*Restoring state from changelog", re.DOTALL
)
KEYWORD = {"scorers": "tests.support.scorers:Keyword", "batch_max": 4}


def test_a_kill_between_a_batchs_states_and_its_mark_loses_no_count(
    broker: str,
    names: dict[str, str],
    start_worker: Callable[..., LocalWorker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The third batch's conversation states reach the broker and the worker dies before
    its partition mark does. The next worker skips those records as applied; it must
    still count them, from the shares the states carry, and count nothing twice."""
    events = conversations(24, exchanges=2)
    expected = assistant_turns(events)
    monkeypatch.setenv("UXMON_TEST_DIE_BEFORE_MARK", "3")
    first = start_worker(faults=True, **KEYWORD)
    produce(broker, names["turns_topic"], map(encode, events))
    deadline = time.monotonic() + 120
    while first.alive():
        assert time.monotonic() < deadline, first.log_tail()
        time.sleep(0.2)
    time.sleep(4)  # its session expires (see test_pipeline's restart test)

    monkeypatch.delenv("UXMON_TEST_DIE_BEFORE_MARK")
    second = start_worker(**KEYWORD)
    second.wait_for("uxmon_turns_scored_total", len(expected))
    time.sleep(3)  # anything counted twice would show up now
    assert {s["turn_id"] for s in score_records(broker, names["scores_topic"], 0, 5)} == expected
    assert second.total("uxmon_turns_scored_total") == len(expected)
    assert second.total("uxmon_turn_verdicts_total") == len(expected)
    # Each conversation's first reply is answered by the user's second message.
    assert second.total("uxmon_reactions_total") == 24
    assert second.total("uxmon_events_redelivered_total") > 0, "nothing was replayed"
    assert "counts of a batch cut short restored" in second.log_path.read_text()


def test_a_rebalance_during_the_tables_recovery_restarts_no_partitions_totals(
    broker: str,
    names: dict[str, str],
    workdir: Path,
    start_worker: Callable[..., LocalWorker],
) -> None:
    """A worker is frozen while its table's recovery starts (as a broker outage leaves
    one), and the group moves on without it; when it thaws, a rebalance interrupts that
    recovery. faust signals the interrupted recovery as complete: a mark reconciled then,
    from a table that lacks it, restarts the partition's totals from zero (seen in a
    fault run)."""
    # No standby copies: faust's recovery then goes from reading straight to its end.
    settings = {**KEYWORD, "batch_max": 64, "standby_replicas": 0}
    events = conversations(4000, exchanges=1)
    first = start_worker(**settings)
    produce(broker, names["turns_topic"], map(encode, events))
    first.wait_for("uxmon_turns_scored_total", 4000, 300)
    first.stop()
    time.sleep(4)  # its session expires

    frozen = spawn_worker(
        broker,
        names["app_id"],
        workdir,
        grm="",
        **{k: v for k, v in names.items() if k != "app_id"},
        **settings,
    )
    frozen.start()
    try:
        deadline = time.monotonic() + 120
        while "assigned 4 partitions" not in frozen.log_path.read_text(errors="replace"):
            assert frozen.alive() and time.monotonic() < deadline, frozen.log_tail()
            time.sleep(0.005)
        assert frozen.process is not None
        frozen.process.send_signal(signal.SIGSTOP)  # before its changelog is read
        try:
            joining = start_worker(**settings)
        finally:
            frozen.process.send_signal(signal.SIGCONT)
        later = conversations(100, exchanges=1, prefix="later")
        produce(broker, names["turns_topic"], map(encode, later))
        workers = (frozen, joining)
        deadline = time.monotonic() + 180
        while sum(w.total("uxmon_events_consumed_total") for w in workers) < len(later):
            assert time.monotonic() < deadline, frozen.log_tail() + joining.log_tail()
            time.sleep(0.5)
        time.sleep(3)
        # A recovery faust called complete, then another one before the worker was ready.
        interrupted = INTERRUPTED.search(frozen.log_path.read_text(errors="replace"))
        assert interrupted, "no rebalance interrupted the recovery"
        assert sum(w.total("uxmon_turns_scored_total") for w in workers) == 4100
    finally:
        frozen.stop()
