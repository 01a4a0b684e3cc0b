"""A local server with the Hugging Face hub's file layout, for the hub model source.

It answers `HEAD` and `GET` on `/{repo}/resolve/{revision}/{filename}` with the headers
huggingface_hub reads (X-Repo-Commit, ETag, Content-Length), streaming the body from
whatever files it is given, so the real 491 MB GGUF is served without being copied.
Point HF_ENDPOINT at `url`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Served:
    """One file: its size, the sha256 the server claims for it, and its bytes in chunks."""

    size: int
    sha256: str
    chunks: Callable[[], Iterator[bytes]]


def file_chunks(paths: list[Path], flip_at: int | None = None) -> Callable[[], Iterator[bytes]]:
    """The concatenation of `paths`; with `flip_at`, the byte at that offset inverted."""

    def chunks() -> Iterator[bytes]:
        offset = 0
        for path in paths:
            with path.open("rb") as src:
                while block := src.read(1 << 20):
                    if flip_at is not None and offset <= flip_at < offset + len(block):
                        i = flip_at - offset
                        block = block[:i] + bytes([block[i] ^ 0xFF]) + block[i + 1 :]
                    offset += len(block)
                    yield block

    return chunks


@dataclass
class HubServer:
    files: dict[str, Served] = field(default_factory=dict)  # "repo/resolve/rev/filename"
    requests: list[tuple[str, str]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def serve(self, repo: str, revision: str, filename: str, served: Served) -> None:
        self.files[f"{repo}/resolve/{revision}/{filename}"] = served

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> HubServer:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, body: bool) -> None:
                hub.requests.append((self.command, self.path))
                served = hub.files.get(self.path.lstrip("/").split("?")[0])
                if served is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                revision = self.path.split("/resolve/")[1].split("/")[0]
                self.send_response(200)
                self.send_header("X-Repo-Commit", revision)
                self.send_header("ETag", f'"{served.sha256}"')
                self.send_header("Content-Length", str(served.size))
                self.end_headers()
                if body:
                    for chunk in served.chunks():
                        self.wfile.write(chunk)

            def do_HEAD(self) -> None:
                self._answer(body=False)

            def do_GET(self) -> None:
                self._answer(body=True)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
