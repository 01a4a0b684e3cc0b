"""`uxmon serve`: run one worker."""

from __future__ import annotations

import logging
import os
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from stream.settings import Settings, unknown_variables


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment plus CLI overrides; a bad field exits naming it, and
    a UXMON_* variable that is no setting (a typo) is warned about."""
    for warning in unknown_variables(os.environ):
        typer.echo(f"uxmon: warning: {warning}", err=True)
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(p) for p in error["loc"])
            source = "command line" if field in given else f"env UXMON_{field.upper()}"
            lines.append(f"  {field} ({source}): {error['msg']}")
        typer.echo("invalid uxmon settings:\n" + "\n".join(lines), err=True)
        raise typer.Exit(2) from None


def serve(
    broker: Annotated[str | None, typer.Option(help="Kafka bootstrap HOST:PORT[,...]")] = None,
    metrics_port: Annotated[int | None, typer.Option(help="Port of /metrics")] = None,
    scorer: Annotated[
        list[str] | None, typer.Option(help="Scorer to run (repeatable); default ux_judge")
    ] = None,
    app_id: Annotated[str | None, typer.Option(help="Consumer group / app id")] = None,
) -> None:
    """Consume turns, score assistant replies, export metrics. Settings: UXMON_* env vars."""
    settings = load_settings(
        broker=broker, metrics_port=metrics_port, scorers=scorer or None, app_id=app_id
    )
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from stream.app import build
    from stream.broker import check_reachable

    service = build(settings)  # names an unknown scorer first: it loads nothing yet
    check_reachable(settings.broker)  # before minutes of model loading, not after
    service.run()
