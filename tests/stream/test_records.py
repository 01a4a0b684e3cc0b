"""The output records a batch publishes (stream/records.py)."""

from __future__ import annotations

import base64
import hashlib
import json

from stream.conversation import Position
from stream.pipeline import score_all
from stream.records import Record, dead_letter_bytes, dead_letter_record, scored_record
from tests.stream.test_pipeline import NOW, plan, record
from tests.support.scorers import Keyword


def test_output_records_carry_no_text_unless_asked() -> None:
    result = plan(
        [record(0, "a", "u", "user", "秘密问题"), record(1, "a", "x", "assistant", "秘密回答")]
    )
    [item] = result.to_score
    [run] = score_all([Keyword()], [item.dialogue])
    plain = json.dumps(scored_record(item, run.scores, NOW, include_text=False), ensure_ascii=False)
    assert "秘密" not in plain and '"verdict": "good"' in plain
    assert "秘密回答" in json.dumps(
        scored_record(item, run.scores, NOW, include_text=True), ensure_ascii=False
    )


def test_dead_letters_keep_the_original_bytes() -> None:
    bad = Record(b"k", b"\x00\xffraw", Position("turns", 3, 42))
    [dead] = plan([bad]).dead
    out = dead_letter_record(dead, NOW, max_value_bytes=1024)
    assert base64.b64decode(out["value_b64"]) == b"\x00\xffraw"
    assert "value_truncated" not in out
    assert (out["topic"], out["partition"], out["offset"], out["reason"]) == (
        "turns",
        3,
        42,
        "undecodable",
    )


def test_a_dead_letter_fits_its_budget_however_big_the_record() -> None:
    value = b'{"text": "' + "长".encode() * 800_000 + b'"'  # 2.4 MB, invalid JSON
    key = b"k" * 5000
    [dead] = plan([Record(key, value, Position("uxmon.turns", 1, 7))]).dead
    out = dead_letter_record(dead, NOW, max_value_bytes=256 * 1024)
    assert base64.b64decode(out["value_b64"]) == value[: 256 * 1024]
    assert out["value_truncated"] and out["value_bytes"] == len(value)
    assert out["value_sha256"] == hashlib.sha256(value).hexdigest()
    assert base64.b64decode(out["key_b64"]) == key[:1024] and out["key_bytes"] == 5000
    size = len(json.dumps(out).encode())
    assert size <= dead_letter_bytes(256 * 1024, len("uxmon.turns")) < 1_000_000
