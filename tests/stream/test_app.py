"""The worker's re-read of a partition after records did not reach it (stream/offsets.py
decides; stream/app.py seeks). The consumer and the log probe are recording stand-ins: the
real ones are exercised by the restart tests in tests/integration/test_pipeline.py."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import pytest
from faust.types import TP

import stream.app
from stream.app import Scorers, Service
from stream.metrics import Metrics
from stream.offsets import Hole
from stream.settings import Settings
from tests.support.scorers import Keyword

P0 = TP("uxmon.turns", 0)


class RecordingConsumer:
    def __init__(self) -> None:
        self.seeks: list[dict[TP, int]] = []
        self.highwaters: dict[TP, int] = {}

    async def seek_wait(self, partitions: Mapping[TP, int]) -> None:
        self.seeks.append(dict(partitions))

    def highwater(self, tp: TP) -> int | None:
        return self.highwaters.get(tp)


class Log:
    """Answers the probe: the first offset at or after the asked one that holds a record."""

    def __init__(self, present: set[int]) -> None:
        self.present = present

    async def first(self, tp: TP, offset: int) -> int | None:
        return min((o for o in self.present if o >= offset), default=None)


@pytest.fixture
def service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Service:
    monkeypatch.setattr(stream.app, "REREAD_WAIT_S", 0.01)
    monkeypatch.setattr(stream.app, "REREAD_MAX_WAIT_S", 0.02)
    worker = Service(Settings(datadir=tmp_path), Scorers([Keyword()], None), Metrics())
    worker.app.consumer = RecordingConsumer()  # type: ignore[assignment]
    worker.cursors.start({P0: 12})
    return worker


def consumer(service: Service) -> RecordingConsumer:
    recording = service.app.consumer
    assert isinstance(recording, RecordingConsumer)
    return recording


def with_log(service: Service, monkeypatch: pytest.MonkeyPatch, present: set[int]) -> None:
    monkeypatch.setattr(service, "_first_record_at_or_after", Log(present).first)


def test_a_hole_is_read_again_until_it_fills_and_once_per_hole(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_log(service, monkeypatch, set(range(100)))

    async def scenario() -> None:
        admission = service.cursors.admit([(P0, 12), (P0, 15)])
        service._read_again(admission.holes[P0])
        service._read_again(admission.holes[P0])  # reported again while being re-read
        await asyncio.sleep(0.05)  # several re-reads: the records do not come at once
        service.cursors.admit([(P0, 13)])  # now they do
        await asyncio.gather(*service._rereading.values())

    asyncio.run(scenario())
    seeks = consumer(service).seeks
    assert len(seeks) >= 2 and set(map(str, seeks)) == {str({P0: 13})}
    assert service.metrics.rereads._value.get() == len(seeks)
    assert service.cursors.next(P0) == 14


def test_offsets_the_log_holds_no_record_for_are_skipped(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_log(service, monkeypatch, {12, 15, 16})  # 13 and 14: transaction markers, say

    async def scenario() -> None:
        admission = service.cursors.admit([(P0, 12), (P0, 15)])
        service._read_again(admission.holes[P0])
        await asyncio.gather(*service._rereading.values())

    asyncio.run(scenario())
    assert consumer(service).seeks == [{P0: 15}]  # 15 waited, so it is read again
    assert service.cursors.next(P0) == 15
    assert service.cursors.admit([(P0, 15)]).apply == [0]


def test_a_new_assignment_stops_the_re_read_of_the_old_one(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_log(service, monkeypatch, set(range(100)))

    async def scenario() -> None:
        service._read_again(Hole(P0, 12, 20))
        await asyncio.sleep(0.005)
        service._assignment += 1  # what _on_assigned does, without a broker
        service.cursors.reset()
        await asyncio.sleep(0.05)

    asyncio.run(scenario())
    assert consumer(service).seeks == [{P0: 12}]


def test_a_cursor_that_stands_still_while_the_worker_idles_is_read_again(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_log(service, monkeypatch, set(range(100)))
    consumer(service).highwaters[P0] = 12

    async def scenario() -> None:
        await service._find_stalls()
        await service._find_stalls()  # caught up: highwater == cursor
        assert service._rereading == {}
        consumer(service).highwaters[P0] = 20  # the log grew, nothing arrived
        await service._find_stalls()
        assert P0 in service._rereading
        await asyncio.sleep(0.005)
        service.cursors.admit([(P0, 12)])
        await asyncio.gather(*service._rereading.values())

    asyncio.run(scenario())
    assert consumer(service).seeks[0] == {P0: 12}


def test_a_running_batch_is_not_a_stall(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    consumer(service).highwaters[P0] = 20

    async def scenario() -> None:
        async with service._state_lock:
            await service._find_stalls()
            await service._find_stalls()

    asyncio.run(scenario())
    assert service._rereading == {}
