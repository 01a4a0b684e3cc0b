"""Options that several commands take: one spelling, one type and one help text each."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from benchmark.tasks import get_task, known_tasks  # the one list of tasks (~0.1 s: numpy)

if TYPE_CHECKING:
    TaskName = str
else:
    TaskName = StrEnum("TaskName", [(name, name) for name in known_tasks()])


BatchSize = Annotated[int, typer.Option("--batch-size", min=1, help="Dialogues per score() call.")]
# The old spelling, still accepted (hidden): `resolve_batch(batch_size, batch)` picks one.
OldBatch = Annotated[
    int | None,
    typer.Option("--batch", min=1, hidden=True, help="Deprecated: use --batch-size."),
]

Task = Annotated[
    TaskName,
    typer.Option(
        "--task",
        help="; ".join(f"{name} ({get_task(name).title})" for name in known_tasks()) + ".",
    ),
]


def resolve_batch(value: int, old: int | None) -> int:
    """--batch-size, unless the deprecated --batch was given (with a warning)."""
    if old is None:
        return value
    typer.echo("uxmon: warning: --batch is deprecated; use --batch-size", err=True)
    return old


# `uxmon serve` and `uxmon config` take these; each overrides its setting's variable.
Broker = Annotated[
    str | None, typer.Option(help="Kafka bootstrap HOST:PORT[,...] (overrides UXMON_BROKER).")
]
MetricsPort = Annotated[
    int | None, typer.Option(help="Port of /metrics (overrides UXMON_METRICS_PORT).")
]
Scorer = Annotated[
    list[str] | None,
    typer.Option(help="Scorer run on every turn, repeatable (overrides UXMON_SCORERS)."),
]
AppId = Annotated[
    str | None, typer.Option(help="Consumer group / app id (overrides UXMON_APP_ID).")
]


def setting_overrides(
    broker: str | None, metrics_port: int | None, scorer: list[str] | None, app_id: str | None
) -> dict[str, Any]:
    """The settings fields the options above name, by field name (None: not given)."""
    return {
        "broker": broker,
        "metrics_port": metrics_port,
        "scorers": scorer or None,
        "app_id": app_id,
    }


def when(text: str | None, now: datetime, option: str) -> datetime | None:
    """A window option (`--since 2d`, an ISO time) as a time; a usage error names `option`."""
    from stream.inspection import InspectionError, parse_when

    if text is None:
        return None
    try:
        return parse_when(text, now)
    except InspectionError as exc:
        raise typer.BadParameter(str(exc), param_hint=option) from None


# The Kafka clients of the CLI (replay, inspect, labels export).
KafkaBroker = Annotated[
    str, typer.Option(envvar="UXMON_BROKER", help="Kafka bootstrap HOST:PORT[,...]")
]
ReadTimeout = Annotated[
    float,
    typer.Option(min=0.1, help="Seconds to wait for the broker, the topic or new records"),
]
ReadProgress = Annotated[bool, typer.Option(help="Show reading progress on stderr")]
