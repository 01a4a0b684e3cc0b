"""The live pipeline against a real broker and a real worker process."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from stream.local import LocalWorker
from tests.integration.conftest import TEST_SCORER
from tests.support.services import committed_offsets, produce, read_topic, score_records
from tests.support.traffic import assistant_turns, conversations, encode, turn_event

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]


def test_every_assistant_turn_is_scored_exactly_once(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    events = conversations(60, exchanges=2)
    expected = assistant_turns(events)
    worker = start_worker()

    produce(broker, names["turns_topic"], map(encode, events))
    worker.wait_for("uxmon_turns_scored_total", len(expected))
    scores = score_records(broker, names["scores_topic"], len(expected))

    assert sorted(s["turn_id"] for s in scores) == sorted(expected)
    assert all("reply" not in s and "user_message" not in s for s in scores)  # no text by default
    assert all(len(s["scores"]) == 1 and 0 <= s["scores"][0]["p_satisfied"] <= 1 for s in scores)
    assert worker.total("uxmon_turns_scored_total") == len(expected)
    assert worker.total("uxmon_events_consumed_total") == len(events)
    assert worker.total("uxmon_events_rejected_total") == 0
    assert worker.total("uxmon_batch_size_sum") == len(expected)


def test_bad_input_goes_to_the_dead_letter_topic_and_the_stream_goes_on(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    t0 = datetime.now(UTC) - timedelta(minutes=1)
    good = [
        turn_event("ok-1", "u1", "user", t0),
        turn_event("ok-1", "a1", "assistant", t0 + timedelta(seconds=1)),
        turn_event("ok-2", "u1", "user", t0),
        turn_event("ok-2", "a1", "assistant", t0 + timedelta(seconds=3)),
    ]

    def raw(event: dict) -> bytes:
        return json.dumps(event, ensure_ascii=False).encode()

    schema_bad = turn_event("bad-s", "a1", "assistant", t0)
    del schema_bad["role"]
    bad: list[tuple[bytes | None, bytes, str]] = [
        (b"bad-u", b"\xff\xfe\x00not utf8", "undecodable"),
        (b"bad-j", b'{"schema_version": 1, "type": ', "invalid_json"),
        (b"bad-o", b"[1, 2, 3]", "not_an_object"),
        (
            b"bad-v",
            raw({**turn_event("bad-v", "u1", "user", t0), "schema_version": 2}),
            "unknown_schema_version",
        ),
        (
            b"bad-t",
            raw({**turn_event("bad-t", "u1", "user", t0), "type": "reaction"}),
            "unknown_type",
        ),
        (b"bad-s", raw(schema_bad), "schema_violation"),
        (b"bad-l", raw(turn_event("bad-l", "u1", "user", t0, text="长" * 600)), "over_limit"),
        (
            b"bad-f",
            raw(turn_event("bad-f", "u1", "user", datetime.now(UTC) + timedelta(hours=2))),
            "future_timestamp",
        ),
        (b"ok-1", raw(good[1]), "duplicate"),  # the same assistant turn again
        (
            b"ok-2",
            raw(turn_event("ok-2", "a0", "assistant", t0 - timedelta(seconds=30))),
            "out_of_order",
        ),
        (b"someone-else", raw(turn_event("bad-k", "u1", "user", t0)), "key_mismatch"),
    ]
    worker = start_worker(max_text_chars=500)

    produce(broker, names["turns_topic"], [encode(e) for e in good[:2]])
    produce(broker, names["turns_topic"], [(k, v) for k, v, _ in bad[:9]])
    produce(broker, names["turns_topic"], [encode(e) for e in good[2:]])
    produce(broker, names["turns_topic"], [(k, v) for k, v, _ in bad[9:]])

    dead = read_topic(broker, names["dlq_topic"], len(bad))
    scores = score_records(broker, names["scores_topic"], 2)

    by_value = {base64.b64decode(d["value_b64"]): d for d in dead}
    assert len(dead) == len(bad)
    for _key, value, reason in bad:
        record = by_value[value]
        assert record["reason"] == reason, (reason, record["detail"])
        assert record["topic"] == names["turns_topic"] and record["offset"] >= 0
        assert "长长长" not in record["detail"] and "你好" not in record["detail"]
    assert sorted((s["conversation_id"], s["turn_id"]) for s in scores) == [
        ("ok-1", "a1"),
        ("ok-2", "a1"),
    ]
    assert worker.alive()
    for _, _, reason in bad:
        assert worker.total("uxmon_events_rejected_total", reason=reason) == 1
    assert worker.total("uxmon_turns_scored_total") == 2  # the duplicate never counts twice


@pytest.mark.parametrize("how", ["kill -9", "SIGTERM"])
def test_a_worker_stopped_mid_replay_loses_nothing_and_counts_once(
    broker: str,
    names: dict[str, str],
    start_worker: Start,
    how: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    events = conversations(40, exchanges=2)
    expected = assistant_turns(events)
    monkeypatch.setenv("UXMON_TEST_SLOW_S", "1.0")  # so the stop lands inside a batch
    monkeypatch.setenv("UXMON_TEST_SLOW_INNER", TEST_SCORER)
    slow = {"scorers": "tests.support.scorers:Slow", "batch_max": 8}
    first = start_worker(**slow)
    # Every 8th record is broken: a replay must neither dead-letter nor count it twice.
    records, is_event = [], []
    for i, event in enumerate(events):
        records.append(encode(event))
        is_event.append(True)
        if i % 8 == 7:
            records.append((event["conversation_id"].encode(), b'{"schema_version": 1, "type": '))
            is_event.append(False)
    broken = is_event.count(False)
    everything = produce(broker, names["turns_topic"], records)
    positions = [p for p, keep in zip(everything, is_event, strict=True) if keep]
    first.wait_for("uxmon_turns_scored_total", len(expected) // 4)
    counted_low = first.total("uxmon_turns_scored_total")  # first counted at least this
    rejected_low = first.total("uxmon_events_rejected_total")
    if how == "kill -9":
        first.kill9()
        # The dead member stays in the group until its 3 s session expires; the embedded
        # broker then does not hand its partitions on (STACK.md), so let it expire first.
        time.sleep(4)
    else:
        first.stop()  # SIGTERM mid-batch: the batch finishes or is re-read, never lost
    # A turn is counted only after its score is on the broker, so the first worker
    # counted at most the turns it published. (With no time between the scrape and the
    # kill both bounds are equal.)
    published_by_first = {s["turn_id"] for s in score_records(broker, names["scores_topic"], 0, 20)}
    counted_high = len(published_by_first)
    assert counted_low <= counted_high < len(expected)
    rejected_high = len(read_topic(broker, names["dlq_topic"], 0, 5))  # published by first
    # Nothing the first worker committed may be unscored: the next worker starts after it.
    committed = committed_offsets(broker, names["app_id"], names["turns_topic"])
    skipped_unscored = [
        (partition, offset, event["turn_id"])
        for event, (partition, offset) in zip(events, positions, strict=True)
        if event["role"] == "assistant"
        and offset < committed.get(partition, 0)
        and event["turn_id"] not in published_by_first
    ]
    assert skipped_unscored == [], f"committed but never scored; committed={committed}"

    second = start_worker(**slow)
    unscored = [
        (partition, offset, event["turn_id"])
        for event, (partition, offset) in zip(events, positions, strict=True)
        if event["role"] == "assistant" and event["turn_id"] not in published_by_first
    ]
    try:
        second.wait_for("uxmon_turns_scored_total", len(expected))
    except TimeoutError as stalled:
        raise AssertionError(f"committed={committed}; left to score={unscored}") from stalled
    time.sleep(4)  # anything counted twice would show up now
    scores = score_records(broker, names["scores_topic"], len(expected))

    assert {s["turn_id"] for s in scores} == expected  # at least once
    # Exactly once in metrics: the second worker goes on from the first's durable totals
    # (stream/ledger.py), whatever the first had shown when it stopped.
    assert second.total("uxmon_turns_scored_total") == len(expected)
    # Broken records too: each dead-lettered and counted once over both lives.
    assert second.total("uxmon_events_rejected_total", reason="invalid_json") == broken
    assert rejected_low <= rejected_high <= broken
    assert second.total("uxmon_events_rejected_total") == broken  # no "duplicate"
    letters = read_topic(broker, names["dlq_topic"], broken)
    assert len(letters) >= broken  # every broken record reached the DLQ at least once


def test_a_ten_second_batch_does_not_cost_the_group_membership(
    broker: str, names: dict[str, str], start_worker: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UXMON_TEST_SLOW_S", "10")
    monkeypatch.setenv("UXMON_TEST_SLOW_INNER", TEST_SCORER)
    worker = start_worker(scorers="tests.support.scorers:Slow", batch_max=64)
    assert worker.total("uxmon_partition_assignments_total") == 1
    events = conversations(6, exchanges=1)

    produce(broker, names["turns_topic"], map(encode, events))
    started = time.monotonic()
    worker.wait_for("uxmon_turns_scored_total", 6, timeout_s=60)
    took = time.monotonic() - started
    time.sleep(4)  # a lost member would rejoin (and be re-assigned) within this

    assert took >= 10  # the batch really was slow
    assert worker.total("uxmon_partition_assignments_total") == 1  # no rebalance
    assert worker.total("uxmon_assigned_partitions") == 4


def test_idle_conversations_are_evicted_from_state(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    worker = start_worker(conversation_ttl_s=1, eviction_interval_s=1)
    produce(broker, names["turns_topic"], map(encode, conversations(5, exchanges=1)))
    worker.wait_for("uxmon_turns_scored_total", 5)
    worker.wait_for("uxmon_conversations_evicted_total", 5, timeout_s=30)
    assert worker.total("uxmon_conversations_in_state") == 0
