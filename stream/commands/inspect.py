"""`uxmon inspect`: from an alert to the conversations behind it, read off the scores topic.

The command reads the scores topic once, from the earliest offset up to the high-water mark
each partition's first fetch reports, then stops: records published meanwhile wait for the
next run. The high-water mark comes from fetch responses, not from ListOffsets (end
offsets), which some Kafka-compatible brokers get wrong. It joins no consumer group and
commits nothing, so it never disturbs the service's group or another reader.

What it reports and how the filters treat missing fields is stream/inspection.py's
(docs/inspect.md); only ids, times, scores and outcomes are printed, never text.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

from stream.broker import BrokerError
from stream.inspection import (
    DEFAULT_LIMIT,
    DEFAULT_SCORER,
    DEFAULT_STREAK,
    InspectionError,
    Query,
    Report,
    build_report,
    parse_when,
)

if TYPE_CHECKING:
    from kafka import KafkaConsumer

POLL_MS = 500
ID_COLUMNS = {"conversation", "turn", "turns", "episode (turn)", "last attempt"}


def _decode(value: bytes | None) -> Any:
    """A record's JSON value, or None (counted as skipped) when it is not JSON."""
    if value is None:
        return None
    try:
        return json.loads(value)
    except ValueError:
        return None


def read_scores(
    broker: str,
    topic: str,
    timeout_s: float,
    progress: bool,
    client_options: dict[str, Any] | None = None,
) -> list[Any]:
    """Every record of `topic` from the earliest offset to the high-water mark seen at
    the start, decoded. Raises BrokerError when the topic is missing or reading stalls
    for `timeout_s`. `client_options`: TLS and SASL (stream/security.py)."""
    from kafka import KafkaConsumer
    from kafka.errors import KafkaError

    try:
        consumer = KafkaConsumer(
            bootstrap_servers=broker.split(","),
            group_id=None,
            enable_auto_commit=False,
            allow_auto_create_topics=False,  # a mistyped name must not create a topic
            request_timeout_ms=int(timeout_s * 1000) + 1000,
            client_id="uxmon-inspect",
            **(client_options or {}),
        )
    except KafkaError as exc:
        raise BrokerError(f"cannot talk Kafka to {broker}: {_one_line(exc)}") from None
    try:
        return _read_all(consumer, broker, topic, timeout_s, progress)
    except KafkaError as exc:
        raise BrokerError(f"reading {topic} on {broker} failed: {_one_line(exc)}") from None
    finally:
        consumer.close()


