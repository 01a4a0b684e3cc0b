"""Exemplar links: from an exemplar point on a panel to the team's own conversation viewer.

The template is a URL with one placeholder naming the exemplar label whose value goes there,
`{conversation_id}` or `{turn_id}` (the ids the worker attaches to its exemplars), e.g.
`https://chat-admin.example.com/c/{conversation_id}`. Grafana shows such links only when the
Prometheus data source declares them (`jsonData.exemplarTraceIdDestinations`: one destination
per exemplar label, `${__value.raw}` standing for the label's value); panel data links are
not applied to exemplar markers (docs/dashboards.md says why).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from dashboards.errors import DashboardsError

#: Exemplar labels the worker exports (ids only) and a template may name.
PLACEHOLDERS = ("conversation_id", "turn_id")
ENV = "UXMON_CONVERSATION_URL"
#: What Grafana replaces with the exemplar label's value in a destination URL.
GRAFANA_VALUE = "${__value.raw}"
_LINK_TITLES = {"conversation_id": "Open conversation", "turn_id": "Open turn"}


class ConversationUrlError(DashboardsError):
    """The conversation URL template is not a URL with exactly one known placeholder."""


def destinations(template: str | None) -> list[dict[str, Any]]:
    """The Prometheus data source's `exemplarTraceIdDestinations` for `template`; none when
    the template is unset or empty (no link)."""
    if not template:
        return []
    names = re.findall(r"\{([^{}]*)\}", template)
    known = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
    unknown = sorted({name for name in names if name not in PLACEHOLDERS})
    if unknown:
        shown = ", ".join(f"{{{name}}}" for name in unknown)
        raise ConversationUrlError(f"{ENV}: unknown placeholder {shown}; expected one of {known}")
    if len(set(names)) != 1:
        raise ConversationUrlError(
            f"{ENV}: expected exactly one placeholder ({known}), got {len(set(names))}"
        )
    [label] = set(names)
    url = template.replace(f"{{{label}}}", GRAFANA_VALUE)
    if "{" in url.replace(GRAFANA_VALUE, "") or "}" in url.replace(GRAFANA_VALUE, ""):
        raise ConversationUrlError(f"{ENV}: unbalanced brace in {template!r}")
    parts = urlsplit(template)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConversationUrlError(f"{ENV}: expected an http(s) URL, got {template!r}")
    return [{"name": label, "url": url, "urlDisplayLabel": _LINK_TITLES[label]}]
