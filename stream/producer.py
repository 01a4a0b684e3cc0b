"""Publish turn and feedback events to the turns topic the way the worker reads them.

An assistant backend uses `EventProducer` instead of writing JSON by hand. Each event is
checked by the worker's own parser (`stream.events.parse_event`, with the same limits), so
what it would dead-letter fails here, at the call that made it, with the worker's reason.
The record is keyed by its conversation_id, so a conversation stays in one partition, in
publish order; idempotent delivery with acks from all in-sync replicas keeps a retry from
duplicating or reordering it. See "Publishing from Python" in docs/events.md.

Nothing here logs or raises the text of an event: errors name fields, reasons and types.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from datetime import datetime
from types import TracebackType
from typing import Any, Literal

from kafka import KafkaProducer
from kafka.errors import KafkaError

from stream.broker import BrokerError, check_reachable
from stream.events import SCHEMA_VERSION, Event, Limits, Reason, Rejected, parse_event, utcnow

log = logging.getLogger(__name__)

FeedbackKind = Literal["thumbs_up", "thumbs_down", "regenerate", "copy", "share", "stop"]
Role = Literal["user", "assistant"]

# What makes the records correct for the worker: not for callers to change.
_FIXED = frozenset(
    {"acks", "enable_idempotence", "key_serializer", "value_serializer", "bootstrap_servers"}
)


class InvalidEventError(Rejected, ValueError):
    """The worker would dead-letter this event; `reason` and `detail` say why, as it would.

    Raised before anything is sent. `detail` names fields and error types, never text."""

    def __str__(self) -> str:
        return f"event not published: the worker would reject it as {self.reason}: {self.detail}"


class DeliveryError(BrokerError):
    """The broker did not take (or acknowledge) some events: they may be lost; resend."""


class EventProducer:
    """Validated, conversation-keyed publishing of schema v1 events (thread-safe).

    `broker` and `topic` default to the worker's settings (UXMON_BROKER, UXMON_TURNS_TOPIC),
    `limits` to its limits (UXMON_MAX_TEXT_CHARS and the others), and then TLS and SASL
    to its security settings (UXMON_SECURITY_PROTOCOL, ...); pass them when the
    backend does not share the worker's environment. `kafka_config` goes to kafka-python's
    KafkaProducer (TLS, SASL, linger_ms, compression_type, ...), except the options that
    make the records correct (acks, idempotence, serialisers), which are fixed.
    """

    def __init__(
        self,
        broker: str | None = None,
        topic: str | None = None,
        *,
        limits: Limits | None = None,
        max_block_ms: int = 10_000,
        connect_timeout_s: float = 5.0,
        **kafka_config: Any,
    ) -> None:
        fixed = sorted(_FIXED & kafka_config.keys())
        if fixed:
            raise ValueError(f"EventProducer fixes {', '.join(fixed)}; do not pass them")
        if broker is None or topic is None or limits is None:
            defaults = _defaults()
            broker = broker or defaults[0]
            topic = topic or defaults[1]
            limits = limits or defaults[2]
            kafka_config = {**defaults[3], **kafka_config}
        self.broker = broker.removeprefix("kafka://")  # the worker's settings accept it too
        self.topic = topic
        self.limits = limits
        # A wrong address fails now, in seconds, with the setting to fix, rather than as
        # a metadata timeout on the first publish.
        check_reachable(self.broker, connect_timeout_s)
        self._failures = 0
        self._first_failure: str | None = None
        self._lock = threading.Lock()
        try:
            self._producer = KafkaProducer(
                bootstrap_servers=[s.strip() for s in self.broker.split(",") if s.strip()],
                acks="all",  # an event is delivered once every in-sync replica has it
                enable_idempotence=True,  # retries neither duplicate nor reorder
                # a stuck broker blocks the constructor or a publish this long at most
                max_block_ms=max_block_ms,
                **{"bootstrap_timeout_ms": max_block_ms, **kafka_config},
            )
        except KafkaError as exc:  # it answers TCP but not Kafka (TLS, SASL, wrong port)
            raise BrokerError(
                f"no Kafka protocol at {self.broker}: {type(exc).__name__}; check the "
                "address and the security settings"
            ) from None

    def turn(
        self,
        conversation_id: str,
        turn_id: str,
        role: Role,
        text: str,
        *,
        ts: datetime | None = None,
        assistant_id: str | None = None,
        model_version: str | None = None,
        scenario: str | None = None,
        locale: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> Any:
        """Publish one user or assistant message; `ts` defaults to now (UTC).

        Returns kafka-python's future: `.get(timeout)` waits for the broker's
        acknowledgement and gives its partition and offset."""
        fields: dict[str, Any] = {
            "type": "turn",
            "conversation_id": conversation_id,
            "turn_id": turn_id,
            "role": role,
            "text": text,
            "ts": ts,
            "assistant_id": assistant_id,
            "model_version": model_version,
            "scenario": scenario,
            "locale": locale,
            "metadata": dict(metadata) if metadata is not None else None,
        }
        return self._send(fields)

    def feedback(
        self,
        conversation_id: str,
        turn_id: str,
        kind: FeedbackKind,
        *,
        ts: datetime | None = None,
    ) -> Any:
        """Publish a user's feedback on the assistant turn `turn_id`; `ts` defaults to now."""
        fields = {
            "type": "feedback",
            "conversation_id": conversation_id,
            "turn_id": turn_id,
            "kind": kind,
            "ts": ts,
        }
        return self._send(fields)

    def publish(self, event: Event) -> Any:
        """Publish an event model built elsewhere (still checked against the limits)."""
        return self._send(event.model_dump(mode="json", exclude_none=True))

    def flush(self, timeout_s: float | None = None) -> None:
        """Wait until every event published so far is acknowledged.

        Raises DeliveryError if any of them failed since the last flush, as kafka-python
        would otherwise only report that on each future."""
        try:
            self._producer.flush(timeout=timeout_s)
        except KafkaError as exc:
            raise DeliveryError(
                f"events to {self.topic} not acknowledged in time: {type(exc).__name__}"
            ) from None
        with self._lock:
            failures, first = self._failures, self._first_failure
            self._failures, self._first_failure = 0, None
        if failures:
            raise DeliveryError(
                f"{failures} event(s) were not delivered to {self.topic} on {self.broker} "
                f"(first: {first}); publish them again"
            )

    def close(self, timeout_s: float | None = None) -> None:
        """Flush, then close the connection (raises like `flush`)."""
        try:
            self.flush(timeout_s)
        finally:
            self._producer.close(timeout=timeout_s)

    def __enter__(self) -> EventProducer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _send(self, fields: dict[str, Any]) -> Any:
        value = encode(fields, self.limits)
        key = fields["conversation_id"].encode("utf-8")
        try:
            future = self._producer.send(self.topic, key=key, value=value)
        except KafkaError as exc:  # no metadata within max_block_ms, record too large, ...
            raise DeliveryError(
                f"could not publish to {self.topic} on {self.broker}: {type(exc).__name__}"
            ) from None
        future.add_errback(self._failed)
        return future

    def _failed(self, exc: BaseException) -> None:
        # Runs on kafka-python's sender thread; flush() reports it to the caller.
        with self._lock:
            self._failures += 1
            self._first_failure = self._first_failure or type(exc).__name__
        log.warning("an event was not delivered to %s: %s", self.topic, type(exc).__name__)