def _one_line(exc: Exception) -> str:
    """A client error as one line (Kafka client errors carry no record content)."""
    detail = " ".join(str(exc).split())[:300]
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _read_all(
    consumer: KafkaConsumer, broker: str, topic: str, timeout_s: float, progress: bool
) -> list[Any]:
    from kafka import TopicPartition

    partitions = _partitions(consumer, topic, timeout_s)
    if not partitions:
        raise BrokerError(f"no topic {topic} on {broker}; set --topic or UXMON_SCORES_TOPIC")
    assigned = [TopicPartition(topic, p) for p in sorted(partitions)]
    consumer.assign(assigned)
    consumer.seek_to_beginning()
    start = {tp: consumer.position(tp) for tp in assigned}
    targets: dict[Any, int] = {}  # the high-water mark of each partition's first fetch
    values: list[Any] = []
    columns = (TextColumn(f"reading {topic}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("read", total=None)
        last_progress = time.monotonic()
        while True:
            batch = consumer.poll(timeout_ms=POLL_MS)
            # A fetch response sets the high-water mark before its records are returned.
            for tp in assigned:
                if tp not in targets and (high := consumer.highwater(tp)) is not None:
                    targets[tp] = high
                    if len(targets) == len(assigned):
                        bar.update(task, total=sum(targets[t] - start[t] for t in assigned))
            for tp, records in batch.items():
                kept = [r for r in records if r.offset < targets.get(tp, r.offset + 1)]
                values.extend(_decode(r.value) for r in kept)
                bar.advance(task, len(kept))
            if batch:
                last_progress = time.monotonic()
            behind = [tp for tp in assigned if tp not in targets or _short(consumer, tp, targets)]
            if not behind:
                return values
            for tp in behind:
                consumer.resume(tp)
            for tp in set(assigned) - set(behind):
                consumer.pause(tp)  # read up to the mark: later records wait for the next run
            if time.monotonic() - last_progress > timeout_s:
                where = ", ".join(
                    f"partition {tp.partition} at {consumer.position(tp)} of {targets.get(tp, '?')}"
                    for tp in behind
                )
                raise BrokerError(f"reading {topic} stalled for {timeout_s:g} s: {where}")


def _short(consumer: KafkaConsumer, tp: Any, targets: dict[Any, int]) -> bool:
    """True while `tp` is still short of its target offset."""
    return int(consumer.position(tp)) < targets[tp]


def _partitions(consumer: KafkaConsumer, topic: str, timeout_s: float) -> set[int]:
    deadline = time.monotonic() + timeout_s
    while True:
        partitions: set[int] = consumer.partitions_for_topic(topic) or set()
        if partitions or time.monotonic() >= deadline:
            return partitions
        time.sleep(0.25)


def _when(text: str | None, now: datetime, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_when(text, now)
    except InspectionError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


def _utc(value: str | None) -> str | None:
    """A record's ISO time as UTC to the second, for reading down a column."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return value
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for column in columns:
        # Ids are what the table is for: folded onto more lines, never cut short.
        table.add_column(column, overflow="fold" if column in ID_COLUMNS else "ellipsis")
    for row in rows:
        table.add_row(*(_cell(v) for v in row))
    return table


def _shown(total: int, shown: int) -> str:
    return f"{total}" if shown == total else f"{shown} of {total}"


def render(report: Report, topic: str, console: Console) -> None:
    """The report as three tables with a header line of what was read and asked."""
    q = report.query
    since = q.since.isoformat() if q.since else "start"
    until = q.until.isoformat() if q.until else "now"
    window = f"{since} .. {until}"
    filters = ", ".join(
        f"{name}={value}"
        for name, value in (
            ("scenario", q.scenario),
            ("assistant", q.assistant),
            ("model_version", q.model_version),
        )
        if value is not None
    )
    console.print(
        f"{report.records} records read from {topic} ({report.skipped} skipped); "
        f"window {window}" + (f"; {filters}" if filters else "")
    )
    worst = report.worst_turns
    if not worst.total and q.scorer not in report.scorers_seen:
        seen = ", ".join(report.scorers_seen) or "none"
        console.print(f"no turn scored by {q.scorer}; scorers seen: {seen}")
    console.print(
        _table(
            f"Worst turns by {q.scorer} ({_shown(worst.total, len(worst.items))})",
            [
                "p_satisfied",
                "verdict",
                "conversation",
                "turn",
                "event time (UTC)",
                "scenario",
                "assistant",
                "model",
                "recovery",
            ],
            [
                [
                    t.p_satisfied,
                    t.verdict,
                    t.conversation_id,
                    t.turn_id,
                    _utc(t.event_ts),
                    t.scenario,
                    t.assistant_id,
                    t.model_version,
                    "yes" if t.recovery else "",
                ]
                for t in worst.items
            ],
        )
    )
    episodes = report.episodes
    console.print(
        _table(
            f"Failed or abandoned recovery episodes, newest first "
            f"({_shown(episodes.total, len(episodes.items))})",
            [
                "outcome",
                "cause",
                "conversation",
                "episode (turn)",
                "last attempt",
                "attempts",
                "closed (UTC)",
                "scenario",
                "assistant",
                "model",
            ],
            [
                [
                    e.outcome,
                    e.cause,
                    e.conversation_id,
                    e.episode_id,
                    e.last_attempt,
                    e.attempts,
                    _utc(e.closed_ts),
                    e.scenario,
                    e.assistant_id,
                    e.model_version,
                ]
                for e in episodes.items
            ],
        )
    )
    streaks = report.streaks
    console.print(
        _table(
            f"Complaint streaks of {q.streak} or more "
            f"({_shown(streaks.total, len(streaks.items))})",
            [
                "complaints",
                "conversation",
                "turns",
                "first (UTC)",
                "last (UTC)",
                "scenario",
                "assistant",
                "model",
            ],
            [
                [
                    s.complaints,
                    s.conversation_id,
                    " ".join(s.turn_ids),
                    _utc(s.first_ts),
                    _utc(s.last_ts),
                    s.scenario,
                    s.assistant_id,
                    s.model_version,
                ]
                for s in streaks.items
            ],
        )
    )


def inspect(
    broker: Annotated[
        str, typer.Option(envvar="UXMON_BROKER", help="Kafka bootstrap HOST:PORT[,...]")
    ] = "127.0.0.1:9092",
    topic: Annotated[str, typer.Option(envvar="UXMON_SCORES_TOPIC", help="Scores topic")] = (
        "uxmon.scores"
    ),
    since: Annotated[
        str | None,
        typer.Option(help="Window start: a duration back from now (30m, 1h, 2d) or ISO time"),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Window end: a duration back from now or an ISO time")
    ] = None,
    scenario: Annotated[str | None, typer.Option(help="Only this scenario")] = None,
    assistant: Annotated[str | None, typer.Option(help="Only this assistant_id")] = None,
    model_version: Annotated[str | None, typer.Option(help="Only this model_version")] = None,
    scorer: Annotated[
        str, typer.Option(help="Scorer whose P(satisfied) ranks the worst turns")
    ] = DEFAULT_SCORER,
    limit: Annotated[int, typer.Option(min=1, help="Most rows per section")] = DEFAULT_LIMIT,
    streak: Annotated[
        int, typer.Option(min=1, help="Complaints in a row that make a streak")
    ] = DEFAULT_STREAK,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (stable keys)")] = False,
    progress: Annotated[bool, typer.Option(help="Show reading progress on stderr")] = True,
    timeout: Annotated[
        float,
        typer.Option(min=0.1, help="Seconds to wait for the broker, the topic or new records"),
    ] = 10.0,
) -> None:
    """The worst-scored turns, failed or abandoned recovery episodes and complaint streaks
    on the scores topic, by id (never text). Reads the topic once, from the start."""
    from stream.broker import check_reachable
    from stream.commands.serve import load_settings

    now = datetime.now(UTC)
    try:
        query = Query(
            since=_when(since, now, "--since"),
            until=_when(until, now, "--until"),
            scenario=scenario,
            assistant=assistant,
            model_version=model_version,
            scorer=scorer,
            limit=limit,
            streak=streak,
        )
    except InspectionError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since/--until") from None
    security = load_settings().kafka_security()  # UXMON_SECURITY_PROTOCOL, UXMON_SSL_*, ...
    check_reachable(broker, timeout_s=min(timeout, 5.0), security=security)
    records = read_scores(broker, topic, timeout, progress, security.kafka_python())
    report = build_report(records, query)
    if as_json:
        typer.echo(json.dumps({"topic": topic, **report.to_json()}, indent=2, ensure_ascii=False))
    else:
        render(report, topic, Console(width=160) if not Console().is_terminal else Console())
