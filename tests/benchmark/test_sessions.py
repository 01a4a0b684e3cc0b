"""The writers' session files (benchmark/sessions.py): loading, events, checks."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchmark.errors import BenchmarkError
from benchmark.sessions import REACTIONS, default_root, label_counts, load_sessions, problems

SESSION = {
    "session": "x-s001",
    "writer": "x",
    "lang": "zh",
    "scenario": "Other",
    "start": "2026-11-20T09:00:00Z",
    "steps": [
        {"role": "user", "text": "北京明天天气怎么样", "after_s": 0},
        {"role": "assistant", "text": "上海明天多云。", "after_s": 3, "reaction": "complaint"},
        {"feedback": "thumbs_down", "after_s": 2},
        {"role": "user", "text": "不对，我问的是北京", "after_s": 10},
        {"role": "assistant", "text": "北京明天晴。", "after_s": 3, "reaction": "no_follow_up"},
    ],
}


def write(tmp_path: Path, *sessions: dict) -> Path:
    (tmp_path / "x.jsonl").write_text("\n".join(json.dumps(s) for s in sessions) + "\n")
    return tmp_path


def test_a_session_becomes_schema_v1_events_on_the_given_clock(tmp_path: Path) -> None:
    [session] = load_sessions(write(tmp_path, SESSION))
    assert session.expected() == {"x-s001-a1": "complaint", "x-s001-a2": "no_follow_up"}
    events = session.events(datetime(2026, 12, 1, tzinfo=UTC))
    assert [e["type"] for e in events] == ["turn", "turn", "feedback", "turn", "turn"]
    feedback = events[2]
    assert feedback["turn_id"] == "x-s001-a1" and feedback["kind"] == "thumbs_down"
    assert events[3]["ts"] == "2026-12-01T00:00:15+00:00"  # 0 + 3 + 2 + 10 s
    assert {e["locale"] for e in events if e["type"] == "turn"} == {"zh-CN"}
    assert session.duration_s() == 18
    assert problems([session]) == []


def test_checks_name_what_is_wrong(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(SESSION))
    broken["steps"][1]["reaction"] = "angry"
    broken["steps"][4]["reaction"] = "satisfied"  # nothing follows it
    found = problems(load_sessions(write(tmp_path, SESSION, broken)))
    assert "x-s001: id used 2 times" in found
    assert any("reaction 'angry'" in f for f in found)
    assert any("no_follow_up iff nothing follows" in f for f in found)


def test_a_malformed_session_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"session": "s"}\n')
    with pytest.raises(BenchmarkError, match=r"bad\.jsonl:1"):
        load_sessions(tmp_path)


def test_the_bundled_sessions_are_usable_and_cover_every_reaction_in_both_languages() -> None:
    sessions = load_sessions()
    assert problems(sessions) == []
    writers = {s.writer for s in sessions}
    assert len(writers) >= 6
    assert sum(len(s.expected()) for s in sessions) >= 600
    counts = label_counts(sessions)
    for lang in ("zh", "en"):
        assert all(counts[lang].get(kind, 0) >= 10 for kind in REACTIONS), counts[lang]
    assert writers == {path.stem for path in default_root().glob("*.jsonl")}  # a file each
    assert all(s.id.startswith(f"{s.writer}-") for s in sessions)


def test_the_held_out_writers_pass_the_checks_and_share_no_writer_with_training() -> None:
    heldout = load_sessions(default_root().parent / "sessions_heldout")
    assert problems(heldout) == []
    assert {s.writer for s in heldout} == {"r08", "r09"}
    assert not {s.writer for s in heldout} & {s.writer for s in load_sessions()}
