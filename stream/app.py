"""The composition root: builds the faust app, topics, table, scorers and metrics from Settings.

Nothing else in uxmon creates Kafka clients, scorers or metric registries for the service.

Delivery is at-least-once. Per micro-batch: parse and fold, classifying the user's
reactions and moving recovery episodes (on the loop) → score: the judges on every turn,
the GRM on what its budget picks (in a worker thread, so heartbeats and commits go on
during a slow batch) → settle episodes with the verdicts → publish scores, reactions,
episode outcomes and dead letters and wait until the broker has them → write the
conversation states → count metrics → the batch is settled: its offsets may commit. A
timer does the same for time passing (no follow-up, episode time limits).

A crash before the state write replays the batch (duplicate scores, never lost ones);
afterwards a replayed record is recognised by its offset and skipped, so metrics do not
count it twice. Records reach the batch step only in log order, with no holes, from the
committed offset on (stream/offsets.py, stream/reading.py: faust can drop records around
a rebalance).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any, NamedTuple

import faust
from faust.types import TP

from scorer.protocol import Scorer
from scorer.runtime import Runtime
from scorer.types import Score
from stream import __version__
from stream.cascade import Budget, Deadline
from stream.conversation import (
    ConversationState,
    Opened,
    Position,
    ReactionSeen,
    Signal,
    Tracking,
    expire,
)
from stream.events import FeedbackEvent, Limits, Reason, utcnow
from stream.metrics import BoundedLabel, Metrics, counter_total
from stream.reactions import Patterns
from stream.reading import Reader
from stream.recovery import Closed, Outcome, Pending
from stream.settings import Settings
from stream.step import (
    BatchPlan,
    DeadLetter,
    Record,
    Scoring,
    ToScore,
    dead_letter_record,
    pairs,
    plan_batch,
    score_batch,
    scored_record,
    settle,
    signal_record,
    split_scored,
)
from stream.table import ConversationTable, handled_key, is_handled_key
from stream.validation import Validator

log = logging.getLogger("uxmon")

EXIT_BATCH_FAILED = 70  # EX_SOFTWARE: let the supervisor restart us
ASSIGNMENT_GRACE_S = 10.0


class Scorers(NamedTuple):
    judges: list[Scorer]  # run on every assistant turn
    grm: Scorer | None  # run on the turns the budget picks


def build_scorers(settings: Settings) -> Scorers:
    """Create the configured scorers (not loaded yet)."""
    from scorer.registry import create

    runtime = Runtime(threads=settings.threads, dtype=settings.dtype)

    def make(name: str) -> Scorer:
        options: dict[str, Any] = {}
        if ":" not in name:  # built-ins share the model cache and runtime
            options = {"cache_dir": settings.model_cache, "runtime": runtime}
        return create(name, **options)

    grm = make(settings.grm) if settings.grm else None
    return Scorers([make(name) for name in settings.scorers], grm)


class Service:
    """One uxmon worker. `run()` blocks until the worker stops."""

    def __init__(self, settings: Settings, scorers: Scorers, metrics: Metrics) -> None:
        self.settings = settings
        self.judges = list(scorers.judges)
        self.grm = scorers.grm
        self.scorers = self.judges + ([self.grm] if self.grm else [])
        self.metrics = metrics
        self.tracking = Tracking(
            patterns=Patterns.load(settings.patterns_dir),
            episode_max_turns=settings.episode_max_turns,
        )
        self.budget = Budget(
            rate=settings.grm_rate,
            burst=settings.grm_burst,
            max_per_batch=settings.grm_max_per_batch,
            uncertain_margin=settings.grm_uncertain_margin,
            sample_rate=settings.grm_sample_rate,
        )
        # Batches and the timer both read-modify-write conversation states; one at a time.
        self._state_lock = asyncio.Lock()
        self._processed: dict[TP, int] = {}  # last offset handled per turns partition
        self._assigned_at = time.monotonic()
        self.limits = Limits(
            max_event_bytes=settings.max_event_bytes,
            max_text_chars=settings.max_text_chars,
            max_id_chars=settings.max_id_chars,
            max_metadata_items=settings.max_metadata_items,
            max_metadata_chars=settings.max_metadata_chars,
            clock_skew_s=settings.clock_skew_s,
        )
        self.bounds = settings.bounds()
        self._scenario = BoundedLabel(len(settings.scenarios), settings.scenarios, "Other")
        self._assistant = BoundedLabel(settings.label_values_max)
        # One thread: scorers run one batch at a time and use torch's own thread pool.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uxmon-score")
        self.grm_deadline = Deadline(settings.grm_deadline_s)
        self._validator: Validator | None = None
        self._lag_labels: set[int] = set()  # partitions whose lag gauge this worker exports
        self.app = self._build_app()
        # Applies each partition's records in log order, whatever faust hands over.
        self.reader = Reader(self.app, settings.broker, metrics.rereads, metrics.offset_resets)

    def _build_app(self) -> faust.App:
        s = self.settings
        conf: dict[str, Any] = {
            "broker": s.broker_urls(),
            "datadir": str(s.datadir / s.app_id),
            "store": "memory://",
            "web_enabled": False,  # /metrics is served by prometheus_client
            "web_bind": "127.0.0.1",
            "topic_partitions": s.partitions,
            "topic_replication_factor": s.replication,
            "broker_session_timeout": s.session_timeout_s,
            "broker_heartbeat_interval": s.heartbeat_interval_s,
            "broker_commit_interval": s.commit_interval_s,
            "consumer_auto_offset_reset": "earliest",
            "producer_max_request_size": s.max_record_bytes,
            "key_serializer": "raw",
            "value_serializer": "raw",
        }
        if s.producer_max_batch_size:
            conf["producer_max_batch_size"] = s.producer_max_batch_size
        app = faust.App(s.app_id, **conf)
        self.turns = app.topic(s.turns_topic, partitions=s.partitions)
        self.scores = app.topic(s.scores_topic, value_serializer="json")
        self.dead = app.topic(s.dlq_topic, value_serializer="json")
        self.table = ConversationTable(
            app,
            name="conversations",
            default=None,
            partitions=s.partitions,
            key_type=bytes,  # raw conversation_id bytes, as keyed in the turns topic
            value_type=None,  # JSON (ConversationState.to_json)
            help="Per-conversation state, keyed by conversation_id bytes.",
        )
        app.tables.add(self.table)
        app.agent(self.turns, name="score-turns")(self._consume)
        app.timer(interval=s.eviction_interval_s)(self._evict_idle)
        app.timer(interval=s.timers_interval_s)(self._follow_time)
        app.timer(interval=s.timers_interval_s)(self._find_stalls)
        app.timer(interval=s.timers_interval_s)(self._sample_gauges)
        app.on_partitions_assigned.connect(self._on_assigned)  # type: ignore[arg-type]
        return app

    async def _on_assigned(self, app: faust.App, assigned: set[TP], **_: Any) -> None:
        owned = [tp for tp in assigned if tp.topic == self.settings.turns_topic]
        self._assigned_at = time.monotonic()
        self._processed.clear()
        for tp in self._lag_labels - {tp.partition for tp in owned}:
            self.metrics.consumer_lag.remove(str(tp))  # a revoked partition is another's now
        self._lag_labels &= {tp.partition for tp in owned}
        self.metrics.assignments.inc()
        self.metrics.assigned_partitions.set(len(owned))
        log.info("assigned %d partitions of %s", len(owned), self.settings.turns_topic)
        self.reader.assigned(owned)

    async def _find_stalls(self) -> None:
        self.reader.find_stalls(busy=self._state_lock.locked())

    def load_scorers(self) -> None:
        """Load every scorer; done before joining the consumer group, so no batch waits."""
        for scorer in self.scorers:
            started = time.perf_counter()
            scorer.load()
            log.info(
                "scorer %s %s loaded in %.1fs",
                scorer.name,
                scorer.version,
                time.perf_counter() - started,
            )
        self.metrics.describe_worker(__version__, [(s.name, s.version) for s in self.scorers])

    async def _consume(self, stream: faust.StreamT) -> None:
        async for batch in stream.take_events(  # type: ignore[attr-defined]
            self.settings.batch_max, self.settings.batch_within_s
        ):
            events = self.reader.admit(batch)
            if not events:
                continue
            records = [
                Record(
                    key=e.message.key,
                    value=e.message.value,
                    position=Position(e.message.topic, e.message.partition, e.message.offset),
                )
                for e in events
            ]
            try:
                await self.handle(records)
                self.reader.settled()
            except BaseException as exc:
                # Never settled, so never committed (stream/reading.py): they are re-read.
                if isinstance(exc, Exception):
                    log.critical(
                        "a batch failed (%s); exiting so it is re-read after restart",
                        type(exc).__name__,
                        exc_info=True,  # our exceptions never carry event text
                    )
                    self._stop_children()
                    logging.shutdown()
                    os._exit(EXIT_BATCH_FAILED)
                raise  # cancelled: the worker is stopping

    def _load_state(self, conversation_id: str) -> ConversationState:
        return ConversationState.from_json(self.table.get(conversation_id.encode()))

    def _handled_before(self, partition: int) -> int:
        mark = self.table.get(handled_key(partition))
        return int(mark["offset"]) if mark else -1

    async def handle(self, records: Sequence[Record]) -> BatchPlan:
        async with self._state_lock:
            return await self._handle(records)

    async def _handle(self, records: Sequence[Record]) -> BatchPlan:
        now = utcnow()
        plan = plan_batch(
            records,
            self._load_state,
            handled_before=self._handled_before,
            limits=self.limits,
            now=now,
            bounds=self.bounds,
            tracking=self.tracking,
        )
        scoring = Scoring([])
        if plan.to_score:
            loop = asyncio.get_running_loop()
            scoring = await loop.run_in_executor(
                self._executor,
                score_batch,
                self.judges,
                self.grm,
                self.budget,
                plan.to_score,
                self.grm_deadline,
            )
        # Publishing, the state write and counting belong together: a cancel (SIGTERM)
        # landing between them would leave state that says "applied" for turns nobody
        # counted. Finish them, then let the cancel through.
        delivery = asyncio.ensure_future(self._deliver(plan, scoring, records, now))
        try:
            await asyncio.shield(delivery)
        except asyncio.CancelledError:
            await delivery
            raise
        return plan

    async def _deliver(
        self,
        plan: BatchPlan,
        scoring: Scoring,
        records: Sequence[Record],
        now: datetime,
    ) -> None:
        s = self.settings
        done, failed = split_scored(plan, scoring)
        signals = settle(
            plan,
            done,
            grm_name=self.grm.name if self.grm else None,
            open_below=s.open_episode_below,
        )
        dead = plan.dead + [
            DeadLetter(item.record, Reason.SCORING_FAILED, f"scorer raised {error}")
            for item, error in failed
        ]
        scored_at = utcnow()
        pending = []
        for item, scores in done:
            record = scored_record(item, scores, scored_at, include_text=s.include_text)
            key = item.event.conversation_id.encode()
            pending.append(await self.scores.send(key=key, value=record, force=True))
        pending += await self._send_signals(signals)
        for letter in dead:
            value = dead_letter_record(letter, now, max_value_bytes=s.dlq_max_value_bytes)
            pending.append(await self.dead.send(key=letter.record.key, value=value, force=True))
        await asyncio.gather(*pending)  # outputs are on the broker before state moves on
        for conversation_id, state in plan.states.items():
            self.table[conversation_id.encode()] = state.to_json()
        for partition, offset in plan.handled.items():
            self.table[handled_key(partition)] = {"partition": partition, "offset": offset}
        await self._confirm_state()
        self._count(plan, done, dead, scoring, scored_at)
        self._count_signals(signals)
        self._note_handled(records)

    async def _confirm_state(self) -> None:
        """Wait until the broker has every state write: the offsets commit after this."""
        await asyncio.gather(*self.table.take_unconfirmed())
        await self.app.producer.flush()

    async def _send_signals(self, signals: Sequence[tuple[str, Signal]]) -> list[Any]:
        pending = []
        for conversation_id, signal in signals:
            record = signal_record(conversation_id, signal)
            if record is not None:
                key = conversation_id.encode()
                pending.append(await self.scores.send(key=key, value=record, force=True))
        return pending

    def _count(
        self,
        plan: BatchPlan,
        done: Sequence[tuple[ToScore, Sequence[Score]]],
        dead: Sequence[DeadLetter],
        scoring: Scoring,
        scored_at: datetime,
    ) -> None:
        m = self.metrics
        m.consumed.inc(plan.consumed)
        m.redelivered.inc(plan.redelivered)
        m.unknown_fields.inc(plan.unknown_fields)
        for letter in dead:
            m.rejected.labels(str(letter.reason)).inc()
        for event in plan.events:
            if isinstance(event, FeedbackEvent):
                m.feedback.labels(event.kind).inc()
        if plan.to_score:
            m.batch_size.observe(len(plan.to_score))
        for name, seconds in scoring.seconds(self.judges, self.grm):
            m.scoring_seconds.labels(name).observe(seconds)
        for scorer, run in zip(self.judges, scoring.judges, strict=False):
            if run.errors:
                m.scorer_errors.labels(scorer.name).inc(len(run.errors))
        for reason in scoring.chosen.values():
            m.grm_verdicts.labels(str(reason)).inc()
        for skip in scoring.skipped.values():
            m.grm_skipped.labels(str(skip)).inc()
        if self.grm is not None:
            failures = sum(1 for skip in scoring.skipped.values() if str(skip) == "failed")
            if failures:
                m.scorer_errors.labels(self.grm.name).inc(failures)
            m.grm_budget.set(self.budget.tokens)
        for item, scores in done:
            scenario = self._scenario(item.event.scenario)
            assistant = self._assistant(item.event.assistant_id)
            for score in scores:
                m.turns_scored.labels(score.scorer, str(score.verdict), scenario, assistant).inc()
                m.score.labels(score.scorer).observe(score.p_satisfied)
            m.event_to_score.observe(max(0.0, (scored_at - item.event.ts).total_seconds()))

    def _count_signals(self, signals: Sequence[tuple[str, Signal]]) -> None:
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
                if signal.outcome is Outcome.RECOVERED:
                    m.recovery_seconds.observe(signal.seconds)
                    m.recovery_turns.observe(e.attempts)
        for pair in pairs(signals):
            m.judge_reaction_pairs.labels(
                pair.scorer, pair.verdict, "true" if pair.dissatisfied else "false"
            ).inc()

    def _note_handled(self, records: Sequence[Record]) -> None:
        last: dict[TP, int] = {}
        for record in records:
            p = record.position
            last[TP(p.topic, p.partition)] = p.offset
        for tp in last.keys() - self._processed.keys():
            first = min(r.position.offset for r in records if r.position.partition == tp.partition)
            log.info("partition %d: first record handled from offset %d", tp.partition, first)
        self._processed.update(last)

    async def _sample_gauges(self) -> None:
        """Records in the log not applied yet, per owned partition, on a timer: a stalled
        partition's lag grows here even though no batch touches it. The GRM backend's
        circuit state is sampled on the same tick."""
        health = getattr(self.grm, "health", None)  # not part of the Scorer protocol
        if health is not None:
            self.metrics.grm_backend_state.set(float(health().get("state_code", 0.0)))
        consumer = self.app.consumer
        cursors = self.reader.cursors.positions()
        for tp in consumer.assignment():
            if tp.topic != self.settings.turns_topic:
                continue
            highwater = consumer.highwater(tp)
            position = cursors.get(tp)
            if highwater is None or position is None:
                continue  # not fetched from yet, or the reader has not started it
            self.metrics.consumer_lag.labels(str(tp.partition)).set(max(0, highwater - position))
            self._lag_labels.add(tp.partition)

    async def _follow_time(self) -> None:
        """Time passing: no-follow-up reactions and episode time limits, on event time.

        A partition still catching up is skipped: the message that answers a reply may be
        in its backlog, and after a restart the backlog is exactly where it would be.
        """
        s = self.settings
        if self._state_lock.locked():
            return  # a batch is running; the next tick comes soon enough
        async with self._state_lock:
            now = utcnow()
            caught_up = {tp.partition for tp in await self._caught_up()}
            active = self._active_partitions()
            changed: dict[bytes, ConversationState] = {}
            signals: list[tuple[str, Signal]] = []
            open_episodes = 0
            for key, value in list(self.table.items()):
                if not value or not (value.get("awaiting") or value.get("episode")):
                    continue  # nothing to time out (or a partition's handled mark)
                if value.get("partition") not in active:
                    continue  # a standby copy: its owner follows its time
                state = ConversationState.from_json(value)
                if state.partition in caught_up:
                    state, more = expire(
                        state,
                        now,
                        follow_up_s=s.follow_up_timeout_s,
                        episode_s=s.episode_timeout_s,
                    )
                    if more:
                        changed[key] = state
                        signals += [(key.decode(), self._settled(sig)) for sig in more]
                open_episodes += state.episode is not None
            if signals:
                delivery = asyncio.ensure_future(self._deliver_timed(changed, signals))
                await asyncio.shield(delivery)
            self.metrics.episodes_open.set(open_episodes)

    @staticmethod
    def _settled(signal: Signal) -> Signal:
        # With time passing there is no verdict still to come: settle on what is known.
        return signal.settle(signal.episode.verdict) if isinstance(signal, Pending) else signal

    async def _deliver_timed(
        self, changed: dict[bytes, ConversationState], signals: list[tuple[str, Signal]]
    ) -> None:
        await asyncio.gather(*await self._send_signals(signals))
        for key, state in changed.items():
            self.table[key] = state.to_json()
        await self._confirm_state()
        self._count_signals(signals)

    async def _caught_up(self) -> list[TP]:
        """Owned turns partitions with nothing left to read or handle.

        Fetched records wait in faust's buffers before a batch takes them, so a partition
        nothing was handled from since the last assignment counts only after a grace
        period: its fetched backlog, if any, has been handled by then.
        """
        consumer = self.app.consumer
        settled = time.monotonic() - self._assigned_at >= ASSIGNMENT_GRACE_S
        ready = []
        for tp in consumer.assignment():
            if tp.topic != self.settings.turns_topic:
                continue
            highwater = consumer.highwater(tp)
            position = await consumer.position(tp)
            if highwater is None or position is None or position < highwater:
                continue
            handled = self._processed.get(tp)
            if settled if handled is None else handled >= highwater - 1:
                ready.append(tp)
        return ready

    def _active_partitions(self) -> set[int]:
        """Turns partitions this worker owns (its table also holds standby copies of
        others, which it must neither count nor change)."""
        turns = self.settings.turns_topic
        return {tp.partition for tp in self.app.consumer.assignment() if tp.topic == turns}

    async def _evict_idle(self) -> None:
        cutoff = time.time() - self.settings.conversation_ttl_s
        active = self._active_partitions()
        mine = [
            (k, v)
            for k, v in list(self.table.items())
            if v and v.get("partition") in active and not is_handled_key(k)
        ]
        stale = [k for k, v in mine if v.get("touched_at", 0) < cutoff]
        for key in stale:
            del self.table[key]
        await self._confirm_state()
        self.metrics.evicted.inc(len(stale))
        self.metrics.conversations.set(len(mine) - len(stale))

    def _stop_children(self) -> None:
        """Every exit path ends the validation child: `os._exit` runs no finally."""
        validator, self._validator = self._validator, None
        if validator is not None:
            validator.stop()

    def run(self) -> None:
        from prometheus_client import start_http_server

        from stream.validation import start_validation

        s = self.settings
        (s.datadir / s.app_id).mkdir(parents=True, exist_ok=True)
        self.load_scorers()
        if s.metrics_port:
            start_http_server(s.metrics_port, addr=s.metrics_host, registry=self.metrics.registry)
            log.info("metrics on http://%s:%d/metrics", s.metrics_host, s.metrics_port)
        self._validator = start_validation(s, self.scorers, self.metrics)  # None when off
        worker = faust.Worker(self.app, loglevel=s.log_level, quiet=True)
        try:
            worker.execute_from_commandline()
        finally:
            self._stop_children()
            m = self.metrics
            log.info(
                "worker stopped: consumed=%d scored=%d dead_lettered=%d",
                counter_total(m.consumed),
                counter_total(m.turns_scored),
                counter_total(m.rejected),
            )


def build(settings: Settings, scorers: Scorers | None = None) -> Service:
    return Service(settings, scorers if scorers is not None else build_scorers(settings), Metrics())
