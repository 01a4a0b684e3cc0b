"""The composition root: builds the faust app, topics, table, scorers and metrics from Settings.

Nothing else in uxmon creates Kafka clients, scorers or metric registries for the service.

Delivery is at-least-once. Per micro-batch: parse and fold (on the loop) → score (in a
worker thread, so heartbeats and commits go on during a slow batch) → publish scores and
dead letters and wait until the broker has them → write the conversation states → count
metrics → faust acks the batch and commits its offsets. A crash before the state write
replays the batch (duplicate scores, never lost ones); afterwards a replayed record is
recognised by its offset and skipped, so metrics do not count it twice.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

import faust
from faust.types import TP

from scorer.protocol import Scorer
from scorer.runtime import Runtime
from scorer.types import Score
from stream import __version__
from stream.conversation import ConversationState, Position
from stream.events import FeedbackEvent, Limits, Reason, utcnow
from stream.metrics import BoundedLabel, Metrics, counter_total
from stream.settings import Settings
from stream.step import (
    BatchPlan,
    DeadLetter,
    Record,
    ScorerRun,
    ToScore,
    dead_letter_record,
    plan_batch,
    score_all,
    scored_record,
    split_scored,
)
from stream.table import ConversationTable

log = logging.getLogger("uxmon")

EXIT_BATCH_FAILED = 70  # EX_SOFTWARE: let the supervisor restart us


def build_scorers(settings: Settings) -> list[Scorer]:
    """Create the configured scorers (not loaded yet)."""
    from scorer.registry import create

    runtime = Runtime(threads=settings.threads, dtype=settings.dtype)
    scorers = []
    for name in settings.scorers:
        options: dict[str, Any] = {}
        if ":" not in name:  # built-ins share the model cache and runtime
            options = {"cache_dir": settings.model_cache, "runtime": runtime}
        scorers.append(create(name, **options))
    return scorers


class Service:
    """One uxmon worker. `run()` blocks until the worker stops."""

    def __init__(self, settings: Settings, scorers: Sequence[Scorer], metrics: Metrics) -> None:
        self.settings = settings
        self.scorers = list(scorers)
        self.metrics = metrics
        self.limits = Limits(
            max_text_chars=settings.max_text_chars,
            max_id_chars=settings.max_id_chars,
            max_metadata_items=settings.max_metadata_items,
            max_metadata_chars=settings.max_metadata_chars,
            clock_skew_s=settings.clock_skew_s,
        )
        self._scenario = BoundedLabel(len(settings.scenarios), settings.scenarios, "Other")
        self._assistant = BoundedLabel(settings.label_values_max)
        # One thread: scorers run one batch at a time and use torch's own thread pool.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uxmon-score")
        self.app = self._build_app()

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
        app.on_partitions_assigned.connect(self._on_assigned)  # type: ignore[arg-type]
        return app

    async def _on_assigned(self, app: faust.App, assigned: set[TP], **_: Any) -> None:
        owned = [tp for tp in assigned if tp.topic == self.settings.turns_topic]
        self.metrics.assignments.inc()
        self.metrics.assigned_partitions.set(len(owned))
        log.info("assigned %d partitions of %s", len(owned), self.settings.turns_topic)

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
        async for events in stream.take_events(  # type: ignore[attr-defined]
            self.settings.batch_max, self.settings.batch_within_s
        ):
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
            except BaseException as exc:
                # faust acks a take() batch even when the loop body fails, and the commit
                # would then skip records whose scores were never published. Mark them
                # as handled-elsewhere so they are never committed and are re-read later.
                for event in events:
                    event.message.acked = True
                if isinstance(exc, Exception):
                    log.critical(
                        "a batch failed (%s); exiting so it is re-read after restart",
                        type(exc).__name__,
                        exc_info=True,  # our exceptions never carry event text
                    )
                    logging.shutdown()
                    os._exit(EXIT_BATCH_FAILED)
                raise  # cancelled: the worker is stopping

    def _load_state(self, conversation_id: str) -> ConversationState:
        return ConversationState.from_json(self.table.get(conversation_id.encode()))

    async def handle(self, records: Sequence[Record]) -> BatchPlan:
        s = self.settings
        now = utcnow()
        plan = plan_batch(
            records,
            self._load_state,
            limits=self.limits,
            now=now,
            history_turns=s.history_turns,
            seen_ids=s.seen_ids,
        )
        runs: list[ScorerRun] = []
        if plan.to_score:
            loop = asyncio.get_running_loop()
            dialogues = [item.dialogue for item in plan.to_score]
            runs = await loop.run_in_executor(self._executor, score_all, self.scorers, dialogues)
        # Publishing, the state write and counting belong together: a cancel (SIGTERM)
        # landing between them would leave state that says "applied" for turns nobody
        # counted. Finish them, then let the cancel through.
        delivery = asyncio.ensure_future(self._deliver(plan, runs, records, now))
        try:
            await asyncio.shield(delivery)
        except asyncio.CancelledError:
            await delivery
            raise
        return plan

    async def _deliver(
        self,
        plan: BatchPlan,
        runs: list[ScorerRun],
        records: Sequence[Record],
        now: datetime,
    ) -> None:
        s = self.settings
        done, failed = split_scored(plan, runs)
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
        for letter in dead:
            value = dead_letter_record(letter, now)
            pending.append(await self.dead.send(key=letter.record.key, value=value, force=True))
        await asyncio.gather(*pending)  # outputs are on the broker before state moves on
        for conversation_id, state in plan.states.items():
            self.table[conversation_id.encode()] = state.to_json()
        await self.app.producer.flush()
        self._count(plan, done, dead, runs, scored_at)
        self._observe_lag(records)

    def _count(
        self,
        plan: BatchPlan,
        done: Sequence[tuple[ToScore, Sequence[Score]]],
        dead: Sequence[DeadLetter],
        runs: Sequence[ScorerRun],
        scored_at: datetime,
    ) -> None:
        m = self.metrics
        m.consumed.inc(plan.consumed)
        m.redelivered.inc(plan.redelivered)
        for letter in dead:
            m.rejected.labels(str(letter.reason)).inc()
        for event in plan.events:
            if isinstance(event, FeedbackEvent):
                m.feedback.labels(event.kind).inc()
        if plan.to_score:
            m.batch_size.observe(len(plan.to_score))
        for scorer, run in zip(self.scorers, runs, strict=False):  # no runs: nothing to score
            m.scoring_seconds.labels(scorer.name).observe(run.seconds)
        for item, scores in done:
            scenario = self._scenario(item.event.scenario)
            assistant = self._assistant(item.event.assistant_id)
            for score in scores:
                m.turns_scored.labels(score.scorer, str(score.verdict), scenario, assistant).inc()
                m.score.labels(score.scorer).observe(score.p_satisfied)
            m.event_to_score.observe(max(0.0, (scored_at - item.event.ts).total_seconds()))

    def _observe_lag(self, records: Sequence[Record]) -> None:
        last: dict[TP, int] = {}
        for record in records:
            p = record.position
            last[TP(p.topic, p.partition)] = p.offset
        for tp, offset in last.items():
            highwater = self.app.consumer.highwater(tp)
            if highwater is not None:
                self.metrics.consumer_lag.labels(str(tp.partition)).set(
                    max(0, highwater - offset - 1)
                )

    async def _evict_idle(self) -> None:
        cutoff = time.time() - self.settings.conversation_ttl_s
        stale = [k for k, v in list(self.table.items()) if v and v.get("touched_at", 0) < cutoff]
        for key in stale:
            del self.table[key]
        self.metrics.evicted.inc(len(stale))
        self.metrics.conversations.set(len(self.table))

    def run(self) -> None:
        from prometheus_client import start_http_server

        s = self.settings
        (s.datadir / s.app_id).mkdir(parents=True, exist_ok=True)
        self.load_scorers()
        if s.metrics_port:
            start_http_server(s.metrics_port, addr=s.metrics_host, registry=self.metrics.registry)
            log.info("metrics on http://%s:%d/metrics", s.metrics_host, s.metrics_port)
        worker = faust.Worker(self.app, loglevel=s.log_level, quiet=True)
        try:
            worker.execute_from_commandline()
        finally:
            m = self.metrics
            log.info(
                "worker stopped: consumed=%d scored=%d dead_lettered=%d",
                counter_total(m.consumed),
                counter_total(m.turns_scored),
                counter_total(m.rejected),
            )


def build(settings: Settings, scorers: Sequence[Scorer] | None = None) -> Service:
    return Service(settings, scorers if scorers is not None else build_scorers(settings), Metrics())
