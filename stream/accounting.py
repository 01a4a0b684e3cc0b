"""Metric counts from what the pipeline produced (stream/pipeline.py), once per applied record.

`tally` is what the batch applied, for the durable counters (stream/ledger.py): the worker
writes it with the batch's states and shows it once they are on the broker. `observe` is
the rest (reads, timings, scorer errors), this process's own. Label values come from
closed sets (stream/metrics.py): scenarios from the settings, assistant ids bounded to the
first `label_values_max` seen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmark.adapters import LIKED
from stream.cascade import Skipped
from stream.conversation import ConversationState, Opened, ReactionSeen, Signal
from stream.events import FeedbackEvent
from stream.labels import Labelled
from stream.ledger import Tally
from stream.metrics import (
    EPISODES_CLOSED,
    EPISODES_OPENED,
    EVENTS_REJECTED,
    FEEDBACK,
    GRM_SKIPPED,
    GRM_VERDICTS,
    JUDGE_REACTION_PAIRS,
    LABEL_VERDICTS,
    LABELS,
    OTHER,
    REACTIONS,
    TURN_VERDICTS,
    TURNS_SCORED,
    UNKNOWN_FIELDS,
    BoundedLabel,
    Metrics,
    exemplar_ids,
)
from stream.pipeline import Outcome, Pipeline, shadow_name
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
        scorers = [*pipeline.judges, *([pipeline.grm] if pipeline.grm else [])]
        self._versions = {s.name: s.version for s in scorers}  # verdicts name only the scorer
        self._versions |= {shadow_name(s.name): s.version for s in pipeline.shadows}

    def tally(self, outcome: Outcome) -> Tally:
        """What the batch applied. A fact belongs to its conversation when the batch
        writes that state and a replay would skip the record (stream/ledger.py)."""
        plan, scoring = outcome.plan, outcome.scoring
        states = plan.states
        tally = Tally()
        for letter in outcome.dead:
            position = letter.record.position
            cid = _conversation(letter.record.key)
            state = states.get(cid) if cid is not None else None
            owner = cid if state is not None and state.is_redelivery(position) else None
            tally.add(position.partition, owner, EVENTS_REJECTED, str(letter.reason))
        for event in plan.events:
            if isinstance(event, FeedbackEvent):
                cid = event.conversation_id
                tally.add(_partition(states[cid]), cid, FEEDBACK, event.kind)
        for cid, n in plan.unknown_fields.items():
            tally.add(_partition(states[cid]), cid, UNKNOWN_FIELDS, n=n)
        for i, item in enumerate(plan.to_score):
            cid, partition = item.event.conversation_id, item.record.position.partition
            if i in scoring.chosen:
                tally.add(partition, cid, GRM_VERDICTS, str(scoring.chosen[i]))
            if i in scoring.skipped:
                tally.add(partition, cid, GRM_SKIPPED, str(scoring.skipped[i]))
        grm_name = self.pipeline.grm.name if self.pipeline.grm is not None else None
        for item, scores in outcome.scored:
            cid, partition = item.event.conversation_id, item.record.position.partition
            scenario = self._scenario(item.event.scenario)
            assistant = self._assistant(item.event.assistant_id)
            ids = exemplar_ids(cid, item.event.turn_id)
            for score in scores:
                labels = (score.scorer, str(score.verdict), scenario, assistant)
                tally.add(partition, cid, TURNS_SCORED, *labels, example=ids)
            decider = deciding_score(scores, grm_name)
            if decider is not None:
                labels = (str(decider.verdict), decider.scorer, scenario, assistant)
                tally.add(partition, cid, TURN_VERDICTS, *labels, example=ids)
        self._tally_signals(
            tally, outcome.signals, {cid: _partition(s) for cid, s in states.items()}
        )
        return tally

    def tally_signals(
        self, signals: Sequence[tuple[str, Signal]], states: Mapping[str, ConversationState]
    ) -> Tally:
        """What time passing applied (stream/pipeline.Pipeline.tick), `states` by conversation."""
        tally = Tally()
        self._tally_signals(tally, signals, {cid: _partition(s) for cid, s in states.items()})
        return tally

    def _tally_signals(
        self, tally: Tally, signals: Sequence[tuple[str, Signal]], partitions: Mapping[str, int]
    ) -> None:
        for cid, signal in signals:
            partition = partitions[cid]
            if isinstance(signal, ReactionSeen):
                labels = (self._scenario(signal.scenario), self._assistant(signal.assistant_id))
                ids = exemplar_ids(cid, signal.turn_id)
                tally.add(partition, cid, REACTIONS, str(signal.reaction), *labels, example=ids)
                for pair in pairs([(cid, signal)]):
                    dissatisfied = "true" if pair.dissatisfied else "false"
                    tally.add(
                        partition,
                        cid,
                        JUDGE_REACTION_PAIRS,
                        pair.scorer,
                        pair.verdict,
                        dissatisfied,
                    )
            elif isinstance(signal, Labelled):
                source = str(signal.source)
                tally.add(partition, cid, LABELS, source, signal.kind)
                label = "liked" if signal.label == LIKED else "disliked"
                for scorer, verdict in signal.verdicts:
                    version = self._versions.get(scorer, OTHER)
                    tally.add(
                        partition, cid, LABEL_VERDICTS, scorer, version, verdict, label, source
                    )
            elif isinstance(signal, Opened):
                e = signal.episode
                labels = (self._scenario(e.scenario), self._assistant(e.assistant_id))
                tally.add(partition, cid, EPISODES_OPENED, str(e.trigger), *labels)
            elif isinstance(signal, Closed):
                e = signal.episode
                labels = (self._scenario(e.scenario), self._assistant(e.assistant_id))
                ids = exemplar_ids(cid, e.id)  # the turn that failed and opened the episode
                tally.add(
                    partition, cid, EPISODES_CLOSED, str(signal.outcome), *labels, example=ids
                )

    def observe(self, outcome: Outcome) -> None:
        """This process's own metrics for a batch it applied: reads, timings, errors."""
        m, plan, scoring = self.metrics, outcome.plan, outcome.scoring
        judges, grm = self.pipeline.judges, self.pipeline.grm
        m.consumed.inc(plan.consumed)
        m.redelivered.inc(plan.redelivered)
        if plan.to_score:
            m.batch_size.observe(len(plan.to_score))
        for name, seconds in scoring.seconds(judges, grm):
            m.scoring_seconds.labels(name).observe(seconds)
        for scorer, run in zip(judges, scoring.judges, strict=False):
            if run.errors:
                m.scorer_errors.labels(scorer.name).inc(len(run.errors))
        if grm is not None:
            failures = sum(1 for skip in scoring.skipped.values() if skip is Skipped.FAILED)
            if failures:
                m.scorer_errors.labels(grm.name).inc(failures)
            m.grm_budget.set(self.pipeline.budget.tokens)
        for item, scores in outcome.scored:
            ids = exemplar_ids(item.event.conversation_id, item.event.turn_id)
            for score in scores:
                m.score.labels(score.scorer).observe(score.p_satisfied, exemplar=ids)
            seconds = (outcome.scored_at - item.event.ts).total_seconds()
            m.event_to_score.observe(max(0.0, seconds))
        self.observe_signals(outcome.signals)

    def observe_signals(self, signals: Sequence[tuple[str, Signal]]) -> None:
        for _, signal in signals:
            if isinstance(signal, Closed) and signal.outcome is EpisodeOutcome.RECOVERED:
                self.metrics.recovery_seconds.observe(signal.seconds)
                self.metrics.recovery_turns.observe(signal.episode.attempts)


def _conversation(key: bytes | None) -> str | None:
    try:
        return key.decode("utf-8") if key is not None else None
    except UnicodeDecodeError:
        return None


def _partition(state: ConversationState) -> int:
    assert state.partition is not None, "an applied state knows its partition"
    return state.partition
