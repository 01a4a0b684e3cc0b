"""`uxmon serve`: run one worker."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from stream.settings import Settings


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment plus CLI overrides; a bad field exits naming it."""
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(p) for p in error["loc"])
            lines.append(f"  {field} (env UXMON_{field.upper()}): {error['msg']}")
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

    build(settings).run()
