"""UXBench records (plain dicts) to scorer inputs, tolerant of every shape UXBench uses.

Shapes accepted (DESIGN.md, "Facts about UXBench"):

- a turn is `{role, message}` or `{role, content}` (extra keys such as `turn_index`,
  `create_time`, `length` are ignored); `system` turns are dropped because a scorer's
  `Turn` is a user or assistant turn;
- a history is a list of turns or a JSON string holding that list, or missing;
- `source_query` is `{turn_index, message}` or a plain string;
- a reply may be an agentic-search JSON string (or object) whose text is split over
  `content[].msg`: the pieces are concatenated in order, entries without `msg` (search
  results, tool calls) are skipped;
- optional fields (scenario, dimensions, difficulty, signal type) may be missing.

`datasets` decodes a column that mixes objects and strings as JSON, so a plain-string
query that looks like a number arrives as a number: numbers are turned back into text.

Anything else raises `RecordError` naming the record's cid and the field, never the text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from benchmark.errors import RecordError
from scorer.types import Dialogue, Role, Turn

LIKED, DISLIKED = 1, 0
_ROLES: dict[str, Role] = {"user": "user", "assistant": "assistant"}
_DROPPED_ROLES = frozenset({"system"})


@dataclass(frozen=True, slots=True)
class Task1Item:
    """One UX-Judge item: did the user like `dialogue.reply`? label 1 liked / 0 disliked."""

    cid: str
    dialogue: Dialogue
    label: int
    scenario: str
    dimension: str  # failure dimension (disliked) or success dimension (liked); "" if absent
    difficulty: str


@dataclass(frozen=True, slots=True)
class Task2Item:
    """One UX-Eval item: a context and query; `dialogue.reply` is "" until one is generated."""

    cid: str
    dialogue: Dialogue
    scenario: str
    dimension: str
    difficulty: str
    signal_type: str
    extras: Mapping[str, str] = field(default_factory=dict)  # scene/intent/sector levels etc.

    def with_reply(self, reply: str) -> Task2Item:
        return replace(self, dialogue=replace(self.dialogue, reply=reply))


@dataclass(frozen=True, slots=True)
class Task3Item:
    """One UX-Recovery item in recovery mode.

    `dialogue.history` is the conversation before the failure, `failed_reply` the failed
    response, `complaint` and `user_message` the user's complaint; `reply` is "" until a
    recovery reply is supplied with `with_reply`.
    """

    cid: str
    dialogue: Dialogue
    scenario: str
    dimension: str

    def with_reply(self, reply: str) -> Task3Item:
        return replace(self, dialogue=replace(self.dialogue, reply=reply))


def _shape(value: object) -> str:
    """Describe a value by type and size, never by content."""
    if value is None:
        return "nothing"
    if isinstance(value, str):
        return f"a {len(value)}-char string"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def cid_of(record: Mapping[str, Any]) -> str:
    cid = record.get("cid")
    if isinstance(cid, bool) or not isinstance(cid, str | int) or cid == "":
        raise RecordError(None, "cid", f"expected a non-empty string, got {_shape(cid)}")
    return str(cid)


def _optional_text(record: Mapping[str, Any], name: str, cid: str) -> str:
    value = record.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise RecordError(cid, name, f"expected a string, got {_shape(value)}")
    return value


def response_text(value: object, cid: str, name: str) -> str:
    """A reply's text, unwrapping the agentic-search format when it is used."""
    if isinstance(value, str):
        stripped = value.lstrip()
        if not stripped.startswith("{"):
            return value
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError:
            return value  # a reply that merely starts with a brace
        unwrapped = _agentic(parsed)
        return value if unwrapped is None else unwrapped
    if isinstance(value, dict):
        unwrapped = _agentic(value)
        if unwrapped is not None:
            return unwrapped
    raise RecordError(
        cid, name, f"expected a string or an agentic-search object, got {_shape(value)}"
    )


