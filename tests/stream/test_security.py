"""Kafka TLS and SASL settings (stream/security.py): what every client is given."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from stream.security import KafkaSecurity, SecurityError
from stream.settings import Settings


def test_plaintext_gives_the_clients_nothing_to_set_up() -> None:
    security = Settings().kafka_security()
    assert security.aiokafka() == {"security_protocol": "PLAINTEXT"}
    assert security.ssl_context() is None and security.faust_credentials() is None


def test_sasl_over_tls_reaches_every_client_and_the_password_never_shows(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("hunter2-from-a-file\n")
    settings = Settings(
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username="uxmon",
        sasl_password_file=secret,
    )
    security = settings.kafka_security()
    options = security.aiokafka()
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert options["sasl_plain_username"] == "uxmon"
    assert options["sasl_plain_password"] == "hunter2-from-a-file"
    assert options["ssl_context"].check_hostname  # verified, host name included
    assert security.kafka_python().keys() == options.keys()
    credentials = security.faust_credentials()
    assert (
        credentials.protocol.value == "SASL_SSL" and credentials.mechanism.value == "SCRAM-SHA-512"
    )
    assert "hunter2" not in repr(security) + repr(credentials) + repr(settings)


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"security_protocol": "SASL_PLAINTEXT"}, "sasl_username"),
        ({"security_protocol": "SASL_PLAINTEXT", "sasl_username": "u"}, "sasl_password"),
        ({"ssl_cafile": "/nonexistent/ca.pem"}, "ssl_cafile"),
        ({"security_protocol": "TLS"}, "security_protocol"),
        ({"sasl_mechanism": "GSSAPI"}, "sasl_mechanism"),
    ],
)
def test_incomplete_security_fails_at_start_naming_the_field(changes: dict, named: str) -> None:
    with pytest.raises(ValidationError, match=named):
        Settings(**changes)


def test_a_file_that_is_no_certificate_is_a_clear_error(tmp_path: Path) -> None:
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate")
    with pytest.raises(SecurityError, match="cannot load the TLS files"):
        KafkaSecurity(protocol="SSL", cafile=bogus).ssl_context()
