"""Counts that survive any crash (stream/ledger.py), against the real broker and workers."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from stream.local import LocalWorker
from tests.support.services import produce, score_records
from tests.support.traffic import assistant_turns, conversations, encode

pytestmark = pytest.mark.integration

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
