"""How every Kafka client uxmon starts authenticates: one object built from the settings,
handed to faust, the probe consumer (aiokafka) and the command-line tools (kafka-python).

The password lives here as a plain string only as long as a client needs it; `repr` never
shows it, and neither do the errors.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stream.settings import Settings

TLS_PROTOCOLS = ("SSL", "SASL_SSL")
SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")


class SecurityError(ValueError):
    """A TLS or SASL setting that cannot work (a file that is not a certificate, ...)."""


@dataclass(frozen=True, slots=True)
class KafkaSecurity:
    protocol: str = "PLAINTEXT"
    cafile: Path | None = None  # None: the system's trust store
    certfile: Path | None = None  # a client certificate (mutual TLS), with keyfile
    keyfile: Path | None = None
    check_hostname: bool = True
    mechanism: str = "PLAIN"
    username: str | None = None
    password: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings) -> KafkaSecurity:
        return cls(
            protocol=settings.security_protocol,
            cafile=settings.ssl_cafile,
            certfile=settings.ssl_certfile,
            keyfile=settings.ssl_keyfile,
            check_hostname=settings.ssl_check_hostname,
            mechanism=settings.sasl_mechanism,
            username=settings.sasl_username,
            password=settings.secret("sasl_password"),
        )

    @property
    def tls(self) -> bool:
        return self.protocol in TLS_PROTOCOLS

    @property
    def sasl(self) -> bool:
        return self.protocol in SASL_PROTOCOLS

    def ssl_context(self) -> ssl.SSLContext | None:
        """Certificates verified always; the host name unless `check_hostname` is off."""
        if not self.tls:
            return None
        try:
            context = ssl.create_default_context(cafile=self.cafile)
            if self.certfile is not None:
                context.load_cert_chain(self.certfile, self.keyfile)
        except (OSError, ssl.SSLError) as exc:
            raise SecurityError(f"cannot load the TLS files ({_reason(exc)})") from None
        context.check_hostname = self.check_hostname
        return context

    def aiokafka(self) -> dict[str, Any]:
        """Keyword arguments of an aiokafka client."""
        options: dict[str, Any] = {"security_protocol": self.protocol}
        if self.tls:
            options["ssl_context"] = self.ssl_context()
        if self.sasl:
            options |= {
                "sasl_mechanism": self.mechanism,
                "sasl_plain_username": self.username,
                "sasl_plain_password": self.password,
            }
        return options

    def kafka_python(self) -> dict[str, Any]:
        """Keyword arguments of a kafka-python client (the same names, as it happens)."""
        return self.aiokafka()

    def faust_credentials(self) -> Any:
        """faust's `broker_credentials` (None for PLAINTEXT)."""
        import faust

        if self.sasl:
            return faust.SASLCredentials(
                username=self.username,
                password=self.password,
                ssl_context=self.ssl_context(),
                mechanism=self.mechanism,
            )
        if self.tls:
            return faust.SSLCredentials(self.ssl_context())
        return None


def _reason(exc: BaseException) -> str:
    return getattr(exc, "reason", None) or getattr(exc, "strerror", None) or type(exc).__name__
