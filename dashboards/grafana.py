"""Every call uxmon makes to Grafana's HTTP API, and nowhere else.

Built on `grafana-client` (the maintained successor of `grafana-api`); swapping the client
means changing this module only. Errors become `GrafanaError` with a message that names the
request and Grafana's answer, never the credentials.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

import niquests
from grafana_client import GrafanaApi
from grafana_client.client import GrafanaException, GrafanaTimeoutError

from dashboards.errors import GrafanaError

TOKEN_ENV = "UXMON_GRAFANA_TOKEN"
USER_ENV = "UXMON_GRAFANA_USER"
PASSWORD_ENV = "UXMON_GRAFANA_PASSWORD"


@dataclass(frozen=True, slots=True)
class Credentials:
    """A bearer token (service account or API key) or a user and password (basic auth).
    The secrets stay out of repr()."""

    token: str | None = field(default=None, repr=False)
    user: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> Credentials | None:
        """UXMON_GRAFANA_TOKEN, else UXMON_GRAFANA_USER + UXMON_GRAFANA_PASSWORD, else None
        (anonymous)."""
        token = environ.get(TOKEN_ENV)
        if token:
            return cls(token=token)
        user, password = environ.get(USER_ENV), environ.get(PASSWORD_ENV)
        if user and password:
            return cls(user=user, password=password)
        if user or password:
            raise GrafanaError(f"set both {USER_ENV} and {PASSWORD_ENV} for basic auth, or neither")
        return None

    def for_client(self) -> str | tuple[str, str]:
        if self.token:
            return self.token
        return (self.user or "", self.password or "")


def _target(url: str) -> tuple[str, str]:
    """(url as given, url safe to print). Credentials in the URL are refused: they would
    end up in shell history and error messages."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GrafanaError(f"expected a Grafana URL like http://grafana:3000, got {url!r}")
    if parts.username or parts.password:
        raise GrafanaError(
            f"put credentials in {TOKEN_ENV} or {USER_ENV}/{PASSWORD_ENV}, not in the URL"
        )
    return url.rstrip("/"), f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"


class Grafana:
    """The handful of Grafana endpoints `uxmon dashboards push` needs."""

    def __init__(
        self, url: str, credentials: Credentials | None = None, *, timeout_s: float = 10.0
    ) -> None:
        url, self.display_url = _target(url)
        parts = urlsplit(url)
        self._api = GrafanaApi(
            auth=credentials.for_client() if credentials else None,
            host=parts.hostname,
            port=parts.port,
            url_path_prefix=parts.path.strip("/") + "/" if parts.path.strip("/") else "",
            protocol=parts.scheme,
            timeout=timeout_s,
        )

    # --- health ---

    def health(self) -> dict[str, Any]:
        """GET /api/health: {"database": "ok", "version": ...}."""
        return self._call("check health", lambda: self._api.client.GET("/health"))

    # --- data sources ---

    def datasource_by_name(self, name: str) -> dict[str, Any] | None:
        """GET /api/datasources/name/{name}; None when there is none."""
        return self._call(
            f"read data source {name!r}",
            lambda: self._api.datasource.get_datasource_by_name(quote(name, safe="")),
            missing_ok=True,
        )

    def create_datasource(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST /api/datasources."""
        return self._call(
            f"create data source {body.get('name')!r}",
            lambda: self._api.datasource.create_datasource(dict(body)),
        )

    def update_datasource(self, datasource_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
        """PUT /api/datasources/{id}."""
        return self._call(
            f"update data source {body.get('name')!r}",
            lambda: self._api.datasource.update_datasource(datasource_id, dict(body)),
        )

    # --- folders ---

    def folder(self, uid: str) -> dict[str, Any] | None:
        """GET /api/folders/{uid}; None when there is none."""
        return self._call(
            f"read folder {uid!r}",
            lambda: self._api.folder.get_folder(quote(uid, safe="")),
            missing_ok=True,
        )

    def create_folder(self, uid: str, title: str) -> dict[str, Any]:
        """POST /api/folders."""
        return self._call(
            f"create folder {title!r}", lambda: self._api.folder.create_folder(title, uid=uid)
        )

    def rename_folder(self, uid: str, title: str) -> dict[str, Any]:
        """PUT /api/folders/{uid} (overwrite: the title is ours to set)."""
        return self._call(
            f"rename folder {uid!r}",
            lambda: self._api.folder.update_folder(
                quote(uid, safe=""), title=title, overwrite=True
            ),
        )

    # --- dashboards ---

    def dashboard(self, uid: str) -> dict[str, Any] | None:
        """GET /api/dashboards/uid/{uid}: {"dashboard": ..., "meta": ...}; None when absent."""
        return self._call(
            f"read dashboard {uid!r}",
            lambda: self._api.dashboard.get_dashboard(quote(uid, safe="")),
            missing_ok=True,
        )

    def save_dashboard(
        self, dashboard: Mapping[str, Any], folder_uid: str, message: str
    ) -> dict[str, Any]:
        """POST /api/dashboards/db with overwrite=true (the committed JSON is the truth)."""
        body = {
            "dashboard": dict(dashboard),
            "folderUid": folder_uid,
            "overwrite": True,
            "message": message,
        }
        return self._call(
            f"save dashboard {dashboard.get('uid')!r}",
            lambda: self._api.dashboard.update_dashboard(body),
        )

    # --- errors ---

    def _call(self, action: str, request: Callable[[], Any], *, missing_ok: bool = False) -> Any:
        try:
            return request()
        except GrafanaTimeoutError as exc:
            raise GrafanaError(
                f"Grafana at {self.display_url} did not answer in time ({action})"
            ) from exc
        except GrafanaException as exc:
            if missing_ok and exc.status_code == 404:
                return None
            raise GrafanaError(self._explain(action, exc)) from exc
        except niquests.exceptions.RequestException as exc:
            raise GrafanaError(
                f"cannot reach Grafana at {self.display_url} ({action}): "
                f"{type(exc).__name__}; is the URL right and Grafana up?"
            ) from exc

    def _explain(self, action: str, exc: GrafanaException) -> str:
        status = exc.status_code
        if status == 401:
            return (
                f"Grafana at {self.display_url} refused the credentials (401) to {action}: "
                f"set {TOKEN_ENV}, or {USER_ENV} and {PASSWORD_ENV}"
            )
        if status == 403:
            return (
                f"Grafana at {self.display_url} did not allow this user to {action} (403): "
                "it needs the Editor role on the folder (Admin for data sources)"
            )
        if status == 0:
            return f"cannot reach Grafana at {self.display_url} ({action})"
        answer = exc.response.get("message") if isinstance(exc.response, dict) else None
        return f"Grafana at {self.display_url} answered {status} to {action}: {answer or exc}"
