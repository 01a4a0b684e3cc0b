"""Event schema v1: parse raw Kafka bytes into typed events, or say exactly why not.

See docs/events.md. Every rejection carries a `Reason` from a closed set (it becomes a
metric label and the DLQ record's reason) and a detail that never quotes user text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

SCHEMA_VERSION = 1


class Reason(StrEnum):
    """Why an event went to the dead-letter topic."""

    UNDECODABLE = "undecodable"  # bytes are not UTF-8
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    UNKNOWN_SCHEMA_VERSION = "unknown_schema_version"
    UNKNOWN_TYPE = "unknown_type"
    SCHEMA_VIOLATION = "schema_violation"
    OVER_LIMIT = "over_limit"
    FUTURE_TIMESTAMP = "future_timestamp"
    DUPLICATE = "duplicate"
    OUT_OF_ORDER = "out_of_order"
    KEY_MISMATCH = "key_mismatch"  # not keyed by conversation_id
    SCORING_FAILED = "scoring_failed"  # valid, but a scorer raised on it alone


class Rejected(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Limits:
    max_text_chars: int = 32_000
    max_id_chars: int = 128
    max_metadata_items: int = 16
    max_metadata_chars: int = 256
    clock_skew_s: float = 300.0


Id = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)]


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    schema_version: Literal[1]
    conversation_id: Id
    turn_id: Id
    ts: AwareDatetime


class TurnEvent(_Event):
    type: Literal["turn"]
    role: Literal["user", "assistant"]
    text: str
    assistant_id: Id | None = None
    model_version: Id | None = None
    scenario: str | None = None
    locale: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


class FeedbackEvent(_Event):
    type: Literal["feedback"]
    kind: Literal["thumbs_up", "thumbs_down", "regenerate", "copy", "share", "stop"]


Event = TurnEvent | FeedbackEvent
_MODELS: dict[str, type[TurnEvent] | type[FeedbackEvent]] = {
    "turn": TurnEvent,
    "feedback": FeedbackEvent,
}


def parse_event(raw: bytes | None, limits: Limits, now: datetime) -> Event:
    """Decode and validate one record value; raise Rejected with a closed-set reason."""
    if raw is None:
        raise Rejected(Reason.INVALID_JSON, "record has no value")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected(Reason.UNDECODABLE, f"not UTF-8 at byte {exc.start}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Rejected(
            Reason.INVALID_JSON, f"{exc.msg} at line {exc.lineno} col {exc.colno}"
        ) from None
    if not isinstance(data, dict):
        raise Rejected(Reason.NOT_AN_OBJECT, f"expected a JSON object, got {type(data).__name__}")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION or isinstance(version, bool):
        raise Rejected(
            Reason.UNKNOWN_SCHEMA_VERSION, f"expected schema_version 1, got {_shape(version)}"
        )
    kind = data.get("type")
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise Rejected(Reason.UNKNOWN_TYPE, f"expected type turn or feedback, got {_shape(kind)}")
    _check_limits(data, limits)
    try:
        event = model.model_validate(_with_parsed_ts(data))
    except ValidationError as exc:
        raise Rejected(Reason.SCHEMA_VIOLATION, _describe(exc)) from None
    if event.ts - now > timedelta(seconds=limits.clock_skew_s):
        raise Rejected(
            Reason.FUTURE_TIMESTAMP,
            f"ts is {(event.ts - now).total_seconds():.0f}s in the future "
            f"(allowed skew {limits.clock_skew_s:.0f}s)",
        )
    return event


def _with_parsed_ts(data: dict[str, Any]) -> dict[str, Any]:
    # Strict mode refuses strings for datetimes; parse ISO-8601 here so the error is ours.
    ts = data.get("ts")
    if isinstance(ts, str):
        try:
            parsed = datetime.fromisoformat(ts)
        except ValueError:
            return data
        return {**data, "ts": parsed}
    return data


def _check_limits(data: dict[str, Any], limits: Limits) -> None:
    text = data.get("text")
    if isinstance(text, str) and len(text) > limits.max_text_chars:
        raise Rejected(
            Reason.OVER_LIMIT, f"text has {len(text)} chars, limit {limits.max_text_chars}"
        )
    for name in (
        "conversation_id",
        "turn_id",
        "assistant_id",
        "model_version",
        "scenario",
        "locale",
    ):
        value = data.get(name)
        if isinstance(value, str) and len(value) > limits.max_id_chars:
            raise Rejected(
                Reason.OVER_LIMIT, f"{name} has {len(value)} chars, limit {limits.max_id_chars}"
            )
    metadata = data.get("metadata")
    if isinstance(metadata, dict):
        if len(metadata) > limits.max_metadata_items:
            raise Rejected(
                Reason.OVER_LIMIT,
                f"metadata has {len(metadata)} entries, limit {limits.max_metadata_items}",
            )
        for key, value in metadata.items():
            if len(key) > limits.max_metadata_chars or (
                isinstance(value, str) and len(value) > limits.max_metadata_chars
            ):
                raise Rejected(
                    Reason.OVER_LIMIT,
                    f"a metadata entry exceeds {limits.max_metadata_chars} chars",
                )


def _shape(value: object) -> str:
    """Describe a value without quoting free text from it."""
    if value is None:
        return "nothing"
    if isinstance(value, bool | int | float):
        return repr(value)
    if isinstance(value, str):
        return (
            repr(value) if len(value) <= 24 and value.isascii() else f"a {len(value)}-char string"
        )
    return f"a {type(value).__name__}"


def _describe(exc: ValidationError) -> str:
    # Pydantic messages can echo the input; keep field paths and error types only.
    parts = []
    for error in exc.errors(include_input=False, include_url=False)[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "event"
        parts.append(f"{where}: {error['type']}")
    return "; ".join(parts)


def utcnow() -> datetime:
    return datetime.now(UTC)
