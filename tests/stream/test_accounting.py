"""What a batch's outcome counts (stream/accounting.py), and to whom each fact belongs."""

from __future__ import annotations

from collections.abc import Sequence

from scorer.types import Dialogue, Score, Verdict
from stream.accounting import Accounting
from stream.cascade import Budget
from stream.conversation import ConversationState
from stream.metrics import EVENTS_REJECTED, TURN_VERDICTS, TURNS_SCORED, Metrics
from stream.records import Record
from tests.stream.test_pipeline import NEVER, NOW, pipeline, record


class Grm:
    name, version = "grm", "test"

    def load(self) -> None: ...

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        return [Score(0.1, Verdict.BAD, self.name, self.version, 0.0) for _ in batch]


def test_each_turn_counts_once_by_its_verdict_of_record() -> None:
    everyone = Budget(rate=100, burst=100, max_per_batch=1, uncertain_margin=1.0, sample_rate=0)
    run = pipeline(grm=Grm(), budget=everyone)
    records = [
        record(0, "a", "u1", "user", "问题一"),
        record(1, "a", "a1", "assistant", "一个很长的回答，比问题长"),
        record(2, "b", "u1", "user", "问题二"),
        record(3, "b", "a1", "assistant", "另一个很长的回答，比问题长"),
    ]
    outcome = run.run(records, lambda cid: ConversationState(), NEVER, NOW)
    totals = Accounting(Metrics(), run, ["Other"], 10).tally(outcome).of_partition(0)

    assert totals[TURN_VERDICTS, ("bad", "grm", "Other", "none")] == 1
    # one GRM slot per batch: the other turn's verdict of record is the judge's
    assert totals[TURN_VERDICTS, ("good", "keyword", "Other", "none")] == 1
    assert totals[TURNS_SCORED, ("keyword", "good", "Other", "none")] == 2


def test_a_verdict_carries_the_ids_of_its_newest_turn_as_exemplar() -> None:
    run = pipeline()
    records = [
        record(0, "a", "u1", "user", "问题一"),
        record(1, "a", "a1", "assistant", "一个很长的回答，比问题长"),
        record(2, "b", "u1", "user", "问题二"),
        record(3, "b", "b1", "assistant", "另一个很长的回答，比问题长"),
    ]
    outcome = run.run(records, lambda cid: ConversationState(), NEVER, NOW)
    exemplars = Accounting(Metrics(), run, ["Other"], 10).tally(outcome).exemplars[0]

    newest = exemplars[TURN_VERDICTS, ("good", "keyword", "Other", "none")]
    assert newest.labels == {"conversation_id": "b", "turn_id": "b1"}
    assert exemplars[TURNS_SCORED, ("keyword", "good", "Other", "none")].labels == newest.labels


def test_a_fact_belongs_to_its_conversation_only_where_a_replay_would_skip_it() -> None:
    """After a crash that left this batch's state of "a" on the broker but not the mark,
    a replay skips a's records up to the state's offset and processes the rest again."""
    run = pipeline()
    records = [
        record(0, "a", "u1", "user", "问题一"),
        record(1, "a", "u1", "user", "问题一"),  # a duplicate id, before a's last applied
        record(2, "a", "a1", "assistant", "一个很长的回答，比问题长"),
        record(
            3, "a", "a1", "assistant", "一个很长的回答，比问题长"
        ),  # a duplicate after it: replayed again
        Record(b"b", b"{", record(4, "b", "u", "user", "x").position),  # never any state
    ]
    outcome = run.run(records, lambda cid: ConversationState(), NEVER, NOW)
    tally = Accounting(Metrics(), run, ["Other"], 10).tally(outcome)

    of_a = tally.of_conversation(0, "a")
    assert of_a[EVENTS_REJECTED, ("duplicate",)] == 1
    assert of_a[TURNS_SCORED, ("keyword", "good", "Other", "none")] == 1
    mark_only = tally.shares[0, None]
    assert mark_only[EVENTS_REJECTED, ("duplicate",)] == 1
    assert mark_only[EVENTS_REJECTED, ("invalid_json",)] == 1
    assert tally.of_partition(0)[EVENTS_REJECTED, ("duplicate",)] == 2
