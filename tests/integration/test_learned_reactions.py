"""The learned reaction model decides reactions in a real worker on the real broker."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from stream.local import LocalWorker
from stream.reactions import Patterns, Reaction, classify
from tests.support.scripted import encode, of_type
from tests.support.services import produce, read_topic
from tests.support.traffic import turn_event

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]

# Written for this test: the user takes the answer and goes on with it, in words that
# share nothing with the question and match no continuation pattern. The rules read a
# topic switch (abandon); the model reads meaning (satisfied).
TAKEN = [
    (
        "What's a good name for a golden retriever puppy?",
        "How about Sunny, Maple or Biscuit? All three suit a warm, friendly dog and are easy "
        "for kids to call.",
        "Biscuit is adorable, my kids will love it",
    ),
    (
        "How long should I boil an egg for a runny yolk?",
        "About six minutes in boiling water, then straight into cold water so it stops cooking.",
        "Six minutes it is, breakfast is sorted",
    ),
    (
        "推荐一部适合周末看的科幻电影",
        "可以看《星际穿越》，画面震撼，剧情也很感人，适合周末慢慢看。",
        "星际穿越我还没看过，今晚就安排上",
    ),
    (
        "我家猫最近不爱吃饭怎么办",
        "可以先换一种湿粮试试，同时观察它精神状态，如果超过两天不吃建议去宠物医院检查。",
        "湿粮换了之后它吃得可香了",
    ),
]
GAP_S = 40.0  # time to read the reply and answer


def exchange(cid: str, start: datetime, texts: tuple[str, str, str]) -> list[dict[str, object]]:
    roles, offsets = ("user", "assistant", "user"), (0.0, 3.0, 3.0 + GAP_S)
    return [
        turn_event(cid, f"t{k}", role, start + timedelta(seconds=offset), text)
        for k, (role, text, offset) in enumerate(zip(roles, texts, offsets, strict=True))
    ]


def test_the_model_reads_a_follow_up_the_rules_call_a_topic_switch(
    broker: str, names: dict[str, str], start_worker: Start
) -> None:
    patterns, t0 = Patterns.load(), datetime(2026, 1, 1, tzinfo=UTC)
    for question, reply, message in TAKEN:  # the cases are ones the rules get wrong
        rule = classify(question, reply, t0, message, t0 + timedelta(seconds=GAP_S), patterns)
        assert rule == Reaction.ABANDON, message
    tag = uuid.uuid4().hex[:6]
    start = datetime.now(UTC) - timedelta(seconds=60)
    events = [e for i, texts in enumerate(TAKEN) for e in exchange(f"{tag}-{i}", start, texts)]
    worker = start_worker(follow_up_timeout_s=600)  # the bundled model: the default

    produce(broker, names["turns_topic"], map(encode, events))
    worker.wait_for("uxmon_reactions_total", len(TAKEN))
    records = read_topic(broker, names["scores_topic"], len(TAKEN) * 2)

    reactions = {r["conversation_id"]: r["reaction"] for r in of_type(records, "reaction")}
    assert reactions == {f"{tag}-{i}": "satisfied" for i in range(len(TAKEN))}
    assert worker.total("uxmon_recovery_episodes_opened_total") == 0  # nothing to recover
