"""`uxmon serve`: run one worker."""

from __future__ import annotations

import logging
import os
from typing import Any

import typer
from pydantic import ValidationError

from stream.commands.options import AppId, Broker, MetricsPort, Scorer, setting_overrides
from stream.settings import Settings, unknown_variables


def load_settings(**overrides: Any) -> Settings:
    """Settings from the environment plus CLI overrides; a UXMON_* variable that is no
    setting (a typo) is warned about. A bad field exits 2 with one line per field, naming
    it and where its value came from, as every usage mistake of the CLI does."""
    for warning in unknown_variables(os.environ):
        typer.echo(f"uxmon: warning: {warning}", err=True)
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        for error in exc.errors(include_input=False, include_url=False):
            field = ".".join(str(p) for p in error["loc"])
            if not field:  # a rule across fields: its message names them
                where = "settings"
            elif field in given:
                where = f"setting {field} (command line)"
            else:
                where = f"setting {field} (env UXMON_{field.upper()})"
            typer.echo(f"uxmon: error: invalid {where}: {error['msg']}", err=True)
        raise typer.Exit(2) from None


def serve(
    broker: Broker = None,
    metrics_port: MetricsPort = None,
    scorer: Scorer = None,
    app_id: AppId = None,
) -> None:
    """Consume turns, score assistant replies, export metrics.

    Every setting is a UXMON_* environment variable, listed below; `uxmon config` shows the
    values in effect."""
    settings = load_settings(**setting_overrides(broker, metrics_port, scorer, app_id))
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    from stream.app import build
    from stream.broker import check_reachable

    service = build(settings)  # names an unknown scorer first: it loads nothing yet
    # before minutes of model loading, not after
    check_reachable(settings.broker, security=settings.kafka_security())
    service.run()
