"""`uxmon replay`: produce JSONL events to the turns topic, keyed by conversation_id."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from stream.commands.options import KafkaBroker


def read_events(path: Path) -> list[tuple[bytes | None, bytes]]:
    """(key, value) pairs: the key is the event's conversation_id; lines stay byte-exact."""
    pairs = []
    with path.open("rb") as f:
        for line in f:
            raw = line.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                cid = json.loads(raw).get("conversation_id")
            except (ValueError, AttributeError):
                cid = None  # still sent: the service dead-letters it with the reason
            pairs.append((cid.encode() if isinstance(cid, str) else None, raw))
    return pairs


def stamp_now(value: bytes) -> bytes:
    """The event with `ts` set to now: old sample traffic replays as if live."""
    from datetime import UTC, datetime

    try:
        event = json.loads(value)
    except ValueError:
        return value  # not JSON: sent as is, the service dead-letters it
    if not isinstance(event, dict) or "ts" not in event:
        return value
    event["ts"] = datetime.now(UTC).isoformat()
    return json.dumps(event, ensure_ascii=False).encode()


def produce(
    pairs: list[tuple[bytes | None, bytes]],
    broker: str,
    topic: str,
    rate: float,
    progress: bool,
    retime: bool = False,
    client_options: dict[str, Any] | None = None,
) -> int:
    """`client_options`: TLS and SASL (stream/security.py)."""
    from kafka import KafkaProducer

    producer = KafkaProducer(
        bootstrap_servers=broker.split(","),
        acks="all",
        linger_ms=5,
        max_block_ms=10_000,
        **(client_options or {}),
    )
    interval = 1.0 / rate if rate > 0 else 0.0
    started = time.monotonic()
    columns = (TextColumn("replay"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=not progress) as bar:
        task = bar.add_task("replay", total=len(pairs))
        for i, (key, value) in enumerate(pairs):
            if interval:
                delay = started + i * interval - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            producer.send(topic, key=key, value=stamp_now(value) if retime else value)
            bar.advance(task)
        producer.flush()
    producer.close()
    return len(pairs)


def replay(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="JSONL events")],
    broker: KafkaBroker = "127.0.0.1:9092",
    topic: Annotated[str, typer.Option(envvar="UXMON_TURNS_TOPIC", help="Turns topic")] = (
        "uxmon.turns"
    ),
    rate: Annotated[float, typer.Option(help="Events per second (0 = as fast as possible)")] = 0,
    progress: Annotated[bool, typer.Option(help="Show a progress bar")] = True,
    retime: Annotated[
        bool, typer.Option(help="Rewrite every ts to now (replay old data as live)")
    ] = False,
) -> None:
    """Produce the events of FILE in order, keyed by conversation_id."""
    from stream.broker import check_reachable
    from stream.commands.serve import load_settings

    security = load_settings().kafka_security()  # UXMON_SECURITY_PROTOCOL, UXMON_SSL_*, ...
    check_reachable(broker, security=security)
    pairs = read_events(file)
    sent = produce(pairs, broker, topic, rate, progress, retime, security.kafka_python())
    typer.echo(f"sent {sent} events to {topic} on {broker}")
