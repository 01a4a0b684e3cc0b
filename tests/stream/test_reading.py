"""Reading in log order against a consumer (stream/reading.py). The consumer and the log
probe are recording stand-ins: the real ones are exercised by tests/integration/
test_rereads.py and the restart tests in tests/integration/test_pipeline.py."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

import pytest
from faust.types import TP
from prometheus_client import CollectorRegistry, Counter

import stream.reading
from stream.offsets import Hole
from stream.reading import Probe, Reader

P0 = TP("uxmon.turns", 0)


class RecordingConsumer:
    def __init__(self) -> None:
        self.seeks: list[dict[TP, int]] = []
        self.highwaters: dict[TP, int] = {}

    async def seek_wait(self, partitions: Mapping[TP, int]) -> None:
        self.seeks.append(dict(partitions))

    def highwater(self, tp: TP) -> int | None:
        return self.highwaters.get(tp)


def log_holding(monkeypatch: pytest.MonkeyPatch, present: set[int]) -> None:
    """Answers the probe: the first offset at or after the asked one that holds a record."""

    async def first(broker: str, tp: TP, offset: int) -> Probe:
        start = min(present, default=0)
        if offset < start:  # retention deleted it
            return Probe(start, log_start=start)
        return Probe(min((o for o in present if o >= offset), default=None))

    monkeypatch.setattr(stream.reading, "first_record_at_or_after", first)


@pytest.fixture
def consumer() -> RecordingConsumer:
    return RecordingConsumer()


@pytest.fixture
def reader(consumer: RecordingConsumer, monkeypatch: pytest.MonkeyPatch) -> Reader:
    monkeypatch.setattr(stream.reading, "REREAD_WAIT_S", 0.01)
    monkeypatch.setattr(stream.reading, "REREAD_MAX_WAIT_S", 0.02)
    app = SimpleNamespace(consumer=consumer, rebalancing=False)
    registry = CollectorRegistry()
    rereads = Counter("rereads", "test", registry=registry)
    resets = Counter("resets", "test", registry=registry)
    reading = Reader(app, P0.topic, "127.0.0.1:1", rereads, resets)  # type: ignore[arg-type]
    reading.cursors.start({P0: 12})
    return reading


def message(offset: int) -> SimpleNamespace:
    return SimpleNamespace(message=SimpleNamespace(tp=P0, offset=offset, acked=False))


def test_events_past_a_hole_wait_unacked_and_the_hole_is_read_again(
    reader: Reader, consumer: RecordingConsumer, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_holding(monkeypatch, set(range(100)))
    batch = [message(12), message(15), message(16)]

    async def scenario() -> list[SimpleNamespace]:
        applied = reader.admit(batch)
        reader.admit([message(17)])  # the same hole again: still one re-read running
        await asyncio.sleep(0.05)  # several seeks: the records do not come at once
        assert reader.admit([message(13), message(14), message(15)])  # now they do
        await asyncio.gather(*reader._rereading.values())
        return applied

    assert asyncio.run(scenario()) == [batch[0]]
    assert [e.message.acked for e in batch] == [False, True, True]  # faust acks the first
    assert len(consumer.seeks) >= 2 and all(s == {P0: 13} for s in consumer.seeks)
    assert reader.rereads._value.get() == len(consumer.seeks)
    assert reader.cursors.next(P0) == 16


def test_offsets_the_log_holds_no_record_for_are_skipped(
    reader: Reader, consumer: RecordingConsumer, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_holding(monkeypatch, {12, 15, 16})  # 13 and 14: transaction markers, say

    async def scenario() -> None:
        reader.admit([message(12), message(15)])
        await asyncio.gather(*reader._rereading.values())

    asyncio.run(scenario())
    assert consumer.seeks == [{P0: 15}]  # 15 waited, so it is read again
    assert reader.rereads._value.get() == 0
    assert [e.message.offset for e in reader.admit([message(15)])] == [15]


def test_records_deleted_by_retention_move_the_cursor_to_the_log_start(
    reader: Reader, consumer: RecordingConsumer, monkeypatch: pytest.MonkeyPatch, caplog: Any
) -> None:
    log_holding(monkeypatch, {40, 41, 42})  # 12..39 are gone: retention outran the commit

    async def scenario() -> None:
        reader.admit([message(40)])  # faust's own reset jumped there; the cursor says 12
        await asyncio.gather(*reader._rereading.values())

    with caplog.at_level(logging.WARNING, logger="stream.reading"):
        asyncio.run(scenario())
    assert reader.cursors.next(P0) == 40 and consumer.seeks == [{P0: 40}]
    assert reader.offset_resets._value.get() == 1 and reader.rereads._value.get() == 0
    assert "deleted by retention" in caplog.text
    assert [e.message.offset for e in reader.admit([message(40)])] == [40]


def test_a_new_assignment_stops_the_re_read_of_the_old_one(
    reader: Reader, consumer: RecordingConsumer, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_holding(monkeypatch, set(range(100)))

    async def scenario() -> None:
        reader._read_again(Hole(P0, 12, 20))
        await asyncio.sleep(0.005)
        reader.assigned([])  # revoked everything: no start, cursors gone
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert consumer.seeks == [{P0: 12}]
    assert reader.cursors.next(P0) is None


def test_a_cursor_that_stands_still_while_the_agent_idles_is_read_again(
    reader: Reader, consumer: RecordingConsumer, monkeypatch: pytest.MonkeyPatch
) -> None:
    log_holding(monkeypatch, set(range(100)))
    consumer.highwaters[P0] = 12

    async def scenario() -> None:
        reader.find_stalls(busy=False)
        reader.find_stalls(busy=False)  # caught up: highwater == cursor
        assert reader._rereading == {}
        consumer.highwaters[P0] = 20  # the log grew, nothing arrived
        reader.find_stalls(busy=True)  # a batch is running: not a stall
        assert reader._rereading == {}
        reader.find_stalls(busy=False)
        assert P0 in reader._rereading
        await asyncio.sleep(0.005)
        reader.admit([message(12)])
        await asyncio.gather(*reader._rereading.values())

    asyncio.run(scenario())
    assert consumer.seeks[0] == {P0: 12}


def test_reading_starts_at_the_committed_offsets_once_the_rebalance_is_over(
    reader: Reader, consumer: RecordingConsumer
) -> None:
    p1 = TP("uxmon.turns", 1)

    async def seek_to_committed() -> dict[TP, int | None]:
        return {P0: 40, p1: None}  # p1: a new group, never committed

    async def earliest_offsets(*partitions: TP) -> dict[TP, int]:
        return {tp: 3 for tp in partitions}

    consumer.seek_to_committed = seek_to_committed  # type: ignore[attr-defined]
    consumer.earliest_offsets = earliest_offsets  # type: ignore[attr-defined]

    async def scenario() -> None:
        reader.app.rebalancing = True
        reader.assigned([P0, p1])
        await asyncio.sleep(0.1)
        assert reader.cursors.next(P0) is None  # not while faust is still rebalancing
        reader.app.rebalancing = False
        assert reader._starting is not None
        await reader._starting

    asyncio.run(scenario())
    assert consumer.seeks == [{P0: 40, p1: 3}]
    assert (reader.cursors.next(P0), reader.cursors.next(p1)) == (40, 3)


# The commit, against faust's own consumer bookkeeping (no broker: nothing is sent).


class FaustCommits:
    """faust's consumer for one topic, driven as its read loop and its commit timer are."""

    def __init__(self, app: Any) -> None:
        self.app, self.consumer = app, app.consumer

    @classmethod
    async def create(cls) -> FaustCommits:
        import faust

        app = faust.App("commits-test", broker="kafka://127.0.0.1:1")
        app.topics.add(app.topic(P0.topic))
        await app.topics._update_indices()  # registers the topic as acking, as a subscription does
        return cls(app)

    def ack(self, *offsets: int) -> None:
        from faust.types.tuples import Message

        for offset in offsets:
            self.consumer.ack(Message(P0.topic, 0, offset, 0.0, 0, None, None, b"k", b"v", None))

    async def jump(self, last_read: int, fetched: int) -> None:
        """What the read loop does when a fetch hands over `fetched` after `last_read`."""
        await self.consumer._add_gap(P0, last_read + 1, fetched)

    def commit(self) -> int | None:
        """One commit tick; returns what it committed, as faust records it afterwards."""
        offsets = self.consumer._filter_committable_offsets([P0])
        self.consumer._committed_offset.update(offsets)
        return offsets.get(P0)


