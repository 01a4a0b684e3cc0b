"""`uxmon dashboards ...`: render the dashboards to JSON files, push them to a Grafana.

Exit codes: 0 success, 1 Grafana could not be reached or refused a request, 2 bad input.
Credentials come from the environment only (UXMON_GRAFANA_TOKEN, or UXMON_GRAFANA_USER and
UXMON_GRAFANA_PASSWORD) and are never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="Render Grafana dashboards; push them to Grafana.")


@app.command("render")
def render(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Directory for <uid>.json files (default: dashboards/json)."),
    ] = None,
) -> None:
    """Write every dashboard's JSON (deterministic: commit the result)."""
    from dashboards.render import DEFAULT_DIR, write

    for path in write(out or DEFAULT_DIR):
        typer.echo(str(path))


@app.command("push")
def push(
    url: Annotated[str, typer.Option("--url", help="Grafana base URL, e.g. http://grafana:3000.")],
    folder: Annotated[str, typer.Option("--folder", help="Folder title for the dashboards.")] = (
        "uxmon"
    ),
    datasource_url: Annotated[
        str,
        typer.Option("--datasource-url", help="Prometheus URL as Grafana's server reaches it."),
    ] = "http://prometheus:9090",
    timeout_s: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for each request.")
    ] = 10.0,
) -> None:
    """Create or update the Prometheus data source, the folder and every dashboard."""
    from dashboards.errors import GrafanaError
    from dashboards.grafana import Credentials, Grafana
    from dashboards.provision import push as push_all
    from dashboards.render import as_dicts

    try:
        grafana = Grafana(url, Credentials.from_env(), timeout_s=timeout_s)
    except GrafanaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        push_all(
            grafana,
            as_dicts(),
            folder_title=folder,
            prometheus_url=datasource_url,
            report=lambda change: typer.echo(str(change)),
        )
    except GrafanaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
