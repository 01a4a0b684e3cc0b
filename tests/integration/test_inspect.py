"""`uxmon inspect` on a real broker after a real worker scored the demo traffic.

The worker runs the real pipeline (reactions by the rules, recovery episodes, the scores
topic) with the instant stand-in scorer of tests/support/scorers.py, so the test is about
what inspect reads, not about the models. What inspect lists is checked against the scores
topic read independently with kafka-python.
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

from stream.broker import free_port
from stream.local import LocalWorker
from tests.support.cli import uxmon
from tests.support.services import produce, read_topic

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]

SAMPLE_TRAFFIC = Path(__file__).resolve().parents[2] / "stream" / "data" / "sample_traffic.jsonl"
UNRECOVERED = {"failed", "gave_up"}


def shifted_sample(every: int, end: datetime) -> list[dict[str, Any]]:
    """Every `every`-th conversation of the demo traffic, moved in time to end at `end`."""
    lines = SAMPLE_TRAFFIC.read_text().splitlines()
    events = [json.loads(line) for line in lines if line.strip()]
    kept = set(list(dict.fromkeys(e["conversation_id"] for e in events))[::every])
    events = [e for e in events if e["conversation_id"] in kept]
    shift = end - max(datetime.fromisoformat(e["ts"]) for e in events)
    for event in events:
        event["ts"] = (datetime.fromisoformat(event["ts"]) + shift).isoformat()
    return events


def settle(worker: LocalWorker, assistant_turns: int, timeout_s: float = 120) -> None:
    """Until every assistant turn is scored and every episode opened has closed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        samples = worker.samples()

        def total(name: str, samples: Any = samples) -> float:
            return sum(v for _, v in samples.get(name, []))

        if (
            total("uxmon_turns_scored_total") >= assistant_turns
            and total("uxmon_recovery_episodes_opened_total") > 0
            and total("uxmon_recovery_episodes_open") == 0
        ):
            return
        time.sleep(1)
    raise TimeoutError(f"worker did not settle; log:\n{worker.log_tail()}")


def inspect_json(broker: str, topic: str, *args: str) -> dict[str, Any]:
    result = uxmon(
        "inspect", "--broker", broker, "--topic", topic, "--json", "--no-progress", *args
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def listed(report: dict[str, Any]) -> set[tuple[str, str, str]]:
    items = report["episodes"]["items"]
    assert len(items) == report["episodes"]["total"]  # the limit cut nothing
    return {(e["conversation_id"], e["episode_id"], e["outcome"]) for e in items}


def test_inspect_lists_exactly_the_unrecovered_episodes_of_the_scores_topic(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    worker = start_worker(
        scorers="tests.support.scorers:Keyword",
        reaction_model="",  # the rules: no encoder to load
        follow_up_timeout_s=6,
        episode_timeout_s=15,
        timers_interval_s=1,
    )
    events = shifted_sample(4, datetime.now(UTC) - timedelta(seconds=5))
    produce(
        broker,
        names["turns_topic"],
        [
            (e["conversation_id"].encode(), json.dumps(e, ensure_ascii=False).encode())
            for e in events
        ],
    )
    assistant_turns = sum(e.get("role") == "assistant" for e in events)
    settle(worker, assistant_turns)
    records = read_topic(broker, names["scores_topic"], assistant_turns, timeout_s=60)

    scores = {(r["conversation_id"], r["turn_id"]): r for r in records if r["type"] == "score"}
    episodes = [r for r in records if r["type"] == "episode" and r["outcome"] in UNRECOVERED]
    expected = {(e["conversation_id"], e["episode_id"], e["outcome"]) for e in episodes}
    assert expected, Counter(r["type"] for r in records)

    report = inspect_json(broker, names["scores_topic"], "--scorer", "keyword", "--limit", "9999")
    assert listed(report) == expected
    assert report["records"] == len(records)
    assert report["skipped"] == 0
    assert report["worst_turns"]["total"] == len(scores)
    worst = report["worst_turns"]["items"]
    assert [t["p_satisfied"] for t in worst] == sorted(t["p_satisfied"] for t in worst)
    reactions = [r for r in records if r["type"] == "reaction"]
    assert report["complaint_streaks"]["total"] <= sum(
        r["reaction"] == "complaint" for r in reactions
    )

    # A filter: the commonest scenario of the unrecovered episodes and one model version,
    # which the episode records lack (it comes from the opening turn's score record).
    scenario = Counter(e["scenario"] for e in episodes).most_common(1)[0][0]
    model = Counter(
        scores[(e["conversation_id"], e["episode_id"])]["model_version"] for e in episodes
    ).most_common(1)[0][0]
    filtered = {
        (e["conversation_id"], e["episode_id"], e["outcome"])
        for e in episodes
        if e["scenario"] == scenario
        and scores[(e["conversation_id"], e["episode_id"])]["model_version"] == model
    }
    report = inspect_json(
        broker,
        names["scores_topic"],
        *("--scenario", scenario, "--model-version", model, "--limit", "9999"),
    )
    assert filtered and listed(report) == filtered
    assert report["query"]["scenario"] == scenario
    # The default scorer (ux_judge) did not run here: no worst turns, and it says so.
    assert report["worst_turns"]["total"] == 0 and report["scorers_seen"] == ["keyword"]

    # A window that ends before the traffic began holds nothing.
    report = inspect_json(broker, names["scores_topic"], "--until", "2000-01-01T00:00:00Z")
    assert report["episodes"]["total"] == report["worst_turns"]["total"] == 0

    table = uxmon("inspect", "--broker", broker, "--topic", names["scores_topic"], "--no-progress")
    assert table.returncode == 0, table.stderr[-2000:]
    shown = f"({len(expected)})" if len(expected) <= 20 else f"(20 of {len(expected)})"
    assert f"Failed or abandoned recovery episodes, newest first {shown}" in table.stdout


def test_an_unreachable_broker_is_one_line_and_exit_1() -> None:
    result = uxmon("inspect", "--broker", f"127.0.0.1:{free_port()}", "--timeout", "1")
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("uxmon: error: no Kafka broker answers")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_missing_topic_is_one_line_and_creates_nothing(broker: str) -> None:
    result = uxmon("inspect", "--broker", broker, "--topic", "no-such-scores", "--timeout", "2")
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"uxmon: error: no topic no-such-scores on {broker}; set --topic or UXMON_SCORES_TOPIC"
    )
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=broker)
    try:
        assert "no-such-scores" not in consumer.topics()
    finally:
        consumer.close()
