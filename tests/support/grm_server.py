"""A scripted OpenAI-compatible GRM server on 127.0.0.1, for tests of the HTTP backend and
of GRM outages: it answers chat completions with chosen logprobs, fails with chosen
statuses, answers slowly, or answers garbage. Tests change `Stub.default` as they go."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Action:
    status: int = 200
    delay_s: float = 0.0
    top: list[tuple[str, float]] = field(default_factory=lambda: [("好", -0.3), ("差", -1.4)])
    body: str | None = None  # raw body instead of a completion
    headers: dict[str, str] = field(default_factory=dict)


class Stub:
    """Scripted behaviour: queued actions first, then `default` for every other request."""

    def __init__(self) -> None:
        self.queue: list[Action] = []
        self.default = Action()
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    def next_action(self) -> Action:
        with self.lock:
            return self.queue.pop(0) if self.queue else self.default


def completion(top: list[tuple[str, float]]) -> dict[str, Any]:
    chosen = max(top, key=lambda t: t[1])
    tops = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top]
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "model": "judge",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": chosen[0]},
                "finish_reason": "length",
                "logprobs": {
                    "content": [{"token": chosen[0], "logprob": chosen[1], "top_logprobs": tops}]
                },
            }
        ],
    }


def make_handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length))
            with stub.lock:
                stub.requests.append(
                    {"path": self.path, "auth": self.headers.get("authorization"), "body": body}
                )
                stub.in_flight += 1
                stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
            try:
                action = stub.next_action()
                if action.delay_s:
                    time.sleep(action.delay_s)
                if action.status != 200:
                    payload = json.dumps({"error": {"message": "scripted", "code": action.status}})
                else:
                    payload = (
                        action.body
                        if action.body is not None
                        else json.dumps(completion(action.top))
                    )
                data = payload.encode()
                self.send_response(action.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in action.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)
            finally:
                with stub.lock:
                    stub.in_flight -= 1

    return Handler


@contextmanager
def serving() -> Iterator[tuple[str, Stub]]:
    """The server's base URL (ending in /v1) and its script."""
    stub = Stub()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(stub))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    port = httpd.server_address[1]
    yield f"http://127.0.0.1:{port}/v1", stub
    httpd.shutdown()
    httpd.server_close()
