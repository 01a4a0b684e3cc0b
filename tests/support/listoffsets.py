"""A loopback proxy in front of tansu on S3 storage, correcting its ListOffsets LATEST.

The note below says why; tests/support/faults_run.py and the retention test use it.
"""

from __future__ import annotations

import asyncio
import json
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from stream.broker import free_port
from tests.support.s3 import BUCKET, CLUSTER, S3

# tansu's S3 engine keeps the log, the table changelogs and the committed offsets across a
# broker restart, but answers ListOffsets LATEST wrong: the value sticks at an early offset
# while the log grows (after 12 one-record batches it still says 1). faust's table recovery
# reads a changelog up to that offset only, so a worker taking over a partition recovers
# almost none of its state, and faust's consistency check crashes a worker whose own copy
# is past it. Real Kafka answers right, so the run puts a proxy in front of tansu that
# answers LATEST with the partition's high watermark, which tansu keeps right in its S3
# metadata. Everything else passes through untouched. (`fix_list_offsets=False` runs
# without it, to see the broker bug's effect.) With LATEST right the workers can also batch
# their writes as in production (see FaultRun._batching).
#
# Another S3-engine flaw the run only reports: around a restart tansu can acknowledge a
# retried batch as a duplicate (offset -1) that never reached the log.


def high_watermark(client: Any, topic: str, partition: int) -> int | None:
    """The next offset of a partition, from tansu's own metadata object (None: no log).
    `client` is a boto3 S3 client (moto refuses unsigned reads)."""
    key = f"clusters/{CLUSTER}/topics/{topic}/partitions/{partition:010d}/watermark.json"
    try:
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    except client.exceptions.NoSuchKey:
        return None
    high = json.loads(body).get("high")
    return int(high) if high is not None else None


LIST_OFFSETS = 2  # Kafka API key
LATEST = -1  # ListOffsets timestamp meaning "the end of the log"


class _Cursor:
    """Reads big-endian Kafka primitives from a frame."""

    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def take(self, fmt: str) -> int:
        [value] = struct.unpack_from(">" + fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return int(value)

    def string(self) -> str:
        size = self.take("h")
        text = self.data[self.pos : self.pos + max(size, 0)].decode()
        self.pos += max(size, 0)
        return text


def latest_asked(request: bytes) -> tuple[int, int, set[tuple[str, int]]] | None:
    """(correlation id, version, partitions asked for LATEST) of a ListOffsets v1-v5
    request frame (the versions aiokafka speaks); None for anything else."""
    r = _Cursor(request)
    api_key, version, correlation = r.take("h"), r.take("h"), r.take("i")
    if api_key != LIST_OFFSETS or not 1 <= version <= 5:
        return None
    r.string()  # client id
    r.take("i")  # replica id
    if version >= 2:
        r.take("b")  # isolation level
    asked = set()
    for _ in range(r.take("i")):
        topic = r.string()
        for _ in range(r.take("i")):
            partition = r.take("i")
            if version >= 4:
                r.take("i")  # current leader epoch
            if r.take("q") == LATEST:
                asked.add((topic, partition))
    return correlation, version, asked


def latest_positions(response: bytes, version: int) -> list[tuple[str, int, int, int]]:
    """(topic, partition, byte position, offset) of each error-free answer in a ListOffsets
    v1-v5 response frame: offsets are fixed width, so they are replaced in place."""
    r = _Cursor(response, 4)  # after the correlation id
    if version >= 2:
        r.take("i")  # throttle time
    found = []
    for _ in range(r.take("i")):
        topic = r.string()
        for _ in range(r.take("i")):
            partition, error = r.take("i"), r.take("h")
            r.take("q")  # timestamp
            where = r.pos
            offset = r.take("q")
            if version >= 4:
                r.take("i")  # leader epoch
            if error == 0:
                found.append((topic, partition, where, offset))
    return found


class ListOffsetsFix:
    """A loopback TCP proxy in front of tansu (see the note above): each client connection
    gets its own upstream connection; frames pass through in order, and the LATEST answers
    of ListOffsets are replaced by the high watermark. When tansu goes away, so do the
    client connections, as they would with the broker itself."""

    def __init__(self, port: int, upstream: int, s3: S3) -> None:
        self.port, self.upstream, self.s3 = port, upstream, s3.client()
        self.fixed: list[dict[str, Any]] = []  # every answer replaced: what tansu said
        self._writers: set[asyncio.StreamWriter] = set()  # of open connections, both ends
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._listen(), self._loop).result(10)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", self.port)

    async def _close(self) -> None:
        # Closing the sockets ends every connection's pumps: no task is left cancelled.
        self._server.close()
        for writer in self._writers:
            writer.close()
        deadline = time.monotonic() + 5
        while self._writers and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def _connection(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        try:
            broker_in, broker_out = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:  # tansu is down: the client sees its connection close
            client_out.close()
            return
        asked: dict[int, tuple[int, set[tuple[str, int]]]] = {}
        self._writers |= {client_out, broker_out}
        pumps = [
            asyncio.ensure_future(self._requests(client_in, broker_out, asked)),
            asyncio.ensure_future(self._responses(broker_in, client_out, asked)),
        ]
        await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        client_out.close()  # one side ended: end the other, so its pump ends too
        broker_out.close()
        await asyncio.wait(pumps)
        self._writers -= {client_out, broker_out}

    async def _requests(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        asked: dict[int, tuple[int, set[tuple[str, int]]]],
    ) -> None:
        while frame := await _frame(source):
            if (parsed := latest_asked(frame)) is not None and parsed[2]:
                asked[parsed[0]] = (parsed[1], parsed[2])
            sink.write(len(frame).to_bytes(4, "big") + frame)
            await sink.drain()

    async def _responses(
        self,
        source: asyncio.StreamReader,
        sink: asyncio.StreamWriter,
        asked: dict[int, tuple[int, set[tuple[str, int]]]],
    ) -> None:
        while frame := await _frame(source):
            correlation = int.from_bytes(frame[:4], "big", signed=True)
            if correlation in asked:
                frame = await self._fix(frame, *asked.pop(correlation))
            sink.write(len(frame).to_bytes(4, "big") + frame)
            await sink.drain()

    async def _fix(self, frame: bytes, version: int, asked: set[tuple[str, int]]) -> bytes:
        fixed = bytearray(frame)
        for topic, partition, where, offset in latest_positions(frame, version):
            if (topic, partition) not in asked:
                continue
            high = await asyncio.to_thread(high_watermark, self.s3, topic, partition)
            if high is not None and high != offset:
                struct.pack_into(">q", fixed, where, high)
                self.fixed.append(
                    {"topic": topic, "partition": partition, "tansu": offset, "high": high}
                )
        return bytes(fixed)


async def _frame(source: asyncio.StreamReader) -> bytes | None:
    """One size-prefixed Kafka frame; None at the end of the connection."""
    try:
        size = int.from_bytes(await source.readexactly(4), "big", signed=True)
        return await source.readexactly(size)
    except (asyncio.IncompleteReadError, ConnectionError):
        return None


@contextmanager
def fixed_broker(s3: S3) -> Iterator[str]:
    """A tansu on `s3` behind the proxy; yields the address clients bootstrap from."""
    port, advertised = free_port(), free_port()
    with s3.broker(port, advertised_port=advertised):
        proxy = ListOffsetsFix(advertised, port, s3)
        proxy.start()
        try:
            yield f"127.0.0.1:{advertised}"
        finally:
            proxy.stop()
