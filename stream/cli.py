"""The `uxmon` command: a thin shell over the settings and the commands' modules.

A mistake a user can fix (an unknown scorer, a missing model, a file that cannot be read
or written, an unreachable service) ends in one line naming it and an exit code, not a
traceback: 2 for bad usage or configuration, 1 for everything else. UXMON_TRACEBACK=1
shows the traceback too.
"""

from __future__ import annotations

import os
import sys
from importlib import metadata
from typing import Annotated

import typer

from benchmark.errors import BenchmarkError
from dashboards.errors import DashboardsError
from dashboards.rules import RulesConfigError
from scorer.errors import ScorerError, UnknownScorerError
from stream.broker import BrokerError
from stream.commands import (
    bench,
    config,
    crossval,
    dashboards,
    demo,
    events,
    grm,
    inspect,
    judge,
    labels,
    models,
    replay,
    rules,
    serve,
)
from stream.reaction_model import ReactionModelError
from stream.reactions import PatternError
from stream.security import SecurityError

# Help is wide enough for the settings list of `serve --help` not to be cut at 80 columns.
HELP_WIDTH = 120

app = typer.Typer(
    name="uxmon",
    help="Monitor how users experience a live AI assistant.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals may hold user text
    context_settings={"max_content_width": HELP_WIDTH},  # click's own help (no rich)
)


def _version(shown: bool) -> None:
    if shown:
        typer.echo(f"uxmon {metadata.version('uxmon')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Show the version."),
    ] = False,
) -> None:
    """Monitor how users experience a live AI assistant."""


app.command(cls=config.SettingsHelp)(serve.serve)
app.command()(config.config)
app.command()(replay.replay)
app.command()(inspect.inspect)
app.command()(demo.demo)
app.command()(bench.bench)
app.command()(bench.gate)
app.command()(crossval.crossval)
app.add_typer(models.app, name="models")
app.add_typer(judge.app, name="judge")
app.add_typer(grm.app, name="grm")
app.add_typer(dashboards.app, name="dashboards")
app.add_typer(events.app, name="events")
app.add_typer(rules.app, name="rules")
app.add_typer(labels.app, name="labels")


def _widen_help() -> None:
    """rich renders help 80 columns wide when stdout is no terminal (a pipe, a file, CI):
    render it HELP_WIDTH wide there. A terminal keeps its own width, as does an explicit
    COLUMNS or TERMINAL_WIDTH."""
    if os.environ.get("TERMINAL_WIDTH") or os.environ.get("COLUMNS") or sys.stdout.isatty():
        return
    from typer import rich_utils

    rich_utils.MAX_WIDTH = HELP_WIDTH


CONFIG_ERRORS = (
    UnknownScorerError,
    PatternError,
    ReactionModelError,
    RulesConfigError,
    SecurityError,
)
USER_ERRORS = (
    ScorerError,
    BenchmarkError,
    DashboardsError,
    BrokerError,
    PatternError,
    ReactionModelError,
    SecurityError,
    OSError,
)


def main() -> None:
    _widen_help()
    try:
        app()
    except USER_ERRORS as exc:
        if os.environ.get("UXMON_TRACEBACK"):
            raise
        message = str(exc).strip("'\"") if isinstance(exc, KeyError) else str(exc)
        typer.echo(f"uxmon: error: {message}", err=True)
        sys.exit(2 if isinstance(exc, CONFIG_ERRORS) else 1)


if __name__ == "__main__":
    main()
