"""A real HTTP server speaking the slice of Grafana's HTTP API that provisioning uses,
holding its state in memory. No Grafana server can be installed here (see STACK.md), so this
is the contract: paths, status codes and bodies as Grafana's HTTP API documentation gives
them (data source, folder, dashboard and health APIs).

It records every request (method, path, Authorization header, JSON body) so tests can
assert the exact calls.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote


@dataclass
class Call:
    method: str
    path: str
    authorization: str | None
    body: Any


@dataclass
class State:
    datasources: dict[int, dict[str, Any]] = field(default_factory=dict)
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)
    dashboards: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # uid -> {dashboard, folderUid}
    calls: list[Call] = field(default_factory=list)
    next_id: int = 1

    def take_id(self) -> int:
        taken = self.next_id
        self.next_id += 1
        return taken


Response = tuple[int, Any]


class _Server(ThreadingHTTPServer):
    # Clients keep connections alive; do not wait for them when the test ends.
    daemon_threads = True
    block_on_close = False


class GrafanaContract:
    """`with GrafanaContract(authorization="Bearer x") as grafana: grafana.url ...`"""

    def __init__(self, authorization: str | None) -> None:
        self.authorization = authorization
        self.state = State()
        self.healthy = True
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> GrafanaContract:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    @property
    def calls(self) -> list[tuple[str, str]]:
        return [(c.method, c.path) for c in self.state.calls]

    def writes(self) -> list[tuple[str, str]]:
        return [(m, p) for m, p in self.calls if m != "GET"]

    # --- routing ---

    def handle(self, method: str, path: str, authorization: str | None, body: Any) -> Response:
        with self._lock:
            self.state.calls.append(Call(method, path, authorization, body))
            if method == "GET" and path == "/api/health":  # unauthenticated in Grafana
                return self._health()
            if self.authorization is not None and authorization != self.authorization:
                return 401, {"message": "Unauthorized"}
            for pattern, verb, route in self._routes():
                found = re.fullmatch(pattern, path)
                if found and verb == method:
                    return route(body, *(unquote(g) for g in found.groups()))
            return 404, {"message": "Not found"}

    def _routes(self) -> list[tuple[str, str, Any]]:
        return [
            (r"/api/datasources/name/([^/]+)", "GET", self._datasource_by_name),
            (r"/api/datasources", "POST", self._create_datasource),
            (r"/api/datasources/(\d+)", "PUT", self._update_datasource),
            (r"/api/folders/([^/]+)", "GET", self._folder),
            (r"/api/folders", "POST", self._create_folder),
            (r"/api/folders/([^/]+)", "PUT", self._update_folder),
            (r"/api/dashboards/db", "POST", self._save_dashboard),
            (r"/api/dashboards/uid/([^/]+)", "GET", self._dashboard),
        ]

    # --- endpoints ---

    def _health(self) -> Response:
        if not self.healthy:
            return 503, {"commit": "contract", "database": "failing", "version": "11.0.0"}
        return 200, {"commit": "contract", "database": "ok", "version": "11.0.0"}

    def _datasource_by_name(self, _: Any, name: str) -> Response:
        for ds in self.state.datasources.values():
            if ds["name"] == name:
                return 200, ds
        return 404, {"message": "Data source not found"}

    def _create_datasource(self, body: dict[str, Any]) -> Response:
        if not body.get("name") or not body.get("type"):
            return 400, {"message": "Required data source name and type"}
        if any(ds["name"] == body["name"] for ds in self.state.datasources.values()):
            return 409, {"message": "data source with the same name already exists"}
        ds_id = self.state.take_id()
        stored = {
            "id": ds_id,
            "uid": body.get("uid") or f"ds{ds_id}",
            "orgId": 1,
            "name": body["name"],
            "type": body["type"],
            "access": body.get("access", "proxy"),
            "url": body.get("url", ""),
            "basicAuth": body.get("basicAuth", False),
            "isDefault": body.get("isDefault", False),
            "jsonData": body.get("jsonData") or {},
            "secureJsonFields": {},
            "version": 1,
            "readOnly": False,
        }
        self.state.datasources[ds_id] = stored
        return 200, {
            "datasource": stored,
            "id": ds_id,
            "message": "Datasource added",
            "name": stored["name"],
        }

    def _update_datasource(self, body: dict[str, Any], ds_id: str) -> Response:
        stored = self.state.datasources.get(int(ds_id))
        if stored is None:
            return 404, {"message": "Data source not found"}
        if body.get("version") not in (None, 0, stored["version"]):
            return 409, {
                "message": "Datasource has already been updated by someone else. "
                "Please reload and try again"
            }
        for key in ("uid", "name", "type", "access", "url", "basicAuth", "isDefault", "jsonData"):
            if key in body:
                stored[key] = body[key]
        stored["version"] += 1
        return 200, {
            "datasource": stored,
            "id": stored["id"],
            "message": "Datasource updated",
            "name": stored["name"],
        }

    def _folder(self, _: Any, uid: str) -> Response:
        folder = self.state.folders.get(uid)
        return (200, folder) if folder else (404, {"message": "folder not found"})

    def _create_folder(self, body: dict[str, Any]) -> Response:
        if not body.get("title"):
            return 400, {"message": "folder title cannot be empty"}
        uid = body.get("uid") or f"f{self.state.next_id}"
        if uid in self.state.folders:
            return 409, {"message": "a folder with the same uid already exists"}
        folder = {
            "id": self.state.take_id(),
            "uid": uid,
            "title": body["title"],
            "url": f"/dashboards/f/{uid}/",
            "version": 1,
        }
        self.state.folders[uid] = folder
        return 200, folder

    def _update_folder(self, body: dict[str, Any], uid: str) -> Response:
        folder = self.state.folders.get(uid)
        if folder is None:
            return 404, {"message": "folder not found"}
        if not body.get("overwrite") and body.get("version") != folder["version"]:
            return 412, {
                "message": "The folder has been changed by someone else",
                "status": "version-mismatch",
            }
        folder["title"] = body.get("title", folder["title"])
        folder["version"] += 1
        return 200, folder

    def _save_dashboard(self, body: dict[str, Any]) -> Response:
        dashboard = dict(body.get("dashboard") or {})
        if not dashboard.get("title"):
            return 400, {"message": "Dashboard title cannot be empty", "status": "empty-name"}
        folder_uid = body.get("folderUid") or ""
        if folder_uid and folder_uid not in self.state.folders:
            return 400, {"message": "folder not found"}
        uid = dashboard.get("uid") or f"d{self.state.next_id}"
        existing = self.state.dashboards.get(uid)
        stale = existing and dashboard.get("version") != existing["dashboard"]["version"]
        if stale and not body.get("overwrite"):
            return 412, {
                "message": "The dashboard has been changed by someone else",
                "status": "version-mismatch",
            }
        dashboard["uid"] = uid
        dashboard["id"] = existing["dashboard"]["id"] if existing else self.state.take_id()
        dashboard["version"] = existing["dashboard"]["version"] + 1 if existing else 1
        self.state.dashboards[uid] = {"dashboard": dashboard, "folderUid": folder_uid}
        slug = re.sub(r"[^a-z0-9]+", "-", dashboard["title"].lower()).strip("-")
        return 200, {
            "id": dashboard["id"],
            "uid": uid,
            "url": f"/d/{uid}/{slug}",
            "status": "success",
            "version": dashboard["version"],
            "slug": slug,
        }

    def _dashboard(self, _: Any, uid: str) -> Response:
        stored = self.state.dashboards.get(uid)
        if stored is None:
            return 404, {"message": "Dashboard not found"}
        meta = {
            "folderUid": stored["folderUid"],
            "url": f"/d/{uid}",
            "version": stored["dashboard"]["version"],
        }
        return 200, {"dashboard": stored["dashboard"], "meta": meta}

    # --- HTTP plumbing ---

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        contract = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as Grafana serves it

            def setup(self) -> None:
                super().setup()
                # Headers and body go out as two writes; without this, Nagle + delayed ACK
                # add ~40 ms to every keep-alive request.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                status, answer = contract.handle(
                    self.command, self.path.split("?")[0], self.headers.get("Authorization"), body
                )
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_DELETE = _serve

            def log_message(self, *_: Any) -> None:
                pass

        return Handler