def test_faust_alone_commits_past_records_being_re_read() -> None:
    """Why the reader owns the commit: 100-105 applied, 106-500 never handed over, and
    faust commits 501. If this starts failing, faust changed: re-check Reader.committable."""

    async def scenario() -> list[int | None]:
        faust_ = await FaustCommits.create()
        faust_.ack(100, 101, 102)
        commits = [faust_.commit()]
        await faust_.jump(102, 500)  # a fetch from before a seek back lands past a hole
        for offset in (103, 104, 105):  # the seek back: the re-read records, one by one
            faust_.ack(offset)
            commits.append(faust_.commit())
        commits.append(faust_.commit())
        return commits

    assert asyncio.run(scenario()) == [103, 104, 105, 106, 501]


def test_the_reader_commits_only_what_it_settled() -> None:
    async def scenario() -> list[int | None]:
        faust_ = await FaustCommits.create()
        registry = CollectorRegistry()
        counter = Counter("c", "test", registry=registry)
        reader = Reader(faust_.app, P0.topic, "127.0.0.1:1", counter, counter)
        reader.assigned([])  # takes over the commit
        reader.cursors.start({P0: 100})
        commits = []
        for batch in ([100, 101, 102], [103], [104, 105]):
            reader.cursors.admit([(P0, offset) for offset in batch])
            commits.append(faust_.commit())  # a tick while the batch runs: nothing new
            reader.settled([])
            faust_.ack(*batch)
            if batch == [103]:
                await faust_.jump(102, 500)
            commits.append(faust_.commit())
        commits.append(faust_.commit())
        return commits

    assert asyncio.run(scenario()) == [None, 103, None, 104, None, 106, None]
