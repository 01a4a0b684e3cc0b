"""The synthetic corpus: deterministic, balanced, complete, schema-valid, not leaky."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from benchmark import taxonomy as t
from benchmark.adapters import task1_item
from benchmark.synthetic import corpus, leakage
from benchmark.synthetic.traffic import DISMISS, FEEDBACK_KINDS, MODELS

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = corpus.Layout(
    ROOT / "benchmark" / "data",
    ROOT / "tests" / "data",
    ROOT / "stream" / "data" / "sample_traffic.jsonl",
)


@pytest.fixture(scope="module")
def built() -> corpus.Corpus:
    return corpus.build()


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _label(r: dict[str, Any]) -> str:
    return "liked" if r["ground_truth"] == 1 else "disliked"


def test_deterministic_and_committed_files_are_current(built: corpus.Corpus) -> None:
    again = corpus.build()
    assert again == built
    assert corpus.build(seed=1).seed != built.seed
    # What is committed is exactly what the generator writes (regenerate after changes).
    assert _read(LAYOUT.seed_file) == built.seed
    assert _read(LAYOUT.heldout_file) == built.heldout
    assert _read(LAYOUT.traffic_path) == built.traffic
    assert _read(LAYOUT.malformed_file) == built.malformed
    for config, rows in built.fixtures.items():
        assert _read(LAYOUT.fixture_file(config)) == rows


def test_write_layout(tmp_path: Path) -> None:
    small = corpus.build(
        seed=5, seed_per_label=40, heldout_per_label=20, conversations=5, fixture_per_config=10
    )
    layout = corpus.Layout(tmp_path / "data", tmp_path / "fixtures", tmp_path / "traffic.jsonl")
    written = corpus.write(small, layout)
    assert written[layout.seed_file] == 80
    assert (tmp_path / "fixtures" / "uxbench" / "task3_recovery" / "test.jsonl").is_file()


def test_counts_and_balance(built: corpus.Corpus) -> None:
    for records, minimum in ((built.seed, 2400), (built.heldout, 600)):
        assert len(records) >= minimum
        labels = Counter(_label(r) for r in records)
        assert labels["liked"] == labels["disliked"]
    for config, rows in built.fixtures.items():
        assert len(rows) >= 120, config
    assert len({e["conversation_id"] for e in built.traffic}) >= 220


def test_every_dimension_scenario_and_language(built: corpus.Corpus) -> None:
    for records, floor in ((built.seed, 25), (built.heldout, 12)):
        bad = Counter(r["failure_dimension"] for r in records if r["ground_truth"] == -1)
        assert set(bad) == set(t.FAILURE_DIMENSIONS)
        assert min(bad.values()) >= floor
        good = Counter(r["success_dimension"] for r in records if r["ground_truth"] == 1)
        assert set(good) == set(t.SUCCESS_DIMENSIONS)
        for label in ("liked", "disliked"):
            assert {r["scenario"] for r in records if _label(r) == label} == set(t.SCENARIOS)
        zh = sum(r["synthetic_meta"]["lang"] == "zh" for r in records) / len(records)
        assert 0.75 <= zh <= 0.85
    disliked = [r for r in built.seed if r["ground_truth"] == -1]
    shares = Counter(r["failure_dimension"] for r in disliked)
    for dim in (t.VERBOSITY, t.INCOMPLETE, t.INTENT, t.FACTUAL, t.RELIABILITY):
        assert shares[dim] / len(disliked) == pytest.approx(t.FAILURE_SHARES[dim], abs=0.015)


def test_heldout_topics_are_disjoint_and_replies_varied(built: corpus.Corpus) -> None:
    seed_topics = {r["synthetic_meta"]["topic"] for r in built.seed}
    held_topics = {r["synthetic_meta"]["topic"] for r in built.heldout}
    assert not seed_topics & held_topics
    for records in (built.seed, built.heldout):
        replies = {r["agent_response_full"] for r in records}
        assert len(replies) / len(records) > 0.95
        assert sum(bool(r["selected_history"]) for r in records) / len(records) > 0.3


def test_labels_are_not_given_away_by_surface_style(built: corpus.Corpus) -> None:
    for label in ("liked", "disliked"):
        replies = [str(r["agent_response_full"]) for r in built.seed if _label(r) == label]
        assert sum(r.startswith(("好的", "抱歉", "Sure", "Sorry")) for r in replies) > 20
        assert sum(("\n1. " in r or r.startswith("1. ")) for r in replies) > 50
        assert sum(len(r) > 300 for r in replies) > 50
        assert sum(len(r) < 40 for r in replies) > 50


def test_task1_records_follow_the_uxbench_schema(built: corpus.Corpus) -> None:
    for r in built.seed + built.heldout + built.fixtures["task1_judge_bad"]:
        assert isinstance(r["cid"], str) and r["cid"]
        query = r["source_query"]
        history = r.get("selected_history", [])
        if isinstance(history, str):
            history = json.loads(history)
        if isinstance(query, dict) and "selected_history" in r:
            assert isinstance(query["message"], str) and query["message"]
            assert query["turn_index"] == len(history)
        for i, turn in enumerate(history):
            assert turn["role"] in ("user", "assistant")
            assert isinstance(turn.get("message", turn.get("content")), str)
            assert turn["role"] == ("user" if i % 2 == 0 else "assistant")
        assert isinstance(r["agent_response_full"], str) and r["agent_response_full"]
        assert r["scenario"] in t.SCENARIOS
        assert r.get("difficulty", "easy") in t.DIFFICULTIES
        if r.get("ground_truth", -1) == -1:
            assert r["failure_dimension"] in t.FAILURE_DIMENSIONS
        else:
            assert r["success_dimension"] in t.SUCCESS_DIMENSIONS
        task1_item(r, default_label=1)  # adapts without error


ALLOWED_TURN = {
    "schema_version",
    "type",
    "conversation_id",
    "turn_id",
    "role",
    "text",
    "ts",
    "assistant_id",
    "model_version",
    "scenario",
    "locale",
    "metadata",
}
ALLOWED_FEEDBACK = {"schema_version", "type", "conversation_id", "turn_id", "kind", "ts"}


def test_traffic_events_follow_event_schema_v1(built: corpus.Corpus) -> None:
    turns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    assistant_turns: dict[str, set[str]] = defaultdict(set)
    previous = None
    for e in built.traffic:
        assert e["schema_version"] == 1 and isinstance(e["conversation_id"], str)
        ts = datetime.fromisoformat(e["ts"])
        assert ts.tzinfo is not None and "T" in e["ts"]
        if previous is not None:
            assert ts >= previous  # interleaved conversations, sorted by instant
        previous = ts
        if e["type"] == "turn":
            assert set(e) <= ALLOWED_TURN and {"role", "text", "turn_id", "ts"} <= set(e)
            assert e["role"] in ("user", "assistant") and isinstance(e["text"], str) and e["text"]
            assert e["assistant_id"] in ("web", "app", "api") and e["model_version"] in MODELS
            assert e["scenario"] in t.SCENARIOS and e["locale"] in ("zh-CN", "en-US")
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in e["metadata"].items())
            assert e["turn_id"] not in {x["turn_id"] for x in turns[e["conversation_id"]]}
            turns[e["conversation_id"]].append(e)
            if e["role"] == "assistant":
                assistant_turns[e["conversation_id"]].add(e["turn_id"])
        else:
            assert e["type"] == "feedback" and set(e) == ALLOWED_FEEDBACK
            assert e["kind"] in FEEDBACK_KINDS
            # feedback is about an earlier assistant turn of the same conversation
            assert e["turn_id"] in assistant_turns[e["conversation_id"]]
    for convo in turns.values():
        assert 2 <= sum(x["role"] == "user" for x in convo) <= 6
        assert convo[0]["role"] == "user"
    assert {e["kind"] for e in built.traffic if e["type"] == "feedback"} == set(FEEDBACK_KINDS)
    zh = sum(c[0]["locale"] == "zh-CN" for c in turns.values()) / len(turns)
    assert 0.7 <= zh <= 0.9


def test_traffic_shows_every_user_reaction(built: corpus.Corpus) -> None:
    users = [e for e in built.traffic if e["type"] == "turn" and e["role"] == "user"]
    expected = Counter(e["metadata"]["synthetic_expected"] for e in users)
    reactions = ("complaint", "skip_read", "dismiss", "repeat", "rephrase", "abandon", "satisfied")
    for reaction in reactions:
        assert expected[reaction] >= 5, reaction
    for e in users:
        if e["metadata"]["synthetic_expected"] == "dismiss":
            assert e["text"] in DISMISS["zh"] + DISMISS["en"]


def test_bag_of_words_probe_stays_below_leakage_ceiling(built: corpus.Corpus) -> None:
    probe = leakage.probe(built.seed, built.heldout, with_query=True, max_features=3000, epochs=150)
    assert probe.avg_acc < 0.85
