"""The batch step without Kafka (stream/pipeline.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from scorer.types import Dialogue, Score, Verdict
from stream.conversation import Bounds, ConversationState, Position, Tracking
from stream.events import Limits, Reason
from stream.pipeline import plan_batch, score_batch, split_scored
from stream.reactions import Patterns
from stream.records import Record
from tests.support.scorers import Contrary, Keyword
from tests.support.traffic import turn_event

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
TRACKING = Tracking(Patterns.load())


def record(offset: int, cid: str, tid: str, role: str, text: str, key: str | None = None) -> Record:
    ts = NOW - timedelta(seconds=100 - offset)
    value = json.dumps(turn_event(cid, tid, role, ts, text, scenario="Other")).encode()
    return Record((key or cid).encode(), value, Position("turns", 0, offset))


def plan(records: list[Record], stored: dict | None = None):
    stored = stored or {}
    return plan_batch(
        records,
        lambda cid: stored.get(cid, ConversationState()),
        limits=Limits(),
        now=NOW,
        bounds=Bounds(8, 64),
        tracking=TRACKING,
    )


def test_a_batch_folds_conversations_in_order_and_plans_scoring() -> None:
    result = plan(
        [
            record(0, "a", "u1", "user", "问"),
            record(1, "b", "u1", "user", "hi"),
            record(2, "a", "a1", "assistant", "答"),
            record(3, "a", "a1", "assistant", "答"),
            Record(b"c", b"\x00\xff", Position("turns", 0, 4)),
            record(5, "b", "a1", "assistant", "hello", key="wrong"),
        ]
    )
    assert [t.event.turn_id for t in result.to_score] == ["a1"]
    assert result.to_score[0].dialogue.user_message == "问"
    assert [d.reason for d in result.dead] == [
        Reason.DUPLICATE,
        Reason.UNDECODABLE,
        Reason.KEY_MISMATCH,
    ]
    assert set(result.states) == {"a", "b"} and result.consumed == 6


def test_a_batch_reads_each_partition_to_its_last_applied_event_time_not_its_newest() -> None:
    def at(offset: int, partition: int, cid: str, seconds: int) -> Record:
        event = turn_event(cid, "u1", "user", NOW - timedelta(seconds=seconds), "问")
        return Record(
            cid.encode(), json.dumps(event).encode(), Position("turns", partition, offset)
        )

    result = plan(
        [
            at(0, 0, "a", 10),  # a replay: the next conversation goes back in time
            at(1, 0, "b", 50),
            at(0, 1, "c", 5),
            Record(b"d", b"\x00", Position("turns", 1, 1)),  # dead-lettered: no event time
        ]
    )
    assert result.read_to == {
        0: (NOW - timedelta(seconds=50)).timestamp(),
        1: (NOW - timedelta(seconds=5)).timestamp(),
    }


def test_replayed_records_are_skipped_not_rejected() -> None:
    first = plan([record(0, "a", "u1", "user", "问"), record(1, "a", "a1", "assistant", "答")])
    again = plan([record(1, "a", "a1", "assistant", "答")], stored=first.states)
    assert again.redelivered == 1 and not again.dead and not again.to_score


class Exploding:
    name, version = "boom", "1"

    def load(self) -> None: ...

    def score(self, batch):
        if any("炸" in d.reply for d in batch):
            raise ValueError("cannot")
        return [Score(0.5, Verdict.GOOD, self.name, self.version, 0.0) for _ in batch]


def test_one_poisonous_turn_fails_alone() -> None:
    result = plan(
        [
            record(0, "a", "u", "user", "q"),
            record(1, "a", "x", "assistant", "炸"),
            record(2, "b", "u", "user", "q"),
            record(3, "b", "y", "assistant", "ok"),
        ]
    )
    scoring = score_batch([Exploding()], None, None, result.to_score)
    done, failed = split_scored(result, scoring)
    assert [i.event.turn_id for i, _ in done] == ["y"]
    assert [(i.event.turn_id, err) for i, err in failed] == [("x", "ValueError")]


def test_an_unexpected_error_dead_letters_that_record_alone() -> None:
    def load(cid: str) -> ConversationState:
        if cid == "boom":
            raise RecursionError("somewhere deep")
        return ConversationState()

    records = [
        record(0, "a", "u1", "user", "问"),
        record(1, "boom", "u1", "user", "问"),
        record(2, "a", "a1", "assistant", "答"),
    ]
    result = plan_batch(
        records, load, limits=Limits(), now=NOW, bounds=Bounds(8, 64), tracking=TRACKING
    )
    assert [(d.reason, d.detail) for d in result.dead] == [
        (Reason.INTERNAL_ERROR, "RecursionError")
    ]
    assert [t.event.turn_id for t in result.to_score] == ["a1"]


def test_unknown_fields_are_counted_not_rejected() -> None:
    value = json.loads(record(0, "a", "u1", "user", "问").value or b"")
    value |= {"trace_id": "x", "app_build": 7}
    result = plan([Record(b"a", json.dumps(value).encode(), Position("turns", 0, 0))])
    assert not result.dead and sum(result.unknown_fields.values()) == 2 and len(result.events) == 1


def test_dialogue_type_is_what_scorers_get() -> None:
    result = plan([record(0, "a", "u", "user", "q"), record(1, "a", "x", "assistant", "r")])
    assert isinstance(result.to_score[0].dialogue, Dialogue)


def test_records_a_previous_batch_handled_are_skipped_whole_valid_or_not() -> None:
    records = [
        record(10, "a", "u1", "user", "问"),
        Record(b"a", b"{broken", Position("turns", 0, 11)),
        record(12, "a", "a1", "assistant", "答"),
        Record(b"a", b"{broken too", Position("turns", 0, 13)),
    ]
    result = plan_batch(
        records,
        lambda cid: ConversationState(),
        handled_before=lambda partition: 11,  # the crash came after 10 and 11 were handled
        limits=Limits(),
        now=NOW,
        bounds=Bounds(8, 64),
        tracking=TRACKING,
    )
    assert result.redelivered == 2 and [d.record.position.offset for d in result.dead] == [13]
    assert [t.event.turn_id for t in result.to_score] == ["a1"]
    assert result.handled == {0: 13}


class Stalling:
    """A GRM whose server answers after `delay` seconds."""

    name, version = "grm", "test"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def load(self) -> None: ...

    def score(self, batch):
        import time

        time.sleep(self.delay)
        return [Score(0.9, Verdict.GOOD, self.name, self.version, self.delay) for _ in batch]


def test_a_stalling_grm_costs_one_deadline_then_is_skipped_while_busy() -> None:
    import time

    from stream.cascade import Budget, Deadline, Skipped

    result = plan([record(0, "a", "u", "user", "q" * 20), record(1, "a", "x", "assistant", "r")])
    budget = Budget(rate=100, burst=100, max_per_batch=4, uncertain_margin=1.0, sample_rate=0)
    deadline = Deadline(0.3)
    started = time.perf_counter()
    first = score_batch([Keyword()], Stalling(1.5), budget, result.to_score, deadline)
    waited = time.perf_counter() - started
    assert first.skipped == {0: Skipped.DEADLINE} and first.grm == {}
    assert first.judges[0].scores[0] is not None  # the judge's score is there regardless
    assert 0.3 <= waited < 1.0
    started = time.perf_counter()
    second = score_batch([Keyword()], Stalling(1.5), budget, result.to_score, deadline)
    assert second.skipped == {0: Skipped.BUSY} and time.perf_counter() - started < 0.2
    time.sleep(1.5)  # the stalled call ends; the GRM takes calls again
    third = score_batch([Keyword()], Stalling(0.0), budget, result.to_score, deadline)
    assert set(third.grm) == {0} and third.skipped == {}


def pipeline(**overrides: object):
    from stream.cascade import Budget
    from stream.pipeline import Pipeline

    settings: dict = {
        "judges": [Keyword()],
        "grm": None,
        "budget": Budget(rate=1, burst=1, max_per_batch=4, uncertain_margin=0.1, sample_rate=0),
        "deadline": None,
        "limits": Limits(),
        "bounds": Bounds(8, 64),
        "tracking": TRACKING,
        "open_below": None,
        "follow_up_s": 60.0,
        "episode_s": 600.0,
    }
    return Pipeline(**{**settings, **overrides})


def NEVER(partition: int) -> int:
    return -1  # no earlier batch handled anything


def test_a_run_gives_what_to_publish_write_and_count() -> None:
    stored: dict[str, ConversationState] = {}
    records = [
        record(0, "a", "u1", "user", "明天北京天气怎么样？"),
        record(1, "a", "a1", "assistant", "上海明天多云。"),
        record(2, "a", "u2", "user", "不对，我问的是北京"),
        Record(b"b", b"not json", Position("turns", 0, 3)),
    ]
    outcome = pipeline().run(records, lambda cid: stored.get(cid, ConversationState()), NEVER, NOW)
    [(item, [score])] = outcome.scored
    assert item.event.turn_id == "a1" and score.scorer == "keyword"
    assert [d.reason for d in outcome.dead] == [Reason.INVALID_JSON]
    kinds = [type(signal).__name__ for _, signal in outcome.signals]
    assert kinds == ["ReactionSeen", "Opened"]  # the complaint opened an episode
    assert outcome.plan.handled == {0: 3} and set(outcome.plan.states) == {"a"}


def test_a_tick_times_out_what_its_time_has_passed() -> None:
    states = (
        pipeline()
        .run(
            [record(0, "a", "u1", "user", "hi"), record(1, "a", "a1", "assistant", "hello")],
            lambda cid: ConversationState(),
            NEVER,
            NOW,
        )
        .plan.states
    )
    follow_up, episode = pipeline().time_limits(states["a"])
    assert episode is None and follow_up is not None
    reply_ts = datetime.fromtimestamp(follow_up, UTC) - timedelta(seconds=60)
    assert reply_ts == states["a"].awaiting.ts  # type: ignore[union-attr]
    early = datetime.fromtimestamp(follow_up - 1, UTC)
    waiting = pipeline().tick([(b"a", states["a"], early)])
    assert waiting.changed == {} and waiting.signals == []
    timed = pipeline().tick([(b"a", states["a"], datetime.fromtimestamp(follow_up, UTC))])
    [(cid, seen)] = timed.signals
    assert cid == "a" and str(seen.reaction) == "no_follow_up"
    assert timed.changed[b"a"].awaiting is None


def test_a_shadow_scorer_is_published_apart_and_changes_no_count_or_episode() -> None:
    from stream.accounting import Accounting
    from stream.metrics import Metrics

    tracking = Tracking(Patterns.load(), labels=True)
    thumbs = {
        "schema_version": 1,
        "type": "feedback",
        "conversation_id": "a",
        "turn_id": "a1",
        "kind": "thumbs_down",
        "ts": (NOW - timedelta(seconds=95)).isoformat(),
    }
    records = [
        record(0, "a", "u1", "user", "明天北京天气怎么样？"),
        record(1, "a", "a1", "assistant", "上海明天多云。"),
        Record(b"a", json.dumps(thumbs).encode(), Position("turns", 0, 2)),
        record(3, "a", "u2", "user", "不对，我问的是北京"),
        record(4, "a", "a2", "assistant", "北京明天晴，最高 3 度，北风三级，早晚注意保暖。"),
    ]

    def run(**overrides: object):  # type: ignore[no-untyped-def]
        pipe = pipeline(tracking=tracking, open_below=0.5, **overrides)
        outcome = pipe.run(records, lambda cid: ConversationState(), NEVER, NOW)
        return outcome, Accounting(Metrics(), pipe, ["Other"], 10).tally(outcome).of_partition(0)

    alone, counted_alone = run()
    shadowed, counted = run(shadows=[Contrary()])
    assert [s.scorer for _, scores in shadowed.scored for s in scores] == ["keyword", "keyword"]
    assert {k: [s.scorer for s in v] for k, v in shadowed.shadow.items()} == {
        ("a", "a1"): ["contrary"],
        ("a", "a2"): ["contrary"],
    }
    assert alone.shadow == {}

    # Every count is the same but the live validation's, where the shadow sits beside.
    def without_shadow(counts):  # type: ignore[no-untyped-def]
        return {k: n for k, n in counts.items() if not any("shadow:" in str(v) for v in k[1])}

    assert without_shadow(counted) == counted_alone
    assert any(k[0] == "uxmon_label_verdicts_total" and k[1][0] == "shadow:contrary"
               for k in counted)  # fmt: skip
    assert shadowed.plan.states["a"].episode == alone.plan.states["a"].episode
    kinds = [type(s).__name__ for _, s in shadowed.signals]
    assert kinds == [type(s).__name__ for _, s in alone.signals]
