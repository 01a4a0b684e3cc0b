"""Kafka over TLS for real: Debian's stunnel in front of the embedded broker, which
advertises only the TLS port, and certificates checked. A worker, `uxmon replay`,
`uxmon inspect` and a consumer of the scores all connect with the same settings
(UXMON_SECURITY_PROTOCOL, UXMON_SSL_CAFILE); a CA that did not sign the broker's
certificate fails `uxmon serve` at start in one line."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition

from stream.security import KafkaSecurity
from tests.support.cli import uxmon
from tests.support.services import worker as spawn_worker
from tests.support.tls import make_certificates, tls_broker
from tests.support.traffic import conversations

pytestmark = pytest.mark.integration


def scores_over_tls(address: str, topic: str, security: KafkaSecurity) -> list[dict]:
    consumer = KafkaConsumer(
        bootstrap_servers=address, consumer_timeout_ms=3000, **security.kafka_python()
    )
    try:
        partitions = [TopicPartition(topic, p) for p in consumer.partitions_for_topic(topic) or ()]
        consumer.assign(partitions)
        consumer.seek_to_beginning()
        return [json.loads(message.value) for message in consumer]
    finally:
        consumer.close()


def test_the_worker_and_the_tools_speak_tls_and_verify_the_broker(
    names: dict[str, str], workdir: Path
) -> None:
    certificates = make_certificates(workdir / "certs")
    tls = {"UXMON_SECURITY_PROTOCOL": "SSL", "UXMON_SSL_CAFILE": str(certificates.ca)}
    with tls_broker(workdir / "tls", certificates) as address:
        worker = spawn_worker(
            address,
            names["app_id"],
            workdir,
            scorers="tests.support.scorers:Keyword",
            grm="",
            security_protocol="SSL",
            ssl_cafile=str(certificates.ca),
            **{k: v for k, v in names.items() if k != "app_id"},
        ).start()
        try:
            worker.wait_ready(timeout_s=120)
            events = conversations(5, exchanges=1)
            traffic = workdir / "traffic.jsonl"
            traffic.write_text("".join(json.dumps(e) + "\n" for e in events))
            sent = uxmon(
                "replay", str(traffic), "--broker", address,
                "--topic", names["turns_topic"], "--no-progress", **tls,
            )  # fmt: skip
            assert sent.returncode == 0, sent.stderr
            turns = sum(e["role"] == "assistant" for e in events)
            worker.wait_for("uxmon_turns_scored_total", turns, timeout_s=60)
        finally:
            worker.stop()
        security = KafkaSecurity(protocol="SSL", cafile=certificates.ca)
        scored = [r for r in scores_over_tls(address, names["scores_topic"], security)]
        assert {r["turn_id"] for r in scored if r["type"] == "score"} == {
            e["turn_id"] for e in events if e["role"] == "assistant"
        }

        inspected = uxmon(
            "inspect", "--broker", address, "--topic", names["scores_topic"],
            "--json", "--no-progress", **tls,
        )  # fmt: skip
        assert inspected.returncode == 0, inspected.stderr
        assert json.loads(inspected.stdout)["records"] == len(scored)

        started = time.monotonic()
        wrong = uxmon(
            "serve", "--broker", address, "--scorer", "tests.support.scorers:Keyword",
            UXMON_SECURITY_PROTOCOL="SSL", UXMON_SSL_CAFILE=str(certificates.other_ca),
            UXMON_GRM="", PYTHONPATH=str(Path(__file__).resolve().parents[2]),
        )  # fmt: skip
        assert wrong.returncode == 1
        assert "Traceback" not in wrong.stderr
        [line] = wrong.stderr.strip().splitlines()
        assert "certificate does not verify" in line and "UXMON_SSL_CAFILE" in line, line
        assert time.monotonic() - started < 30
