"""`push`: bring a Grafana to the state the code describes (a Prometheus data source, a
folder, the dashboards) and change nothing that is already right.

Idempotent: each object is read first and written only when it differs, so a second push
makes no writes, a changed data source URL updates the existing data source (same id), and a
dashboard edited by hand in Grafana is put back (overwrite) with a new version.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dashboards.errors import GrafanaError
from dashboards.exemplars import destinations
from dashboards.grafana import Grafana
from dashboards.panels import DEFAULT_DATASOURCE_UID

DATASOURCE_NAME = DEFAULT_DATASOURCE_UID
SAVE_MESSAGE = "uxmon dashboards push"
# Fields Grafana adds to a stored dashboard; they are not part of what we render.
_STORED_ONLY = ("id", "version")


@dataclass(frozen=True, slots=True)
class Change:
    kind: str  # datasource | folder | dashboard
    name: str
    action: str  # created | updated | unchanged

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.action}"


def folder_uid(title: str) -> str:
    """A stable folder uid from its title (Grafana allows at most 40 characters)."""
    slug = re.sub(r"[^a-z0-9_-]+", "-", title.lower()).strip("-")[:40]
    if not slug:
        raise GrafanaError(f"expected a folder title with letters or digits, got {title!r}")
    return slug


def datasource_body(prometheus_url: str, conversation_url: str | None = None) -> dict[str, Any]:
    """The Prometheus data source; its exemplar links open `conversation_url` (a template,
    dashboards.exemplars), none when it is unset."""
    return {
        "name": DATASOURCE_NAME,
        "uid": DEFAULT_DATASOURCE_UID,
        "type": "prometheus",
        "access": "proxy",
        "url": prometheus_url,
        "jsonData": {
            "httpMethod": "POST",
            "exemplarTraceIdDestinations": destinations(conversation_url),
        },
    }


def _differs(existing: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    for key, value in desired.items():
        if isinstance(value, Mapping):
            if _differs(existing.get(key) or {}, value):
                return True
        elif existing.get(key) != value:
            return True
    return False


def ensure_datasource(
    grafana: Grafana, prometheus_url: str, conversation_url: str | None = None
) -> Change:
    desired = datasource_body(prometheus_url, conversation_url)
    existing = grafana.datasource_by_name(DATASOURCE_NAME)
    if existing is None:
        grafana.create_datasource(desired)
        return Change("datasource", DATASOURCE_NAME, "created")
    if not _differs(existing, desired):
        return Change("datasource", DATASOURCE_NAME, "unchanged")
    # Keep what an admin set beyond our fields (auth, TLS...); `version` guards against a
    # concurrent edit.
    merged = {
        **existing,
        **desired,
        "jsonData": {**(existing.get("jsonData") or {}), **desired["jsonData"]},
    }
    grafana.update_datasource(int(existing["id"]), merged)
    return Change("datasource", DATASOURCE_NAME, "updated")


def ensure_folder(grafana: Grafana, title: str) -> tuple[str, Change]:
    uid = folder_uid(title)
    existing = grafana.folder(uid)
    if existing is None:
        grafana.create_folder(uid, title)
        return uid, Change("folder", title, "created")
    if existing.get("title") != title:
        grafana.rename_folder(uid, title)
        return uid, Change("folder", title, "updated")
    return uid, Change("folder", title, "unchanged")


def ensure_dashboard(grafana: Grafana, dashboard: Mapping[str, Any], folder: str) -> Change:
    uid = str(dashboard["uid"])
    existing = grafana.dashboard(uid)
    if existing is not None:
        stored = {k: v for k, v in existing["dashboard"].items() if k not in _STORED_ONLY}
        in_folder = existing.get("meta", {}).get("folderUid") == folder
        if stored == dict(dashboard) and in_folder:
            return Change("dashboard", uid, "unchanged")
    grafana.save_dashboard(dashboard, folder, SAVE_MESSAGE)
    return Change("dashboard", uid, "created" if existing is None else "updated")


def push(
    grafana: Grafana,
    dashboards: Mapping[str, Mapping[str, Any]],
    *,
    folder_title: str,
    prometheus_url: str,
    conversation_url: str | None = None,
    report: Callable[[Change], None] = lambda change: None,
) -> list[Change]:
    """Health check, then data source, folder and every dashboard (in uid order)."""
    destinations(conversation_url)  # a malformed template fails before any request
    health = grafana.health()
    if health.get("database") != "ok":
        raise GrafanaError(
            f"Grafana at {grafana.display_url} is not healthy: database {health.get('database')!r}"
        )
    changes = [ensure_datasource(grafana, prometheus_url, conversation_url)]
    report(changes[-1])
    folder, change = ensure_folder(grafana, folder_title)
    changes.append(change)
    report(change)
    for uid in sorted(dashboards):
        changes.append(ensure_dashboard(grafana, dashboards[uid], folder))
        report(changes[-1])
    return changes
