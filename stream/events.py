"""Event schema v1: parse raw Kafka bytes into typed events, or say exactly why not.

See docs/events.md. Every rejection carries a `Reason` from a closed set (it becomes a
metric label and the DLQ record's reason) and a detail that never quotes user text.

Whatever the bytes, parsing ends in an event or a `Rejected`: the size is checked before
decoding, and the JSON reader is strict and bounded (no duplicate keys, no NaN or
Infinity, no number longer than `Limits.max_number_chars`, no nesting deeper than
`Limits.max_depth`, no lone surrogate). Unknown fields are ignored and counted, so a
producer can add fields before uxmon knows them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

SCHEMA_VERSION = 1


class Reason(StrEnum):
    """Why an event went to the dead-letter topic."""

    TOO_LARGE = "too_large"  # more bytes than max_event_bytes, not even decoded
    UNDECODABLE = "undecodable"  # bytes are not UTF-8
    INVALID_JSON = "invalid_json"
    DUPLICATE_KEY = "duplicate_key"  # an object names a key twice
    NON_FINITE_NUMBER = "non_finite_number"  # NaN, Infinity, or a float that overflows
    NUMBER_TOO_LONG = "number_too_long"
    TOO_DEEP = "too_deep"  # nesting deeper than max_depth
    LONE_SURROGATE = "lone_surrogate"  # a \ud800-\udfff escape with no partner
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
    INTERNAL_ERROR = "internal_error"  # anything unexpected while applying this one record


class Rejected(Exception):
    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class Limits:
    max_event_bytes: int = 1 << 20
    max_depth: int = 64
    max_number_chars: int = 100
    max_text_chars: int = 32_000
    max_id_chars: int = 128
    max_metadata_items: int = 16
    max_metadata_chars: int = 256
    clock_skew_s: float = 300.0


Id = Annotated[str, StringConstraints(min_length=1, strip_whitespace=False)]


class _Event(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    schema_version: Literal[1]
    conversation_id: Id
    turn_id: Id
    ts: AwareDatetime


class TurnEvent(_Event):
    """A user or assistant message of a conversation (every assistant turn is scored)."""

    type: Literal["turn"]
    role: Literal["user", "assistant"]
    text: str
    assistant_id: Id | None = None
    model_version: Id | None = None
    scenario: str | None = None
    locale: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict)


class FeedbackEvent(_Event):
    """A user's explicit feedback on one assistant turn."""

    type: Literal["feedback"]
    kind: Literal["thumbs_up", "thumbs_down", "regenerate", "copy", "share", "stop"]


Event = TurnEvent | FeedbackEvent
_MODELS: dict[str, type[TurnEvent] | type[FeedbackEvent]] = {
    "turn": TurnEvent,
    "feedback": FeedbackEvent,
}


def json_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of the events, from the models above (docs/events.schema.json).

    It describes the shape; the size limits are settings (docs/events.md) and are checked
    by `parse_event` only. Unknown fields are allowed, as the parser ignores them."""
    adapter: TypeAdapter[Event] = TypeAdapter(Annotated[Event, Field(discriminator="type")])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"uxmon event, schema v{SCHEMA_VERSION}",
        "description": "One record value of the turns topic, keyed by conversation_id. "
        "Generated from stream/events.py by `uxmon events schema`; see docs/events.md.",
        **adapter.json_schema(),
    }


@dataclass(frozen=True, slots=True)
class Parsed:
    event: Event
    unknown_fields: int  # top-level fields schema v1 does not know (ignored)


def parse_event(raw: bytes | None, limits: Limits, now: datetime) -> Parsed:
    """Decode and validate one record value; raise Rejected with a closed-set reason."""
    if raw is None:
        raise Rejected(Reason.INVALID_JSON, "record has no value")
    if len(raw) > limits.max_event_bytes:
        raise Rejected(
            Reason.TOO_LARGE, f"record has {len(raw)} bytes, limit {limits.max_event_bytes}"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected(Reason.UNDECODABLE, f"not UTF-8 at byte {exc.start}") from None
    data = read_json(text, limits)
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
    return Parsed(event, len(data.keys() - model.model_fields.keys()))


def read_json(text: str, limits: Limits) -> Any:
    """`json.loads`, strict and bounded: every way it can fail is a `Rejected`."""
    max_chars = limits.max_number_chars

    def number(kind: type[int] | type[float]) -> Any:
        def convert(literal: str) -> int | float:
            if len(literal) > max_chars:
                raise Rejected(
                    Reason.NUMBER_TOO_LONG, f"a number has {len(literal)} chars, limit {max_chars}"
                )
            value = kind(literal)
            if not math.isfinite(value):
                raise Rejected(Reason.NON_FINITE_NUMBER, "a number overflows to infinity")
            return value

        return convert

    try:
        data = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_no_constant,
            parse_int=number(int),
            parse_float=number(float),
        )
    except json.JSONDecodeError as exc:
        raise Rejected(
            Reason.INVALID_JSON, f"{exc.msg} at line {exc.lineno} col {exc.colno}"
        ) from None
    except RecursionError:  # deeper than the interpreter's stack allows: surely too deep
        raise Rejected(Reason.TOO_DEEP, f"nesting deeper than {limits.max_depth}") from None
    _check_tree(data, limits.max_depth)
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise Rejected(Reason.DUPLICATE_KEY, "an object names a key more than once")
    return obj


def _no_constant(name: str) -> Any:
    raise Rejected(Reason.NON_FINITE_NUMBER, f"{name} is not a JSON number")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_tree(data: Any, max_depth: int) -> None:
    """Nesting depth and lone surrogates, iteratively (no recursion to exhaust)."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if _SURROGATE.search(node):
                raise Rejected(Reason.LONE_SURROGATE, "a string holds an unpaired surrogate")
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > max_depth:
            raise Rejected(Reason.TOO_DEEP, f"nesting deeper than {max_depth}")
        if isinstance(node, dict):
            stack.extend((key, depth) for key in node)
            stack.extend((value, depth + 1) for value in node.values())
        else:
            stack.extend((value, depth + 1) for value in node)


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
