"""TLS in front of the embedded broker, for tests: a throw-away CA and server certificate
(openssl), tansu advertising the TLS port, and Debian's stunnel terminating TLS there.
`make services` installs stunnel4 (apt)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from stream.broker import EmbeddedBroker, free_port
from tests.support.prometheus import ServiceMissing


@dataclass(frozen=True)
class Certificates:
    ca: Path  # signs the server's certificate
    other_ca: Path  # signs nothing the broker shows: a wrong CA
    cert: Path
    key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificates(where: Path) -> Certificates:
    where.mkdir(parents=True, exist_ok=True)
    for name in ("ca", "other-ca"):
        _openssl(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-keyout", f"{name}.key", "-out", f"{name}.pem", "-subj", f"/CN=uxmon test {name}",
            cwd=where,
        )  # fmt: skip
    _openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
        "-subj", "/CN=localhost", cwd=where,
    )  # fmt: skip
    (where / "san.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    _openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-out", "server.pem", "-extfile", "san.cnf", cwd=where,
    )  # fmt: skip
    return Certificates(
        where / "ca.pem", where / "other-ca.pem", where / "server.pem", where / "server.key"
    )


@contextmanager
def tls_broker(where: Path, certificates: Certificates) -> Iterator[str]:
    """A broker reachable only through TLS; yields its HOST:PORT."""
    stunnel = shutil.which("stunnel4") or shutil.which("stunnel")
    if stunnel is None:
        raise ServiceMissing("stunnel is not installed; run `make services` (apt stunnel4)")
    where.mkdir(parents=True, exist_ok=True)
    tls_port, plain_port = free_port(), free_port()
    config = where / "stunnel.conf"
    config.write_text(
        "foreground = yes\npid =\n[kafka]\n"
        f"accept = 127.0.0.1:{tls_port}\nconnect = 127.0.0.1:{plain_port}\n"
        f"cert = {certificates.cert}\nkey = {certificates.key}\n"
    )
    broker = EmbeddedBroker(plain_port, log_path=where / "tansu.log", advertised_port=tls_port)
    with broker:
        with (where / "stunnel.log").open("ab") as log:
            process = subprocess.Popen([stunnel, str(config)], stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", tls_port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or process.poll() is not None:
                        raise RuntimeError(f"stunnel did not start; see {where}") from None
                    time.sleep(0.05)
            yield f"127.0.0.1:{tls_port}"
        finally:
            process.terminate()
            process.wait(5)
