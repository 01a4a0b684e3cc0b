"""Metric counts from what the pipeline produced (stream/pipeline.py), once per applied record.

The worker calls this only after the batch's outputs and state are on the broker, so a
record replayed after a crash (skipped by the pipeline as handled) is never counted again.
Label values come from closed sets (stream/metrics.py): scenarios from the settings,
assistant ids bounded to the first `label_values_max` seen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from stream.cascade import Skipped
from stream.conversation import Opened, ReactionSeen, Signal
from stream.events import FeedbackEvent
from stream.metrics import BoundedLabel, Metrics
from stream.pipeline import Outcome, Pipeline
from stream.reactions import is_dissatisfied
from stream.recovery import Closed, deciding_score
from stream.recovery import Outcome as EpisodeOutcome


@dataclass(frozen=True, slots=True)
class Pair:
    """A scorer's verdict on a turn and whether the user's reaction was dissatisfied."""

    scorer: str
    verdict: str
    dissatisfied: bool


def pairs(signals: Sequence[tuple[str, Signal]]) -> list[Pair]:
    """Each reaction paired with every verdict known for the turn it reacts to."""
    return [
        Pair(scorer, verdict, is_dissatisfied(signal.reaction))
        for _, signal in signals
        if isinstance(signal, ReactionSeen)
        for scorer, verdict in signal.verdicts
    ]


class Accounting:
    def __init__(
        self, metrics: Metrics, pipeline: Pipeline, scenarios: Sequence[str], label_values_max: int
    ) -> None:
        self.metrics = metrics
        self.pipeline = pipeline
        self._scenario = BoundedLabel(len(scenarios), scenarios, "Other")
        self._assistant = BoundedLabel(label_values_max)

    def batch(self, outcome: Outcome) -> None:
        m, plan, scoring = self.metrics, outcome.plan, outcome.scoring
        judges, grm = self.pipeline.judges, self.pipeline.grm
        m.consumed.inc(plan.consumed)
        m.redelivered.inc(plan.redelivered)
        m.unknown_fields.inc(plan.unknown_fields)
        for letter in outcome.dead:
            m.rejected.labels(str(letter.reason)).inc()
        for event in plan.events:
            if isinstance(event, FeedbackEvent):
                m.feedback.labels(event.kind).inc()
        if plan.to_score:
            m.batch_size.observe(len(plan.to_score))
        for name, seconds in scoring.seconds(judges, grm):
            m.scoring_seconds.labels(name).observe(seconds)
        for scorer, run in zip(judges, scoring.judges, strict=False):
            if run.errors:
                m.scorer_errors.labels(scorer.name).inc(len(run.errors))
        for reason in scoring.chosen.values():
            m.grm_verdicts.labels(str(reason)).inc()
        for skip in scoring.skipped.values():
            m.grm_skipped.labels(str(skip)).inc()
        if grm is not None:
            failures = sum(1 for skip in scoring.skipped.values() if skip is Skipped.FAILED)
            if failures:
                m.scorer_errors.labels(grm.name).inc(failures)
            m.grm_budget.set(self.pipeline.budget.tokens)
        grm_name = grm.name if grm is not None else None
        for item, scores in outcome.scored:
            scenario = self._scenario(item.event.scenario)
            assistant = self._assistant(item.event.assistant_id)
            for score in scores:
                m.turns_scored.labels(score.scorer, str(score.verdict), scenario, assistant).inc()
                m.score.labels(score.scorer).observe(score.p_satisfied)
            decider = deciding_score(scores, grm_name)
            if decider is not None:
                verdict = str(decider.verdict)
                m.turn_verdicts.labels(verdict, decider.scorer, scenario, assistant).inc()
            seconds = (outcome.scored_at - item.event.ts).total_seconds()
            m.event_to_score.observe(max(0.0, seconds))
        self.signals(outcome.signals)

    def signals(self, signals: Sequence[tuple[str, Signal]]) -> None:
        m = self.metrics
        for _, signal in signals:
            if isinstance(signal, ReactionSeen):
                labels = (self._scenario(signal.scenario), self._assistant(signal.assistant_id))
                m.reactions.labels(str(signal.reaction), *labels).inc()
            elif isinstance(signal, Opened):
                e = signal.episode
                labels = (self._scenario(e.scenario), self._assistant(e.assistant_id))
                m.episodes_opened.labels(str(e.trigger), *labels).inc()
            elif isinstance(signal, Closed):
                e = signal.episode
                labels = (self._scenario(e.scenario), self._assistant(e.assistant_id))
                m.episodes_closed.labels(str(signal.outcome), *labels).inc()
                if signal.outcome is EpisodeOutcome.RECOVERED:
                    m.recovery_seconds.observe(signal.seconds)
                    m.recovery_turns.observe(e.attempts)
        for pair in pairs(signals):
            m.judge_reaction_pairs.labels(
                pair.scorer, pair.verdict, "true" if pair.dissatisfied else "false"
            ).inc()
