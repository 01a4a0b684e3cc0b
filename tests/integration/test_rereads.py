"""The log probe the worker's re-read asks before seeking back (stream/reading.py), against
the real broker: it must tell a hole of missing deliveries from offsets the log never held."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from faust.types import TP

from stream.local import LocalWorker
from stream.reading import first_record_at_or_after
from tests.support.listoffsets import fixed_broker
from tests.support.s3 import S3
from tests.support.services import committed_offsets, produce, score_records
from tests.support.services import worker as spawn_worker
from tests.support.traffic import assistant_turns, conversations, encode

pytestmark = pytest.mark.integration


def test_the_probe_finds_the_first_record_at_or_after_an_offset(
    broker: str, names: dict[str, str]
) -> None:
    topic = names["turns_topic"]
    positions = produce(broker, topic, [(b"one-key", b"{}")] * 5)
    [partition] = {p for p, _ in positions}
    tp = TP(topic, partition)

    async def probe(offset: int) -> int | None:
        return (await first_record_at_or_after(broker, tp, offset)).first

    assert asyncio.run(probe(0)) == 0
    assert asyncio.run(probe(3)) == 3
    assert asyncio.run(probe(5)) is None  # the end of the log: nothing to read there
    assert asyncio.run(probe(1000)) is None  # past it: no reset of its own to the end


def test_the_probe_steps_over_transaction_markers(broker: str, names: dict[str, str]) -> None:
    from kafka import KafkaProducer

    topic = names["turns_topic"]
    producer = KafkaProducer(bootstrap_servers=broker, transactional_id=names["app_id"])
    producer.init_transactions()
    offsets = []
    for _ in range(2):  # each commit writes a marker: an offset without a record
        producer.begin_transaction()
        offsets.append(producer.send(topic, key=b"one-key", value=b"{}").get(timeout=30))
        producer.commit_transaction()
    producer.close()
    first, second = (meta.offset for meta in offsets)
    assert second > first + 1, "expected a commit marker between the two records"
    tp = TP(topic, offsets[0].partition)
    probed = asyncio.run(first_record_at_or_after(broker, tp, first + 1))
    assert probed.first == second and probed.log_start is None


def test_a_worker_scores_every_turn_of_a_transactional_topic(
    broker: str, names: dict[str, str], start_worker: Callable[..., LocalWorker]
) -> None:
    """Every commit marker is a hole in the offsets: probed, skipped, never waited on."""
    from kafka import KafkaProducer

    events = conversations(6, exchanges=1)
    producer = KafkaProducer(bootstrap_servers=broker, transactional_id=names["app_id"])
    producer.init_transactions()
    for key, value in map(encode, events):
        producer.begin_transaction()
        producer.send(names["turns_topic"], key=key, value=value)
        producer.commit_transaction()
    producer.close()

    worker = start_worker(scorers="tests.support.scorers:Keyword")
    worker.wait_for("uxmon_turns_scored_total", 6, timeout_s=90)
    assert worker.total("uxmon_events_consumed_total") == len(events)
    assert worker.total("uxmon_partition_rereads_total") == 0  # markers are not re-read


def test_a_crash_while_a_hole_is_re_read_loses_nothing(
    broker: str,
    names: dict[str, str],
    start_worker: Callable[..., LocalWorker],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Offsets 4-29 of every partition vanish from the first fetch: the worker applies 0-3,
    sees 30 come next and reads the hole again, two records a batch, committing as it
    goes. Killed in the middle, it must have committed nothing it had not scored (faust's
    own commit would jump to 31 there: tests/stream/test_reading.py)."""
    events = conversations(40, exchanges=2)
    expected = assistant_turns(events)
    monkeypatch.setenv("UXMON_TEST_DROP", f"{names['turns_topic']}:4:30")
    monkeypatch.setenv("UXMON_TEST_SLOW_S", "0.3")
    slow = {"scorers": "tests.support.scorers:Slow", "batch_max": 2, "commit_interval_s": 0.2}
    first = start_worker(faults=True, **slow)
    # Records fetched before the worker starts applying are read again from the committed
    # offsets anyway: the drop must hit live reading.
    while "applying records from the committed offsets" not in first.log_tail():
        assert first.alive(), first.log_tail()
        time.sleep(0.2)
    positions = produce(broker, names["turns_topic"], map(encode, events))
    first.wait_for("uxmon_partition_rereads_total", 1)
    first.wait_for("uxmon_turns_scored_total", 12)
    time.sleep(1.5)  # several commits while the holes are being re-read
    first.kill9()
    time.sleep(4)  # its session expires (see test_pipeline's restart test)

    published = {s["turn_id"] for s in score_records(broker, names["scores_topic"], 0, 20)}
    assert len(published) < len(expected), "the kill came too late to test anything"
    committed = committed_offsets(broker, names["app_id"], names["turns_topic"])
    skipped_unscored = [
        (partition, offset)
        for event, (partition, offset) in zip(events, positions, strict=True)
        if event["role"] == "assistant"
        and offset < committed.get(partition, 0)
        and event["turn_id"] not in published
    ]
    assert skipped_unscored == [], f"committed but never scored; committed={committed}"

    monkeypatch.delenv("UXMON_TEST_DROP")
    second = start_worker(**slow)
    second.wait_for("uxmon_turns_scored_total", len(expected), timeout_s=180)
    scores = score_records(broker, names["scores_topic"], len(expected))
    assert {s["turn_id"] for s in scores} == expected


