"""Reactions, recovery episodes and the GRM budget in a real worker on the real broker."""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from stream.local import LocalWorker
from tests.support.scripted import (
    Script,
    all_scripts,
    encode,
    episode_scripts,
    evaluate,
    of_type,
    wait_until_settled,
)
from tests.support.services import produce, read_topic

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]

# Short timers so no-follow-up and episode limits fire within the test, through the
# worker's faust timer (not a unit-test clock).
TIMERS = {"follow_up_timeout_s": 6, "episode_timeout_s": 20, "timers_interval_s": 1}
# The scripts' expected reactions and episode outcomes are the rules' (they shaped them):
# these tests run the rules alone; the learned model is test_learned_reactions.py's.
RULES = {"reaction_model": ""}


def test_scripted_conversations_reactions_episodes_and_the_grm_budget(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    scripts = all_scripts(datetime.now(UTC) - timedelta(seconds=2), uuid.uuid4().hex[:6])
    events = [e for s in scripts for e in s.events]
    assistant_turns = sum(e.get("role") == "assistant" for e in events)
    labelled = sum(len(s.reactions) for s in scripts)
    worker = start_worker(
        grm="grm",
        # A budget far below the offered load: recovery replies must still be scored.
        grm_rate=0.2,
        grm_burst=2,
        grm_max_per_batch=8,  # above the recovery replies any batch can hold
        # The budget is under test, not the deadline: eight verdicts take ~3 s on a quiet
        # machine, past the default 5 s on a loaded one (then skipped as "deadline").
        grm_deadline_s=60,
        grm_sample_rate=0.5,
        **TIMERS,
        **RULES,
    )

    produce(broker, names["turns_topic"], map(encode, events))
    wait_until_settled(worker, scripts)
    records = read_topic(broker, names["scores_topic"], assistant_turns)

    report = evaluate(scripts, records)
    assert report["reactions"]["accuracy"] >= 0.90, report["reactions"]
    # no_follow_up only comes from the worker's timer
    assert report["reactions"]["by_kind"]["no_follow_up"]["accuracy"] == 1.0
    assert report["episodes"]["errors"] == []

    samples = worker.samples()

    def metric(name: str, **match: str) -> float:
        return sum(
            v for labels, v in samples[name] if all(labels.get(k) == w for k, w in match.items())
        )

    assert metric("uxmon_reactions_total") == len(of_type(records, "reaction"))
    closed = Counter(r["outcome"] for r in of_type(records, "episode"))
    for outcome, count in closed.items():
        assert metric("uxmon_recovery_episodes_closed_total", outcome=outcome) == count
    assert metric("uxmon_recovery_episodes_open") == 0
    assert metric("uxmon_judge_reaction_pairs_total", scorer="ux_judge") >= labelled

    # The GRM budget: every recovery reply GRM-scored despite the budget, and every
    # other turn accounted for by a verdict or a skip reason.
    scores = of_type(records, "score")
    recovery = [r for r in scores if r["recovery"]]
    assert recovery and all(
        {"ux_judge", "grm"} <= {s["scorer"] for s in r["scores"]} for r in recovery
    )
    assert metric("uxmon_grm_verdicts_total", reason="recovery") == len(recovery)
    assert metric("uxmon_grm_skipped_total", reason="budget") > 0  # the load exceeded it
    judged = metric("uxmon_turns_scored_total", scorer="ux_judge")
    assert judged == assistant_turns
    assert metric("uxmon_grm_verdicts_total") + metric("uxmon_grm_skipped_total") == judged
    assert metric("uxmon_turns_scored_total", scorer="grm") == metric("uxmon_grm_verdicts_total")


def _split_before_attempt(script: Script) -> tuple[list[dict], list[dict]]:
    """Everything up to the user's complaint, and the recovery attempt with its reaction.

    The split puts the judge's verdict on the attempt in the second worker, so every
    episode is open at the kill whatever the judge thinks of the attempts."""
    attempt = max(i for i, e in enumerate(script.events) if e.get("role") == "assistant")
    return script.events[:attempt], script.events[attempt:]


def test_open_episodes_survive_kill_9_and_close_in_the_next_worker(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    # Episodes that end with the user's reaction to a recovery attempt: the first worker
    # sees them open (question, failed reply, complaint), the second the attempt and the
    # reaction, which it can only judge with the failed reply from the restored state.
    tag = uuid.uuid4().hex[:6]
    scripts = [
        s
        for s in episode_scripts(datetime.now(UTC) - timedelta(seconds=2), tag)
        if s.events[-1].get("role") == "user"
    ]
    first_part = [e for s in scripts for e in _split_before_attempt(s)[0]]
    last_part = [e for s in scripts for e in _split_before_attempt(s)[1]]
    settings = {
        "episode_timeout_s": 600,
        "follow_up_timeout_s": 600,
        "timers_interval_s": 1,
        **RULES,
    }
    first = start_worker(**settings)
    produce(broker, names["turns_topic"], map(encode, first_part))
    replies = sum(e.get("role") == "assistant" for e in first_part)
    first.wait_for("uxmon_turns_scored_total", replies)
    first.wait_for("uxmon_recovery_episodes_open", len(scripts), 30)
    assert first.total("uxmon_recovery_episodes_closed_total") == 0
    first.kill9()
    time.sleep(4)  # the dead member's 3 s session expires (see test_pipeline.py)

    second = start_worker(**settings)
    produce(broker, names["turns_topic"], map(encode, last_part))
    second.wait_for("uxmon_recovery_episodes_closed_total", len(scripts), 120)
    records = read_topic(broker, names["scores_topic"], 0, 30)

    assert evaluate(scripts, records)["episodes"]["errors"] == []
    # The first worker's openings go on in the durable totals; none was opened again.
    assert second.total("uxmon_recovery_episodes_opened_total") == len(scripts)
