"""Every dashboard, by uid, and its deterministic JSON text (sorted keys, stable ids, no
timestamps), as committed under dashboards/json/<uid>.json."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from dashboards import benchmark, recovery, scorer_health, ux_overview

BUILDERS: dict[str, Callable[[], Dashboard]] = {
    ux_overview.UID: ux_overview.build,
    recovery.UID: recovery.build,
    scorer_health.UID: scorer_health.build,
    benchmark.UID: benchmark.build,
}

DEFAULT_DIR = Path(__file__).parent / "json"


def to_text(dashboard: Dashboard) -> str:
    return json.dumps(dashboard, cls=JSONEncoder, sort_keys=True, indent=2) + "\n"


def rendered() -> dict[str, str]:
    """File name -> JSON text for every dashboard."""
    return {f"{uid}.json": to_text(build()) for uid, build in sorted(BUILDERS.items())}


def as_dicts() -> dict[str, dict[str, Any]]:
    """uid -> the dashboard as plain JSON data (what the Grafana API receives)."""
    return {uid: json.loads(to_text(build())) for uid, build in sorted(BUILDERS.items())}


def write(out_dir: Path = DEFAULT_DIR) -> list[Path]:
    """Write every dashboard's JSON into `out_dir`; returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in rendered().items():
        path = out_dir / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