def _agentic(parsed: object) -> str | None:
    if not isinstance(parsed, dict) or not isinstance(parsed.get("content"), list):
        return None
    pieces = [
        e["msg"] for e in parsed["content"] if isinstance(e, dict) and isinstance(e.get("msg"), str)
    ]
    return "".join(pieces) if pieces else None


def turns(value: object, cid: str, name: str) -> tuple[Turn, ...]:
    """A history as scorer turns, oldest first."""
    if value is None:
        return ()
    if isinstance(value, str):
        if not value.strip():
            return ()
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise RecordError(
                cid, name, f"expected a list or a JSON string of one; JSON error at char {exc.pos}"
            ) from None
    if not isinstance(value, list):
        raise RecordError(cid, name, f"expected a list of turns, got {_shape(value)}")
    out = []
    for i, turn in enumerate(value):
        where = f"{name}[{i}]"
        if not isinstance(turn, dict):
            raise RecordError(cid, where, f"expected a turn object, got {_shape(turn)}")
        role = turn.get("role")
        if isinstance(role, str) and role.lower() in _DROPPED_ROLES:
            continue
        if not isinstance(role, str) or role.lower() not in _ROLES:
            shown = (
                repr(role)
                if isinstance(role, str) and len(role) <= 16 and role.isascii()
                else _shape(role)
            )
            raise RecordError(cid, f"{where}.role", f"expected 'user' or 'assistant', got {shown}")
        text = turn.get("message")
        key = "message"
        if text is None:
            text, key = turn.get("content"), "content"
        if not isinstance(text, str):
            raise RecordError(
                cid,
                f"{where}.{key}",
                f"expected a string (turn text under 'message' or 'content'), got {_shape(text)}",
            )
        out.append(Turn(role=_ROLES[role.lower()], text=text))
    return tuple(out)


def _query(value: object, cid: str) -> str:
    if isinstance(value, dict):
        text = value.get("message")
        if text is None:
            text = value.get("content")
        if not isinstance(text, str):
            raise RecordError(cid, "source_query.message", f"expected a string, got {_shape(text)}")
        return text
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)  # a numeric-looking query that datasets decoded as JSON
    raise RecordError(
        cid, "source_query", f"expected an object with 'message' or a string, got {_shape(value)}"
    )


