"""The `uxmon` command: a thin shell over the settings and the commands' modules."""

from __future__ import annotations

import typer

from stream.commands import bench, crossval, dashboards, demo, grm, judge, models, replay, serve

app = typer.Typer(
    name="uxmon",
    help="Monitor how users experience a live AI assistant.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,  # locals may hold user text
)
app.command()(serve.serve)
app.command()(replay.replay)
app.command()(demo.demo)
app.command()(bench.bench)
app.command()(bench.gate)
app.command()(crossval.crossval)
app.add_typer(models.app, name="models")
app.add_typer(judge.app, name="judge")
app.add_typer(grm.app, name="grm")
app.add_typer(dashboards.app, name="dashboards")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
