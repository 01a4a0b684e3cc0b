"""The one exception base of the dashboards package."""

from __future__ import annotations


class DashboardsError(Exception):
    """Rendering or provisioning dashboards failed; the message says what and why."""


class GrafanaError(DashboardsError):
    """Grafana could not be reached, refused the credentials, or rejected a request."""
