"""Whether the worker is doing its job, for a liveness probe, and the HTTP server of
`/metrics` and `/healthz`.

The server runs on its own thread, so it keeps answering while the event loop hangs: that
is why `/metrics` alone cannot tell a liveness probe anything. `/healthz` answers 503 when
the event loop has not turned within `loop_bound_s` (a heartbeat timer on the loop stamps
`beat`), or when records wait on an owned partition and no batch was applied within
`progress_bound_s`. Before the loop's first turn it answers 503 "starting" (a startup
probe waits for it; models load and the table recovers before that).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from socketserver import ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

HEALTH_PATH = "/healthz"


@dataclass(frozen=True, slots=True)
class Verdict:
    healthy: bool
    reason: str


class Health:
    def __init__(
        self,
        loop_bound_s: float,
        progress_bound_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.loop_bound_s = loop_bound_s
        self.progress_bound_s = progress_bound_s
        self._clock = clock
        self._beat_at: float | None = None
        self._progress_at = clock()
        self._waiting = False

    def beat(self) -> None:
        """The event loop turned."""
        self._beat_at = self._clock()

    def progressed(self) -> None:
        """A batch was applied."""
        self._progress_at = self._clock()

    def lags(self, lags: Iterable[int]) -> None:
        """The owned partitions' records not applied yet. Nothing waiting is progress too:
        an idle worker is healthy."""
        self._waiting = any(lag > 0 for lag in lags)
        if not self._waiting:
            self._progress_at = self._clock()

    def loop_turned_within(self, seconds: float) -> bool:
        return self._beat_at is not None and self._clock() - self._beat_at < seconds

    def check(self) -> Verdict:
        now = self._clock()
        if self._beat_at is None:
            return Verdict(False, "starting: the event loop has not turned yet")
        if (stalled := now - self._beat_at) > self.loop_bound_s:
            return Verdict(
                False, f"the event loop has not turned for {stalled:.1f}s ({self.loop_bound_s:g}s)"
            )
        if self._waiting and (idle := now - self._progress_at) > self.progress_bound_s:
            return Verdict(
                False,
                f"records are waiting and no batch was applied for {idle:.1f}s "
                f"({self.progress_bound_s:g}s)",
            )
        return Verdict(True, "ok")


def app(registry: CollectorRegistry, health: Health) -> Callable[..., Iterable[bytes]]:
    """WSGI: `/healthz` from `health`, everything else prometheus-client's `/metrics`
    (which speaks OpenMetrics, exemplars included, to a scraper that asks for it)."""
    metrics = make_wsgi_app(registry)

    def route(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != HEALTH_PATH:
            return metrics(environ, start_response)
        verdict = health.check()
        body = json.dumps({"healthy": verdict.healthy, "reason": verdict.reason}).encode()
        status = "200 OK" if verdict.healthy else "503 Service Unavailable"
        start_response(status, [("Content-Type", "application/json")])
        return [body]

    return route


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """Probes and scrapes every few seconds are no news."""


def serve(
    host: str, port: int, registry: CollectorRegistry, health: Health
) -> tuple[WSGIServer, threading.Thread]:
    """Serve `/metrics` and `/healthz` on a daemon thread; returns the server (its
    `server_port` is the port bound, useful with port 0) and the thread."""
    server = make_server(
        host, port, app(registry, health), server_class=_Server, handler_class=_QuietHandler
    )
    thread = threading.Thread(target=server.serve_forever, name="uxmon-http", daemon=True)
    thread.start()
    return server, thread
