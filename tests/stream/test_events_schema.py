"""docs/events.schema.json is generated from the event models and agrees with the parser."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from stream.commands.events import schema_text
from stream.events import Limits, Rejected, json_schema, parse_event

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[2]
CHECKED_IN = REPO / "docs" / "events.schema.json"
SAMPLE = REPO / "stream" / "data" / "sample_traffic.jsonl"
FAR_FUTURE = datetime(2100, 1, 1, tzinfo=UTC)  # no sample event is "in the future"


def test_the_checked_in_schema_is_the_generated_one() -> None:
    assert CHECKED_IN.read_text(encoding="utf-8") == schema_text(), (
        "docs/events.schema.json is stale: run `uxmon events schema --out docs/events.schema.json`"
    )


def test_it_is_a_valid_2020_12_schema_naming_both_event_types() -> None:
    schema = json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert set(schema["$defs"]) == {"TurnEvent", "FeedbackEvent"}
    assert schema["$defs"]["TurnEvent"]["required"] == [
        "schema_version",
        "conversation_id",
        "turn_id",
        "ts",
        "type",
        "role",
        "text",
    ]


def _valid(event: object) -> bool:
    validator = jsonschema.Draft202012Validator(
        json_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return validator.is_valid(event)


def test_every_event_the_parser_accepts_fits_the_schema() -> None:
    accepted = 0
    for line in SAMPLE.read_bytes().splitlines():
        try:
            parse_event(line, Limits(), FAR_FUTURE)
        except Rejected:
            continue
        accepted += 1
        assert _valid(json.loads(line)), "a sample event the parser accepts breaks the schema"
    assert accepted > 1000


@pytest.mark.parametrize(
    ("change", "valid"),
    [
        ({}, True),
        ({"trace_id": "x"}, True),  # unknown fields are ignored, as by the parser
        ({"role": "system"}, False),
        ({"schema_version": 2}, False),
        ({"type": "click"}, False),
        ({"conversation_id": ""}, False),
        ({"metadata": {"k": 1}}, False),
    ],
)
def test_the_schema_and_the_parser_agree_on_a_turn(change: dict, valid: bool) -> None:
    event = {
        "schema_version": 1,
        "type": "turn",
        "conversation_id": "c-1",
        "turn_id": "t-1",
        "role": "assistant",
        "text": "ok",
        "ts": "2026-11-29T10:15:02.120+08:00",
        **change,
    }
    assert _valid(event) is valid
    raw = json.dumps(event).encode()
    if valid:
        parse_event(raw, Limits(), FAR_FUTURE)
    else:
        with pytest.raises(Rejected):
            parse_event(raw, Limits(), FAR_FUTURE)
