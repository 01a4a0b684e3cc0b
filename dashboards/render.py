"""Every dashboard, by uid, and its deterministic JSON text (sorted keys, stable ids, no
timestamps), as committed under dashboards/json/<uid>.json.

Each dashboard links to every other one (in the order of `BUILDERS`), keeping the time range
and the variables."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard, DashboardLink, DashboardLinkType

from dashboards import benchmark, recovery, scorer_health, ux_overview

BUILDERS: dict[str, Callable[[], Dashboard]] = {
    ux_overview.UID: ux_overview.build,
    recovery.UID: recovery.build,
    scorer_health.UID: scorer_health.build,
    benchmark.UID: benchmark.build,
}

DEFAULT_DIR = Path(__file__).parent / "json"


def dashboard_url(uid: str) -> str:
    """Grafana's path to a dashboard by uid, relative to the Grafana it is opened in."""
    return f"/d/{uid}"


def _link(uid: str, title: str) -> DashboardLink:
    return DashboardLink(
        title=title.removeprefix("uxmon / "),
        type_val=DashboardLinkType.LINK,
        icon="dashboard",
        tooltip=title,
        url=dashboard_url(uid),
        keep_time=True,
        include_vars=True,
    )


def built() -> dict[str, Dashboard]:
    """uid -> dashboard, each linking to the others."""
    boards = {uid: build() for uid, build in BUILDERS.items()}
    for uid, board in boards.items():
        board.links = [
            _link(other, str(target.title)) for other, target in boards.items() if other != uid
        ]
    return dict(sorted(boards.items()))


def to_text(dashboard: Dashboard) -> str:
    return json.dumps(dashboard, cls=JSONEncoder, sort_keys=True, indent=2) + "\n"


def rendered() -> dict[str, str]:
    """File name -> JSON text for every dashboard."""
    return {f"{uid}.json": to_text(board) for uid, board in built().items()}


def as_dicts() -> dict[str, dict[str, Any]]:
    """uid -> the dashboard as plain JSON data (what the Grafana API receives)."""
    return {uid: json.loads(to_text(board)) for uid, board in built().items()}


def write(out_dir: Path = DEFAULT_DIR) -> list[Path]:
    """Write every dashboard's JSON into `out_dir`; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rendered().items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