def produce_batch_by_batch(broker: str, topic: str, events: list[dict]) -> list[tuple[int, int]]:
    """One record per broker batch, so retention can cut between any two records."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=broker, acks="all", linger_ms=0)
    positions = []
    for key, value in map(encode, events):
        meta = producer.send(topic, key=key, value=value).get(timeout=30)
        positions.append((meta.partition, meta.offset))
    producer.close()
    return positions


def test_records_retention_deleted_before_they_were_applied_are_skipped_and_counted(
    names: dict[str, str], workdir: Path
) -> None:
    """The worker is away while retention deletes records it never applied: on return it
    resumes at the log start with a warning and a count, and the partition goes on."""
    topic = names["turns_topic"]
    keyword = {"scorers": "tests.support.scorers:Keyword", "grm": ""}
    topics = {k: v for k, v in names.items() if k != "app_id"}
    # The proxy makes tansu-on-S3 answer ListOffsets right, so the second worker's table
    # recovery reads the first's marks whole (tests/support/listoffsets.py).
    with S3(workdir) as s3, fixed_broker(s3) as address:
        before = conversations(8, exchanges=1, prefix="before")
        produce_batch_by_batch(address, topic, before)
        first = spawn_worker(address, names["app_id"], workdir, **keyword, **topics)
        try:
            first.start().wait_ready()
            first.wait_for("uxmon_turns_scored_total", 8)
        finally:
            first.stop()
        committed = committed_offsets(address, names["app_id"], topic)

        after = conversations(12, exchanges=1, prefix="after")
        positions = produce_batch_by_batch(address, topic, after)
        cut: dict[int, int] = {}  # partition -> the new log start, past the committed offset
        for partition in {p for p, _ in positions}:
            new = sorted(o for p, o in positions if p == partition)
            if len(new) >= 2:
                cut[partition] = new[1]
                assert new[0] >= committed.get(partition, 0)
                s3.delete_below(topic, partition, cut[partition])
        assert cut, "no partition got two records"
        survivors = {
            event["turn_id"]
            for event, (partition, offset) in zip(after, positions, strict=True)
            if event["role"] == "assistant" and offset >= cut.get(partition, 0)
        }

        second = spawn_worker(address, names["app_id"], workdir, **keyword, **topics)
        try:
            second.start().wait_ready()
            counted = len(survivors) + 8  # the first worker's 8 go on in the totals
            second.wait_for("uxmon_turns_scored_total", counted, timeout_s=90)
            time.sleep(2)  # anything deleted that still came through would be counted now
            assert second.total("uxmon_turns_scored_total") == counted
            assert second.total("uxmon_partition_offset_resets_total") == len(cut)
            assert "deleted by retention" in second.log_path.read_text()
            assert second.total("uxmon_consumer_lag_messages") == 0
        finally:
            second.stop()
