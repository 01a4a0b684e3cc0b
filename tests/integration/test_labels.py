"""The labels topic through the real broker: the demo traffic (with its feedback events,
some sent twice) goes to a worker with labels on, which is killed with SIGKILL mid-stream
and restarted. Then the topic holds one label per (turn, signal) the input gives, the same
whatever the replays; `uxmon labels export` writes one record per turn that `uxmon bench`
reads unchanged; and no topic but the labels topic carries text.

The expected labels come from the input and the scores topic, not from the worker's code:
each thumbs_up, thumbs_down, regenerate, copy or share event on an assistant turn is one
explicit label; each complaint or satisfied reaction on the scores topic is one implicit
label. The reactions are the rules' (no encoder to load); the scorer is the instant
stand-in, slowed so the kill lands inside the stream.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from benchmark.uxbench import load_task1
from stream.labels import EXPLICIT, IMPLICIT
from stream.local import LocalWorker
from tests.integration.test_inspect import shifted_sample
from tests.support.cli import uxmon
from tests.support.services import produce, read_topic

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]
TEXT_FIELDS = {"text", "user_message", "reply", "agent_response_full", "selected_history"}


def encode(event: dict[str, Any]) -> tuple[bytes, bytes]:
    return event["conversation_id"].encode(), json.dumps(event, ensure_ascii=False).encode()


def expected_explicit(events: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    assistant = {
        (e["conversation_id"], e["turn_id"]) for e in events if e.get("role") == "assistant"
    }
    return {
        (e["conversation_id"], e["turn_id"], "explicit", e["kind"])
        for e in events
        if e["type"] == "feedback"
        and e["kind"] in EXPLICIT
        and (e["conversation_id"], e["turn_id"]) in assistant
    }


def expected_implicit(scores_topic: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    return {
        (r["conversation_id"], r["turn_id"], "implicit", r["reaction"])
        for r in scores_topic
        if r["type"] == "reaction" and r["reaction"] in {str(k) for k in IMPLICIT}
    }


def wait_settled(worker: LocalWorker, assistant_turns: int, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while worker.total("uxmon_turns_scored_total") < assistant_turns:
        if time.monotonic() > deadline:
            raise TimeoutError(f"not every turn scored; log:\n{worker.log_tail()}")
        time.sleep(1)


def test_one_label_per_turn_and_signal_through_a_kill_and_restart(
    broker: str,
    names: dict[str, str],
    start_worker: Start,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    labels_topic = f"labels-{names['app_id']}"
    events = shifted_sample(4, datetime.now(UTC) - timedelta(seconds=5))
    feedback = [e for e in events if e["type"] == "feedback"]
    twice = feedback[::3]  # a producer that retried: rejected as duplicates
    assistant_turns = sum(e.get("role") == "assistant" for e in events)
    monkeypatch.setenv("UXMON_TEST_SLOW_S", "0.3")
    monkeypatch.setenv("UXMON_TEST_SLOW_INNER", "tests.support.scorers:Keyword")
    settings = dict(
        scorers="tests.support.scorers:Slow",
        reaction_model="",
        labels_topic=labels_topic,
        batch_max=8,
    )
    first = start_worker(**settings)
    produce(broker, names["turns_topic"], [encode(e) for e in [*events, *twice]])
    first.wait_for("uxmon_labels_total", 5)
    first.kill9()
    time.sleep(4)  # the dead member's session expires before the next one joins
    second = start_worker(**settings)
    wait_settled(second, assistant_turns)
    time.sleep(4)  # anything published twice would show by now

    scores = read_topic(broker, names["scores_topic"], assistant_turns, timeout_s=60)
    expected = expected_explicit(events) | expected_implicit(scores)
    raw = read_topic(broker, labels_topic, len(expected), timeout_s=60)
    published = Counter(
        (r["conversation_id"], r["turn_id"], r["label_source"], r["label_kind"]) for r in raw
    )
    assert set(published) == expected
    assert len({r["label_id"] for r in raw}) == len(expected)
    # A delivery repeated by the replay after the kill is the same record under the same key.
    by_id: dict[str, dict[str, Any]] = {}
    for record in raw:
        same = {k: v for k, v in record.items() if k != "published_at"}
        assert by_id.setdefault(record["label_id"], same) == same
    # Counted once, over both lives (stream/ledger.py).
    assert second.total("uxmon_labels_total") == len(expected)
    assert second.total("uxmon_events_rejected_total", reason="duplicate") == len(twice)

    # A restart with nothing new adds nothing.
    second.stop()
    third = start_worker(**settings)
    time.sleep(6)
    assert len(read_topic(broker, labels_topic, len(raw), timeout_s=30)) == len(raw)
    third.stop()

    out = tmp_path / "labels.jsonl"
    exported = uxmon(
        "labels", "export", "--broker", broker, "--topic", labels_topic, "--out", str(out),
        "--no-progress",
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    turns = {(c, t) for c, t, _, _ in expected}
    assert sorted((r["conversation_id"], r["turn_id"]) for r in rows) == sorted(turns)
    # An explicit signal overrules an implicit one on the same turn.
    clicked = {(c, t) for c, t, source, _ in expected if source == "explicit"}
    sources = {(r["conversation_id"], r["turn_id"]): r["label_source"] for r in rows}
    assert {turn for turn, source in sources.items() if source == "explicit"} == clicked
    items = load_task1(out)
    assert len(items) == len(turns)
    bench = uxmon(
        "bench", "--task", "task1", "--data", str(out), "--scorer",
        "tests.support.scorers:Keyword", "--out", str(tmp_path / "report.json"), "--no-progress",
    )  # fmt: skip
    assert bench.returncode == 0, bench.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["n"] == len(turns), sorted(report)

    # Text is on the labels topic and on no other output.
    texts = {e["text"] for e in events if e["type"] == "turn" and len(e["text"]) >= 8}
    # The dead letters are the repeated feedback events (no text; a dead letter carries
    # the original bytes, so the DLQ has the turns topic's access control anyway).
    letters = read_topic(broker, names["dlq_topic"], len(twice), timeout_s=30)
    assert {r["reason"] for r in letters} == {"duplicate"}
    assert len({(r["partition"], r["offset"]) for r in letters}) == len(twice)
    for record in scores:
        assert not TEXT_FIELDS & record.keys()
        assert not any(t in json.dumps(record, ensure_ascii=False) for t in texts)
    labelled_texts = {r["agent_response_full"] for r in raw}
    assert labelled_texts <= texts | {t[:4000] for t in texts}


def test_with_labels_off_no_labels_topic_is_made_and_no_output_carries_text(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=broker)
    before = consumer.topics()
    worker = start_worker(reaction_model="")
    events = shifted_sample(8, datetime.now(UTC) - timedelta(seconds=5))
    produce(broker, names["turns_topic"], [encode(e) for e in events])
    wait_settled(worker, sum(e.get("role") == "assistant" for e in events))
    time.sleep(2)
    assert worker.total("uxmon_labels_total") == 0
    scores = read_topic(broker, names["scores_topic"], 1, timeout_s=30)
    assert {r["type"] for r in scores} >= {"score", "reaction"}
    texts = {e["text"] for e in events if e["type"] == "turn" and len(e["text"]) >= 8}
    for record in scores:
        assert not TEXT_FIELDS & record.keys()
        assert not any(t in json.dumps(record, ensure_ascii=False) for t in texts)
    try:
        made = consumer.topics() - before
    finally:
        consumer.close()
    ours = {names["turns_topic"], names["scores_topic"]}  # the DLQ: nothing was dead-lettered
    assert {t for t in made if not t.startswith(names["app_id"])} == ours  # + internal topics


def test_a_shadow_scorer_is_published_apart_and_the_gate_reads_its_window(
    broker: str, names: dict[str, str], start_worker: Start, tmp_path: Path
) -> None:
    """The candidate (tests.support.scorers:Contrary, the opposite of the live Repetition)
    scores every turn under `shadow`, nowhere else; its live verdicts on the labelled turns
    are what `uxmon bench` finds on the exported window, and `uxmon gate` over that window
    fails the scorer the labels say is worse."""
    labels_topic = f"labels-{names['app_id']}"
    worker = start_worker(
        scorers="tests.support.scorers:Repetition",
        reaction_model="",
        labels_topic=labels_topic,
        shadow_scorers="tests.support.scorers:Contrary",
    )
    events = shifted_sample(1, datetime.now(UTC) - timedelta(seconds=5))
    produce(broker, names["turns_topic"], [encode(e) for e in events])
    assistant_turns = sum(e.get("role") == "assistant" for e in events)
    wait_settled(worker, assistant_turns)
    time.sleep(3)

    scores = [
        r
        for r in read_topic(broker, names["scores_topic"], assistant_turns, timeout_s=60)
        if r["type"] == "score"
    ]
    assert len(scores) == assistant_turns
    assert {s["scorer"] for r in scores for s in r["scores"]} == {"repetition"}
    assert all([s["scorer"] for s in r["shadow"]] == ["contrary"] for r in scores)
    assert all(
        r["shadow"][0]["verdict"] != r["scores"][0]["verdict"] for r in scores
    )  # it did score, and disagreed
    assert worker.total("uxmon_turns_scored_total", scorer="contrary") == 0
    assert worker.total("uxmon_turns_scored_total") == assistant_turns
    assert worker.total("uxmon_label_verdicts_total", scorer="shadow:contrary") > 0

    out = tmp_path / "window.jsonl"
    exported = uxmon(
        "labels", "export", "--broker", broker, "--topic", labels_topic, "--out", str(out),
        "--no-progress",
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]

    def live_avg_acc(scorer: str) -> float:
        """Avg-Acc of the verdicts the worker recorded on the window's labels."""
        recall = []
        for truth, verdict in ((1, "good"), (-1, "bad")):
            judged = [r["verdicts"][scorer] for r in rows if r["ground_truth"] == truth]
            recall.append(sum(v == verdict for v in judged) / len(judged))
        return sum(recall) / 2

    reports = {}
    for name, factory in (("repetition", "Repetition"), ("shadow:contrary", "Contrary")):
        report = tmp_path / f"{factory}.json"
        bench = uxmon(
            "bench", "--task", "task1", "--data", str(out), "--scorer",
            f"tests.support.scorers:{factory}", "--out", str(report), "--no-progress",
        )  # fmt: skip
        assert bench.returncode == 0, bench.stderr[-2000:]
        reports[name] = report
        measured = json.loads(report.read_text())["metrics"]["avg_acc"]
        assert abs(measured - live_avg_acc(name)) < 1e-9
    better, worse = sorted(reports, key=live_avg_acc, reverse=True)
    assert live_avg_acc(better) - live_avg_acc(worse) > 0.05, "the window must tell them apart"

    def gate(baseline: str, candidate: str) -> int:
        done = uxmon(
            "gate", "--baseline", str(reports[baseline]), "--candidate", str(reports[candidate])
        )
        assert done.returncode in (0, 1), done.stderr[-2000:]
        return done.returncode

    assert gate(better, worse) == 1
    assert gate(worse, better) == 0