def encode(fields: Mapping[str, Any], limits: Limits) -> bytes:
    """The record value of an event: JSON, UTF-8, exactly as `parse_event` accepts it.

    `fields` are the event's fields without `schema_version`; a missing or None `ts` is
    now (UTC), other None fields are left out. Raises InvalidEventError with the
    worker's reason if the worker would reject the result."""
    event = {"schema_version": SCHEMA_VERSION, **fields}
    if event.get("ts") is None:
        event["ts"] = utcnow()
    event = {name: value for name, value in event.items() if value is not None}
    if isinstance(event["ts"], datetime):
        event["ts"] = event["ts"].isoformat()
    try:
        value = json.dumps(event, ensure_ascii=False, default=_not_json).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidEventError(
            Reason.LONE_SURROGATE, "a string holds an unpaired surrogate"
        ) from None
    try:  # the worker's own parser: what passes here is what the worker accepts
        parse_event(value, limits, utcnow())
    except Rejected as exc:
        raise InvalidEventError(exc.reason, exc.detail) from None
    return value


def _not_json(value: object) -> Any:
    raise InvalidEventError(
        Reason.SCHEMA_VIOLATION, f"a {type(value).__name__} value is not a JSON value"
    )


def _defaults() -> tuple[str, str, Limits, dict[str, Any]]:
    """Broker, topic, limits and TLS/SASL from the worker's settings (UXMON_* environment)."""
    from stream.settings import Settings

    settings = Settings()  # type: ignore[call-arg]  # env or defaults fill it
    security = settings.kafka_security().kafka_python()
    return settings.broker, settings.turns_topic, settings.limits(), security
