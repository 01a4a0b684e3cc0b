"""Metric counts from a batch's outcome (stream/accounting.py), on a real registry."""

from __future__ import annotations

from collections.abc import Sequence

from scorer.types import Dialogue, Score, Verdict
from stream.accounting import Accounting
from stream.cascade import Budget
from stream.conversation import ConversationState
from stream.metrics import Metrics
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
    metrics = Metrics()
    Accounting(metrics, run, ["Other"], 10).batch(outcome)

    def count(name: str, **labels: str) -> float:
        value = metrics.registry.get_sample_value(name, labels)
        return value or 0.0

    verdicts = "uxmon_turn_verdicts_total"
    by_grm = count(verdicts, verdict="bad", decided_by="grm", scenario="Other", assistant="none")
    by_judge = count(
        verdicts, verdict="good", decided_by="keyword", scenario="Other", assistant="none"
    )
    assert (by_grm, by_judge) == (1, 1)  # one GRM slot per batch: the other turn is the judge's
    scored = "uxmon_turns_scored_total"
    assert count(scored, scorer="keyword", verdict="good", scenario="Other", assistant="none") == 2
