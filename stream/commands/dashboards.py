"""`uxmon dashboards ...`: render the dashboards to JSON files, push them to a Grafana.

UXMON_CONVERSATION_URL (or --conversation-url) is the exemplar link template
(dashboards.exemplars); a malformed one is bad input.

Exit codes: 0 success, 1 Grafana could not be reached or refused a request, 2 bad input.
Credentials come from the environment only (UXMON_GRAFANA_TOKEN, or UXMON_GRAFANA_USER and
UXMON_GRAFANA_PASSWORD) and are never printed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="Render Grafana dashboards; push them to Grafana.")

ConversationUrl = Annotated[
    str | None,
    typer.Option(
        "--conversation-url",
        envvar="UXMON_CONVERSATION_URL",
        help="Exemplar link to your conversation viewer: a URL with one placeholder, "
        "{conversation_id} or {turn_id}, e.g. https://chat-admin.example.com/c/{conversation_id} "
        "(unset: no link).",
    ),
]


@app.command("render")
def render(
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Directory for <uid>.json files (default: dashboards/json)."),
    ] = None,
    configmaps: Annotated[
        Path | None,
        typer.Option(
            "--configmaps",
            help="Also write the dashboards as ConfigMaps for Grafana's sidecar to this YAML "
            "file (the repository's is deploy/k8s/grafana-dashboards.yaml).",
        ),
    ] = None,
    datasource_file: Annotated[
        Path | None,
        typer.Option(
            "--datasource-file",
            help="Also write Grafana's data source provisioning file here (the repository's "
            "is deploy/grafana/provisioning/datasources/uxmon.yml).",
        ),
    ] = None,
    conversation_url: ConversationUrl = None,
) -> None:
    """Write every dashboard's JSON, and optionally the sidecar ConfigMaps and the data
    source provisioning file (deterministic: commit the results)."""
    from dashboards import configmaps as sidecar
    from dashboards.errors import DashboardsError
    from dashboards.provisioning import datasources_file
    from dashboards.render import DEFAULT_DIR, write

    try:
        provisioning = datasources_file(conversation_url)  # checks the template first
        for path in write(out or DEFAULT_DIR):
            typer.echo(str(path))
        if configmaps is not None:
            configmaps.write_text(sidecar.to_text(), encoding="utf-8")
            typer.echo(str(configmaps))
    except DashboardsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if datasource_file is not None:
        datasource_file.write_text(provisioning, encoding="utf-8")
        typer.echo(str(datasource_file))


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
    conversation_url: ConversationUrl = None,
) -> None:
    """Create or update the Prometheus data source, the folder and every dashboard."""
    from dashboards.errors import DashboardsError, GrafanaError
    from dashboards.exemplars import destinations
    from dashboards.grafana import Credentials, Grafana
    from dashboards.provision import push as push_all
    from dashboards.render import as_dicts

    try:
        destinations(conversation_url)
        grafana = Grafana(url, Credentials.from_env(), timeout_s=timeout_s)
    except DashboardsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        push_all(
            grafana,
            as_dicts(),
            folder_title=folder,
            prometheus_url=datasource_url,
            conversation_url=conversation_url,
            report=lambda change: typer.echo(str(change)),
        )
    except GrafanaError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
