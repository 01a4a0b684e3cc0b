"""`uxmon rules render`: the alert and recording rules, and their promtool tests, for a
cluster whose job, scorer names or runbook location differ from the defaults.

Exit codes: 0 written, 2 bad config (the message names the field).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="Render the Prometheus rules for your cluster.")


@app.command("render")
def render(
    out: Annotated[
        Path, typer.Option("--out", help="Directory for rules/*.yml and their tests/*.yml.")
    ],
    config_file: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="YAML with any of: job, scorer, grm, runbook_base, correction (defaults below).",
        ),
    ] = None,
    job: Annotated[
        str | None, typer.Option("--job", help="Scrape job of the workers [default: uxmon].")
    ] = None,
    scorer: Annotated[
        str | None,
        typer.Option("--scorer", help="Scorer the dissatisfaction SLO reads [default: ux_judge]."),
    ] = None,
    grm: Annotated[
        str | None,
        typer.Option("--grm", help="Cascade scorer the GRM alerts watch [default: grm]."),
    ] = None,
    runbook_base: Annotated[
        str | None,
        typer.Option(
            "--runbook-base",
            help="URL of the runbook page, e.g. https://git.example.com/uxmon/docs/alerts.md "
            "[default: docs/alerts.md].",
        ),
    ] = None,
    correction: Annotated[
        str | None,
        typer.Option(
            "--correction",
            help="Where the corrected rate takes the scorer's accuracy from: benchmark, or "
            "live (explicit thumbs where each class has 100 in a week) [default: benchmark].",
        ),
    ] = None,
    source: Annotated[
        Path | None,
        typer.Option("--source", help="The uxmon repository's deploy/prometheus directory."),
    ] = None,
) -> None:
    """Write the rules with your selectors; options override the config file. Check the
    result with `promtool test rules OUT/tests/*.yml`."""
    from dataclasses import replace

    from dashboards.rules import DEFAULT_SOURCE, RulesConfig, write

    config = RulesConfig.load(config_file) if config_file is not None else RulesConfig()
    given = {
        "job": job,
        "scorer": scorer,
        "grm": grm,
        "runbook_base": runbook_base,
        "correction": correction,
    }
    config = replace(config, **{k: v for k, v in given.items() if v is not None})
    for path in write(config, out, source or DEFAULT_SOURCE):
        typer.echo(str(path))