def label_of(value: object, cid: str) -> int:
    """UXBench's ground_truth (1 liked, -1 disliked; 0 also read as disliked) as 1/0."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value in (1, -1, 0):
        return LIKED if value == 1 else DISLIKED
    raise RecordError(
        cid, "ground_truth", f"expected 1 (liked) or -1 (disliked), got {_shape(value)}"
    )


def task1_item(record: Mapping[str, Any], *, default_label: int | None = None) -> Task1Item:
    """A Task-1 record as a scorer item. `default_label` (1/0) applies when ground_truth is
    missing, as when the config (task1_judge_good / _bad) already says it."""
    cid = cid_of(record)
    if record.get("ground_truth") is None:
        if default_label is None:
            raise RecordError(cid, "ground_truth", "missing, and no default from the config")
        label = default_label
    else:
        label = label_of(record["ground_truth"], cid)
    if "source_query" not in record or record["source_query"] is None:
        raise RecordError(cid, "source_query", "missing")
    if record.get("agent_response_full") is None:
        raise RecordError(cid, "agent_response_full", "missing")
    dimension = _optional_text(
        record, "failure_dimension" if label == DISLIKED else "success_dimension", cid
    )
    if not dimension:
        dimension = _optional_text(
            record, "success_dimension" if label == DISLIKED else "failure_dimension", cid
        )
    dialogue = Dialogue(
        user_message=_query(record["source_query"], cid),
        reply=response_text(record["agent_response_full"], cid, "agent_response_full"),
        history=turns(record.get("selected_history"), cid, "selected_history"),
        id=cid,
    )
    return Task1Item(
        cid,
        dialogue,
        label,
        _optional_text(record, "scenario", cid),
        dimension,
        _optional_text(record, "difficulty", cid),
    )


_TASK2_KNOWN = frozenset(
    {"cid", "query", "messages", "history", "scenario", "dimension", "difficulty", "signal_type"}
)


def task2_item(record: Mapping[str, Any]) -> Task2Item:
    """A Task-2 record; history from `messages` (which usually ends with the query itself,
    dropped here) or `history`."""
    cid = cid_of(record)
    query = record.get("query")
    if not isinstance(query, str):
        raise RecordError(cid, "query", f"expected a string, got {_shape(query)}")
    name = "messages" if record.get("messages") is not None else "history"
    history = turns(record.get(name), cid, name)
    if history and history[-1].role == "user" and history[-1].text.strip() == query.strip():
        history = history[:-1]
    extras = {k: v for k, v in record.items() if k not in _TASK2_KNOWN and isinstance(v, str)}
    return Task2Item(
        cid,
        Dialogue(user_message=query, reply="", history=history, id=cid),
        _optional_text(record, "scenario", cid),
        _optional_text(record, "dimension", cid),
        _optional_text(record, "difficulty", cid),
        _optional_text(record, "signal_type", cid),
        extras,
    )


def task3_item(record: Mapping[str, Any]) -> Task3Item:
    """A Task-3 record in recovery mode (see Task3Item)."""
    cid = cid_of(record)
    if record.get("failed_response") is None:
        raise RecordError(cid, "failed_response", "missing")
    failed = response_text(record["failed_response"], cid, "failed_response")
    complaint = record.get("user_complaint")
    if not isinstance(complaint, str):
        raise RecordError(cid, "user_complaint", f"expected a string, got {_shape(complaint)}")
    history = turns(record.get("history"), cid, "history")
    if history and history[-1].role == "assistant" and history[-1].text == failed:
        history = history[:-1]  # some exports repeat the failed reply at the end of the history
    dialogue = Dialogue(
        user_message=complaint,
        reply="",
        history=history,
        failed_reply=failed,
        complaint=complaint,
        id=cid,
    )
    return Task3Item(
        cid,
        dialogue,
        _optional_text(record, "scenario", cid),
        _optional_text(record, "failure_dimension", cid),
    )


@dataclass(frozen=True, slots=True)
class RecoveryCandidate:
    """A recovery attempt with its label: did it fix the failure (1) or not (0)?"""

    item: Task3Item  # with the candidate as its reply
    label: int
    pair: str | None  # candidates of one context share it (fixing vs non-fixing)


def task3_candidates(record: Mapping[str, Any]) -> list[RecoveryCandidate]:
    """Labelled recovery attempts of a Task-3 record, in either shape: `fixing_reply` and
    `non_fixing_reply` (two candidates, a pair), or `candidate_reply` with `label` (1 fixes,
    0 or -1 does not) and an optional `pair` id."""
    item = task3_item(record)
    # (a loader that unifies columns gives every record both shapes' keys, unused ones None)
    if record.get("fixing_reply") is not None or record.get("non_fixing_reply") is not None:
        attempts = []
        for name, label, suffix in (
            ("fixing_reply", LIKED, "fix"),
            ("non_fixing_reply", DISLIKED, "nofix"),
        ):
            reply = response_text(record.get(name), item.cid, name)
            candidate = replace(item.with_reply(reply), cid=f"{item.cid}#{suffix}")
            attempts.append(RecoveryCandidate(candidate, label, item.cid))
        return attempts
    if record.get("candidate_reply") is None:
        raise RecordError(
            item.cid, "candidate_reply", "missing (or give fixing_reply and non_fixing_reply)"
        )
    reply = response_text(record["candidate_reply"], item.cid, "candidate_reply")
    label = label_of(record.get("label"), item.cid)
    pair = record.get("pair")
    return [
        RecoveryCandidate(item.with_reply(reply), label, pair if isinstance(pair, str) else None)
    ]
