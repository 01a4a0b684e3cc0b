"""`uxmon events schema`: the JSON Schema of the turns topic's events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="The events uxmon reads from the turns topic.")


def schema_text() -> str:
    """The schema as docs/events.schema.json holds it (stable order, a final newline)."""
    from stream.events import json_schema

    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


@app.command()
def schema(
    out: Annotated[
        Path | None,
        typer.Option(help="Write the schema here (e.g. docs/events.schema.json), not stdout."),
    ] = None,
) -> None:
    """Print the JSON Schema of turn and feedback events, generated from stream/events.py."""
    text = schema_text()
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    typer.echo(f"wrote {out}", err=True)
