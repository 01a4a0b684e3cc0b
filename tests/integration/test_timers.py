"""Time limits fire on time in a saturated worker: a batch holds the state lock nearly
always and the partition is never caught up, since traffic comes faster than it is scored."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from stream.local import LocalWorker
from stream.metrics import CONSUMER_LAG
from tests.support.traffic import encode, turn_event

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]

FOLLOW_UP_S, EPISODE_S, TRAFFIC_S = 5, 8, 40
OFFERED_PER_S = 40  # events; the stand-in scorer takes 0.4 s per batch of 8: ~20 per second


def test_no_follow_up_and_the_episode_limit_fire_while_the_worker_is_saturated(
    broker: str, names: dict[str, str], start_worker: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    monkeypatch.setenv("UXMON_TEST_SLOW_S", "0.4")
    worker = start_worker(
        scorers="tests.support.scorers:Slow",
        reaction_model="",  # the rules: the complaint below is one by its patterns
        batch_max=8,
        follow_up_timeout_s=FOLLOW_UP_S,
        episode_timeout_s=EPISODE_S,
        timers_interval_s=0.5,
        event_lateness_s=1,
    )
    tag = uuid.uuid4().hex[:6]
    quiet, complained = f"quiet-{tag}", f"complained-{tag}"
    producer = KafkaProducer(bootstrap_servers=broker, linger_ms=5)
    topic = names["turns_topic"]

    def send(event: dict[str, Any]) -> None:
        key, value = encode(event)
        producer.send(topic, key=key, value=value)

    stopped, enough = threading.Event(), threading.Event()

    def traffic() -> None:
        started, sent, placed = time.monotonic(), 0, False
        while (elapsed := time.monotonic() - started) < TRAFFIC_S and not enough.is_set():
            if not placed and sent >= 2 * OFFERED_PER_S:  # two seconds in: those under test
                placed = True
                now = datetime.now(UTC)
                send(turn_event(quiet, "q1", "user", now, "How do I reset my router?"))
                send(turn_event(quiet, "q2", "assistant", now, "Hold the reset button 10 s."))
                send(turn_event(complained, "c1", "user", now, "明天北京天气怎么样？"))
                send(turn_event(complained, "c2", "assistant", now, "上海明天多云。"))
                send(turn_event(complained, "c3", "user", now, "不对，我问的是北京，不是上海"))
            while sent < elapsed * OFFERED_PER_S:
                cid, now = f"filler-{tag}-{sent // 2}", datetime.now(UTC)
                role = "user" if sent % 2 == 0 else "assistant"
                send(turn_event(cid, f"t{sent}", role, now, "hello there"))
                sent += 1
            time.sleep(0.02)
        producer.flush()
        stopped.set()

    sender = threading.Thread(target=traffic, daemon=True)
    sender.start()

    consumer = KafkaConsumer(bootstrap_servers=broker, auto_offset_reset="earliest")
    found: dict[str, tuple[dict[str, Any], float]] = {}
    deadline = time.monotonic() + TRAFFIC_S + 30
    while len(found) < 2 and not stopped.is_set() and time.monotonic() < deadline:
        if not consumer.assignment():
            partitions = consumer.partitions_for_topic(names["scores_topic"])
            if not partitions:
                time.sleep(0.5)
                continue
            consumer.assign([TopicPartition(names["scores_topic"], p) for p in partitions])
        for records in consumer.poll(timeout_ms=500).values():
            for record in records:
                value = json.loads(record.value)
                if value["conversation_id"] == quiet and value.get("reaction") == "no_follow_up":
                    found["no_follow_up"] = value, time.time()
                if value["conversation_id"] == complained and value["type"] == "episode":
                    found["episode"] = value, time.time()
        lag_while_found = worker.total(CONSUMER_LAG)
    consumer.close()
    traffic_running = not stopped.is_set()
    enough.set()
    sender.join(TRAFFIC_S + 30)
    producer.close()

    # Both arrived while traffic still came faster than the worker applied it.
    assert traffic_running and set(found) == {"no_follow_up", "episode"}, sorted(found)
    assert lag_while_found > 20, "the worker was not behind: the test proves nothing"
    episode, _ = found["episode"]
    assert episode["outcome"] == "gave_up" and episode["cause"] == "timeout"
    # On event time: the limits ran out when the applied events' time passed them.
    seen, _ = found["no_follow_up"]
    asked = datetime.fromisoformat(seen["ts"]) - datetime.fromisoformat(episode["opened_ts"])
    assert FOLLOW_UP_S <= asked.total_seconds() <= FOLLOW_UP_S + 10


def test_a_restarted_worker_times_out_what_its_predecessor_left_waiting(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    """The due index is rebuilt from the recovered table: no event for the conversation
    arrives after the restart, so only the rebuilt index can time it out."""
    from tests.support.services import produce, read_topic

    tag = uuid.uuid4().hex[:6]
    quiet = f"quiet-{tag}"
    now = datetime.now(UTC)
    first = start_worker(reaction_model="", follow_up_timeout_s=600, timers_interval_s=0.5)
    produce(
        broker,
        names["turns_topic"],
        [
            encode(turn_event(quiet, "q1", "user", now, "How do I reset my router?")),
            encode(turn_event(quiet, "q2", "assistant", now, "Hold the reset button 10 s.")),
        ],
    )
    first.wait_for("uxmon_turns_scored_total", 1)
    first.kill9()
    time.sleep(4)  # the dead member's 3 s session expires before the next one joins

    second = start_worker(reaction_model="", follow_up_timeout_s=FOLLOW_UP_S, timers_interval_s=0.5)
    second.wait_for("uxmon_reactions_total", 1, 60)
    reactions = [
        r for r in read_topic(broker, names["scores_topic"], 2, 30) if r["type"] == "reaction"
    ]
    assert [(r["conversation_id"], r["reaction"]) for r in reactions] == [(quiet, "no_follow_up")]
