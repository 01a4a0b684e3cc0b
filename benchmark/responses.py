"""Replies to be judged for tasks 2 and 3, read from a JSONL file of `{cid, <field>}`.

Task 2 reads `generated_response`, task 3 `recovery_response`. A reply may use the
agentic-search format (text under `content[].msg`) and is unwrapped like UXBench's own
replies. A null reply leaves its item missing. A cid that appears twice is an error:
which reply was meant cannot be guessed. Errors name the line and the field, never the reply's text.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchmark.adapters import response_text
from benchmark.errors import BenchmarkError, RecordError


class ResponsesError(BenchmarkError):
    """A responses file that cannot be read or does not hold `{cid, <field>}` lines."""


def load_responses(path: str | os.PathLike[str], field: str) -> dict[str, str]:
    """cid -> reply text, for every non-blank line of `path`."""
    file = Path(path)
    try:
        lines = file.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ResponsesError(
            f"expected a readable UTF-8 JSONL file of {{cid, {field}}}, "
            f"could not read {file}: {type(exc).__name__}"
        ) from None
    replies: dict[str, str] = {}
    nulls: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{file.name} line {number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ResponsesError(
                f"{where}: expected a JSON object, JSON error at char {exc.pos}"
            ) from None
        if not isinstance(record, dict):
            raise ResponsesError(f"{where}: expected a JSON object, got {type(record).__name__}")
        cid = record.get("cid")
        if isinstance(cid, bool) or not isinstance(cid, str | int) or cid == "":
            raise ResponsesError(f"{where}: field 'cid': expected a non-empty string")
        cid = str(cid)
        if field not in record:
            present = ", ".join(sorted(map(str, record))) or "none"
            raise ResponsesError(f"{where}: expected field {field!r}; fields present: {present}")
        if cid in replies or cid in nulls:
            raise ResponsesError(f"{where}: cid {cid!r} already had a reply on an earlier line")
        if record[field] is None:
            nulls.add(cid)  # a generator that failed on this item: the item stays missing
            continue
        try:
            replies[cid] = response_text(record[field], cid, field)
        except RecordError as exc:
            raise ResponsesError(f"{where}: {exc}") from None
    return replies
