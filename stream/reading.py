"""Reading each partition in log order against the live consumer (the rules: stream/offsets.py).

Where each partition starts after a rebalance, seeking back over a hole until the missing
records arrive, skipping offsets the log holds no record for, noticing a partition that
stopped although the log holds more, and what may be committed.

The reader owns the commit. faust (0.15) chooses the offsets to commit from the records
acked since the last commit plus the "gaps" its read loop saw, offsets it jumped over,
and it counts a gap as acked once any later record is. After a seek back to a hole, the
records fetched before the seek leave such a gap across the very records being re-read:
acking the first re-read record would commit past all of them, applied or not, and a
crash then loses them. So the committed offset is the reader's: where every partition's
cursor stood when the last batch had its outputs and its state on the broker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import faust
from faust.types import TP
from prometheus_client import Counter

from stream.offsets import Cursors, Hole
from stream.records import Record

log = logging.getLogger("uxmon")

REREAD_WAIT_S = 0.5  # first pause after a seek back to a hole; doubles while it stays
REREAD_MAX_WAIT_S = 8.0
ASSIGNMENT_GRACE_S = 10.0


class Reader:
    """The cursors of the partitions this worker owns, kept true to what the consumer does."""

    def __init__(
        self,
        app: faust.App,
        topic: str,
        broker: str,
        rereads: Counter,
        offset_resets: Counter,
        client_options: dict[str, Any] | None = None,
    ) -> None:
        self.app = app
        self.topic = topic
        self.broker = broker  # for the probe consumer
        self.client_options = client_options or {}  # its TLS and SASL
        self.rereads = rereads
        self.offset_resets = offset_resets
        self.cursors = Cursors()
        self._assignment = 0  # bumped per assignment: tasks of an older one stand down
        self._rereading: dict[TP, asyncio.Future[None]] = {}
        self._starting: asyncio.Future[None] | None = None
        self._idle_cursors: dict[TP, int] = {}  # cursors at the last tick the agent idled
        self._settled: dict[TP, int] = {}  # what may be committed: all before it is done
        self._handled: dict[TP, int] = {}  # last offset handled, since the assignment
        self._assigned_at = time.monotonic()

    def assigned(self, owned: list[TP]) -> None:
        """A new assignment: nothing is applied until each partition's start is known."""
        self._own_commits()
        self._assignment += 1
        self.cursors.reset()
        self._settled = {}
        self._handled = {}
        self._assigned_at = time.monotonic()
        self._rereading.clear()  # their tasks see the new assignment and stand down
        self._idle_cursors.clear()
        if owned:
            self._starting = asyncio.ensure_future(self._start(self._assignment, owned))

    def admit(self, batch: Sequence[Any]) -> list[Any]:
        """The events of a take() batch to apply now, in order; the rest wait."""
        admission = self.cursors.admit([(e.message.tp, e.message.offset) for e in batch])
        for i in admission.wait:
            # Marked as acked by us, faust never counts it as done: never committed, it is
            # handed over again after the seek back to the cursor.
            batch[i].message.acked = True
        for hole in admission.holes.values():
            self._read_again(hole)
        return [batch[i] for i in admission.apply]

    def settled(self, records: Sequence[Record]) -> None:
        """The batch admitted last (`records`) has its outputs and state on the broker:
        everything before the cursors is done (batches run one at a time)."""
        self._settled = self.cursors.positions()
        last: dict[TP, int] = {}
        for record in records:
            last[TP(record.position.topic, record.position.partition)] = record.position.offset
        for tp in last.keys() - self._handled.keys():
            first = min(r.position.offset for r in records if r.position.partition == tp.partition)
            log.info("partition %d: first record handled from offset %d", tp.partition, first)
        self._handled.update(last)

    def owned(self) -> list[TP]:
        """The turns partitions this worker actively owns (its table also holds standby
        copies of others, which it must neither count nor change)."""
        return [tp for tp in self.app.consumer.assignment() if tp.topic == self.topic]

    def lags(self) -> dict[int, int]:
        """Records in the log not applied yet, per owned partition the reader has started."""
        consumer, cursors = self.app.consumer, self.cursors.positions()
        lags = {}
        for tp in self.owned():
            highwater, position = consumer.highwater(tp), cursors.get(tp)
            if highwater is not None and position is not None:
                lags[tp.partition] = max(0, highwater - position)
        return lags

    async def caught_up(self) -> set[int]:
        """Owned partitions with nothing left to read or handle.

        Fetched records wait in faust's buffers before a batch takes them, so a partition
        nothing was handled from since the assignment counts only after a grace period:
        its fetched backlog, if any, has been handled by then.
        """
        consumer = self.app.consumer
        settled = time.monotonic() - self._assigned_at >= ASSIGNMENT_GRACE_S
        ready = set()
        for tp in self.owned():
            highwater = consumer.highwater(tp)
            position = await consumer.position(tp)
            if highwater is None or position is None or position < highwater:
                continue
            handled = self._handled.get(tp)
            if settled if handled is None else handled >= highwater - 1:
                ready.add(tp.partition)
        return ready

    def committable(self, partitions: Iterable[TP]) -> dict[TP, int]:
        """The offsets faust commits: the settled cursors, where they moved on."""
        consumer = self.app.consumer
        offsets = {}
        for tp in partitions:
            consumer._new_offset(tp)  # type: ignore[attr-defined]  # only to trim faust's ack lists
            offset = self._settled.get(tp)
            if offset is not None and consumer._should_commit(tp, offset):  # type: ignore[attr-defined]
                offsets[tp] = offset
        return offsets

    def _own_commits(self) -> None:
        # The one step of faust's commit that chooses offsets (faust 0.15.3,
        # Consumer._filter_committable_offsets); tests/stream/test_reading.py pins both
        # faust's behaviour that needs this and the replacement.
        self.app.consumer._filter_committable_offsets = self.committable  # type: ignore[attr-defined]

    def find_stalls(self, *, busy: bool) -> None:
        """Read a partition again when its cursor stands still over two ticks the agent
        idled although the log holds more: the seek meant to bring those records back can
        itself be undone by faust, and then no record arrives to reveal the hole."""
        if busy:
            return  # a batch is running: the cursor may be about to move
        cursors = self.cursors.positions()
        for tp, cursor in cursors.items():
            highwater = self.app.consumer.highwater(tp)
            stuck = self._idle_cursors.get(tp) == cursor
            if stuck and highwater is not None and highwater > cursor:
                self._read_again(Hole(tp, cursor, highwater))
        self._idle_cursors = cursors

    async def _start(self, assignment: int, owned: list[TP]) -> None:
        """Once faust's rebalance is over, seek each partition to its committed offset and
        start applying records from there (stream/offsets.py says why faust's own seek is
        not enough). Records handed over before this wait and are read again."""
        consumer = self.app.consumer
        while assignment == self._assignment:
            if self.app.rebalancing:
                await asyncio.sleep(0.05)
                continue
            try:
                committed = await consumer.seek_to_committed()  # type: ignore[attr-defined]
                offsets = {tp: committed.get(tp) or 0 for tp in owned}
                never_committed = [tp for tp, offset in offsets.items() if offset <= 0]
                if never_committed:  # a new group reads from the start of the log
                    offsets.update(await consumer.earliest_offsets(*never_committed))
                if assignment != self._assignment:
                    return
                await consumer.seek_wait(offsets)  # also resets faust's read offsets
            except Exception as exc:  # e.g. the broker is away: nothing is applied meanwhile
                log.warning("could not seek to the committed offsets (%s); retrying", exc)
                await asyncio.sleep(REREAD_WAIT_S)
                continue
            if assignment == self._assignment:
                self.cursors.start(offsets)
                log.info("applying records from the committed offsets of %d partitions", len(owned))
            return

    def _read_again(self, hole: Hole) -> None:
        if hole.tp not in self._rereading:
            task = asyncio.ensure_future(self._reread(hole, self._assignment))
            self._rereading[hole.tp] = task

    async def _reread(self, hole: Hole, assignment: int) -> None:
        tp = hole.tp

        def still_missing() -> bool:
            return assignment == self._assignment and self.cursors.next(tp) == hole.expected

        try:
            await self._seek_back(hole, still_missing)
        except Exception as exc:  # a later hole or stall check starts over
            log.warning("partition %d: re-reading failed (%s)", tp.partition, exc)
        finally:
            if assignment == self._assignment:
                self._rereading.pop(tp, None)

    async def _seek_back(self, hole: Hole, still_missing: Callable[[], bool]) -> None:
        """Seek a partition back to its cursor, again with a growing pause, until the
        missing records arrive. Offsets the log holds no record for are skipped instead:
        a broker is asked directly, since the consumer's own bookkeeping lost them."""
        tp, consumer = hole.tp, self.app.consumer
        probe = await first_record_at_or_after(
            self.broker, tp, hole.expected, **self.client_options
        )
        present = probe.first
        if present is None:
            return  # nothing to read there (yet); a later hole or stall check retries
        if probe.log_start is not None and still_missing():
            log.warning(
                "partition %d: offsets %d to %d were deleted by retention before they were "
                "applied; continuing at the log start %d",
                tp.partition,
                hole.expected,
                probe.log_start - 1,
                probe.log_start,
            )
            self.offset_resets.inc()
            self.cursors.skip_to(tp, probe.log_start)
            await consumer.seek_wait({tp: probe.log_start})
            return
        if present > hole.expected and still_missing():
            log.debug(  # routine in a compacted or transactional topic
                "partition %d: offsets %d to %d hold no records (compaction or "
                "transaction markers); skipping them",
                tp.partition,
                hole.expected,
                present - 1,
            )
            self.cursors.skip_to(tp, present)
            await consumer.seek_wait({tp: present})  # what came after waited: read it again
            return
        pause = REREAD_WAIT_S
        while still_missing():
            log.info(  # counted in uxmon_partition_rereads_total
                "partition %d: records from offset %d did not reach the worker (offset "
                "%d is there); reading them again",
                tp.partition,
                hole.expected,
                hole.seen,
            )
            await consumer.seek_wait({tp: hole.expected})
            self.rereads.inc()
            # Records fetched before the seek can still move faust's read offset past the
            # re-read ones; then only another seek helps. A busy agent is why the pause
            # grows instead of ending the re-reads.
            await asyncio.sleep(pause)
            pause = min(2 * pause, REREAD_MAX_WAIT_S)


