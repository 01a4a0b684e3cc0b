"""`uxmon inspect`: from an alert to the conversations behind it, read off the scores topic.

The command reads the scores topic once (stream/snapshot.py): from the earliest offset up
to the high-water mark at the start, joining no consumer group.

What it reports and how the filters treat missing fields is stream/inspection.py's
(docs/inspect.md); only ids, times, scores and outcomes are printed, never text.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from stream.commands.options import KafkaBroker, ReadProgress, ReadTimeout, when
from stream.inspection import (
    DEFAULT_LIMIT,
    DEFAULT_SCORER,
    DEFAULT_STREAK,
    InspectionError,
    Query,
    Report,
    build_report,
)
from stream.snapshot import read_topic

ID_COLUMNS = {"conversation", "turn", "turns", "episode (turn)", "last attempt"}


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
    broker: KafkaBroker = "127.0.0.1:9092",
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
    progress: ReadProgress = True,
    timeout: ReadTimeout = 10.0,
) -> None:
    """The worst-scored turns, failed or abandoned recovery episodes and complaint streaks
    on the scores topic, by id (never text). Reads the topic once, from the start."""
    from stream.broker import check_reachable
    from stream.commands.serve import load_settings

    now = datetime.now(UTC)
    try:
        query = Query(
            since=when(since, now, "--since"),
            until=when(until, now, "--until"),
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
    hint = "set --topic or UXMON_SCORES_TOPIC"
    records = read_topic(broker, topic, timeout, progress, security.kafka_python(), hint=hint)
    report = build_report(records, query)
    if as_json:
        typer.echo(json.dumps({"topic": topic, **report.to_json()}, indent=2, ensure_ascii=False))
    else:
        render(report, topic, Console(width=160) if not Console().is_terminal else Console())
