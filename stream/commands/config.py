"""`uxmon config`: the effective settings, each with its value and where it came from; and
the list of settings that `uxmon serve --help` ends with.

Both are read off the fields of `stream.settings.Settings` (their defaults and
descriptions): there is no second list to keep in step. A secret (a `SecretStr`, or a name
such as `*_token`, `*_password`, `*_key`) is never printed, only whether it is set.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

import typer
from pydantic import BaseModel, SecretBytes, SecretStr
from pydantic.fields import FieldInfo
from typer.core import TyperCommand

from stream.commands.options import AppId, Broker, MetricsPort, Scorer, setting_overrides
from stream.commands.serve import load_settings
from stream.settings import OTHER_VARIABLES, Settings

if TYPE_CHECKING:
    # typer's own copy of click, whose objects it passes
    from typer._click.core import Context
    from typer._click.formatting import HelpFormatter

MASK = "***"
_SECRET_NAME = re.compile(r"(^|_)(key|password|passwd|token|secret|credentials?)(_|$)")

Source = Literal["default", "env", "command line"]


def variable(name: str) -> str:
    return f"UXMON_{name.upper()}"


def _mentions_secret(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, SecretStr | SecretBytes):
        return True
    return any(_mentions_secret(arg) for arg in get_args(annotation))  # Optional, Annotated


def is_secret(name: str, field: FieldInfo) -> bool:
    return bool(_SECRET_NAME.search(name)) or _mentions_secret(field.annotation)


def plain(value: Any) -> Any:
    """A settings value as JSON: paths as strings, lists as lists, None as null."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def spelled(value: Any) -> str:
    """A settings value as one would write it in its environment variable."""
    if value is None:
        return "(unset)"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | tuple):
        return ", ".join(spelled(v) for v in value) or "(empty)"
    return str(value) or "(empty)"


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    variable: str
    value: Any  # JSON-ready; MASK for a secret that is set
    source: Source


def effective(settings: BaseModel, options: set[str]) -> list[Row]:
    """Each field of `settings` with its value and source; `options` are the fields the
    command line set."""
    rows = []
    for name, field in type(settings).model_fields.items():
        value = getattr(settings, name)
        source: Source = (
            "command line"
            if name in options
            else "env"
            if name in settings.model_fields_set
            else "default"
        )
        if is_secret(name, field):
            value = None if value is None or value == "" else MASK
        rows.append(Row(name, variable(name), plain(value), source))
    return rows


def documented(model: type[BaseModel] = Settings) -> list[tuple[str, str, str]]:
    """(variable, default, description) of each field: the settings part of the help."""
    rows = []
    for name, field in model.model_fields.items():
        default = field.get_default(call_default_factory=True)
        shown = MASK if is_secret(name, field) and default else spelled(default)
        rows.append((variable(name), shown, field.description or ""))
    return rows


def as_text(rows: list[Row]) -> str:
    """One line per setting: variable, source, value (the value last: it can be long)."""
    width = max(len(r.variable) for r in rows)
    source_width = max(len(r.source) for r in rows)
    return "\n".join(
        f"{r.variable:<{width}}  {r.source:<{source_width}}  {spelled(r.value)}" for r in rows
    )


def as_json(rows: list[Row]) -> str:
    return json.dumps(
        {r.name: {"variable": r.variable, "value": r.value, "source": r.source} for r in rows},
        indent=2,
        ensure_ascii=False,
    )


def _others() -> str:
    names = ", ".join(sorted(OTHER_VARIABLES))
    return f"Also read, outside these settings: {names}."


class SettingsHelp(TyperCommand):
    """A command whose --help ends with every setting: variable, default, description."""

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        super().format_help(ctx, formatter)
        from typer import core

        rows = documented()
        if not core.HAS_RICH or self.rich_markup_mode is None:
            with formatter.section("Settings (environment variables; options override them)"):
                formatter.write_dl([(name, f"{text}  [default: {d}]") for name, d, text in rows])
                formatter.write_paragraph()
                formatter.write_text(_others())
            return
        from rich.console import Console
        from rich.panel import Panel
        from rich.table import Table
        from rich.text import Text
        from typer import rich_utils

        table = Table(show_header=True, box=None, expand=True, padding=(0, 1), pad_edge=False)
        table.add_column("variable", style="bold cyan", no_wrap=True)
        table.add_column("default", style="dim", overflow="fold", ratio=1)
        table.add_column("what", ratio=3)
        for name, default, text in rows:
            table.add_row(name, Text(default), Text(text))
        title = "Settings: environment variables (the options above override theirs)"
        console = Console(width=rich_utils.MAX_WIDTH)
        console.print(Panel(table, border_style="dim", title=title, title_align="left"))
        console.print(Text(f" {_others()}", style="dim"))


def config(
    broker: Broker = None,
    metrics_port: MetricsPort = None,
    scorer: Scorer = None,
    app_id: AppId = None,
    as_json_: Annotated[
        bool, typer.Option("--json", help="One JSON object: field -> variable, value, source.")
    ] = False,
) -> None:
    """Print the settings in effect, each with its source. Secrets are masked.

    The values are those `uxmon serve` with the same options would use; the source of each
    is default, env (its UXMON_* variable) or command line."""
    overrides = setting_overrides(broker, metrics_port, scorer, app_id)
    settings = load_settings(**overrides)
    rows = effective(settings, {k for k, v in overrides.items() if v is not None})
    typer.echo(as_json(rows) if as_json_ else as_text(rows))