@dataclass(frozen=True, slots=True)
class Probe:
    """What the log holds at or after an offset."""

    first: int | None  # the first record's offset; None: nothing there (yet)
    log_start: int | None = None  # set when the offset is below the log's start


async def first_record_at_or_after(broker: str, tp: TP, offset: int, **options: Any) -> Probe:
    """Where the first record at or after `offset` is, asked by a consumer of its own.

    An offset below the log's start (retention deleted it) is reported with that start,
    never silently reset: the probe has no reset policy of its own, and it asks for the
    start first, as some brokers answer a fetch there with the next record they hold.
    """
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.errors import OffsetOutOfRangeError

    probe = AIOKafkaConsumer(
        bootstrap_servers=broker, enable_auto_commit=False, auto_offset_reset="none", **options
    )
    partition = TopicPartition(tp.topic, tp.partition)
    try:
        await probe.start()
        probe.assign([partition])
        start = (await probe.beginning_offsets([partition]))[partition]
        if start > offset:
            return Probe(start, log_start=start)
        probe.seek(partition, offset)
        try:
            fetched = await probe.getmany(partition, timeout_ms=2000, max_records=1)
        except OffsetOutOfRangeError:
            return Probe(None)  # past the end (or deleted just now): a later check asks again
    except Exception as exc:  # no answer: a later hole or stall check asks again
        log.warning("partition %d: could not read the log (%s)", tp.partition, exc)
        return Probe(None)
    finally:
        await probe.stop()
    records = fetched.get(partition, [])
    return Probe(records[0].offset if records else None)
