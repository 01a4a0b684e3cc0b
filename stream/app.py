"""The composition root: builds the faust app, topics, table, scorers and metrics from Settings.

Nothing else in uxmon creates Kafka clients, scorers or metric registries for the service.

Delivery is at-least-once. Per micro-batch, in log order without holes (stream/reading.py):
the pipeline (stream/pipeline.py) runs in a worker thread, so heartbeats, commits and
timers go on during a slow batch: parse and fold, score (the GRM within its deadline),
settle episodes with the verdicts. Then, here: publish scores, reactions, episode outcomes
and dead letters and wait until the broker has them → write the conversation states, each
with its share of the batch's counts, then each partition's mark with its running totals,
and wait for those too → show the totals (stream/ledger.py) → settle the batch's offsets
for the commit. A timer does the same for time passing (no follow-up, episode time limits).

A crash before the state write replays the batch (duplicate scores, never lost ones);
afterwards a replayed record is recognised by its offset and skipped, and the counts of a
batch cut short are restored from its states before the partition's next batch, so every
applied record is counted once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

import faust
from faust.types import TP

from scorer.protocol import Scorer
from scorer.runtime import Runtime
from stream import __version__
from stream.accounting import Accounting
from stream.cascade import Budget, Deadline
from stream.conversation import ConversationState, Position, Signal, Tracking
from stream.due import Due
from stream.events import utcnow
from stream.health import HEALTH_PATH, Health, serve
from stream.labels import Labelled, Source, label_record
from stream.ledger import Entry, Exemplars, Mark, Tally
from stream.metrics import Metrics, counter_total
from stream.pipeline import Outcome, Pipeline, shadow_name
from stream.reaction_layer import ReactionLayer
from stream.reactions import Patterns
from stream.reading import Reader
from stream.records import Record, dead_letter_record, scored_record, signal_record
from stream.settings import Settings
from stream.store import OPTIONS as STORE_OPTIONS
from stream.store import own_tabledir
from stream.table import ConversationTable, handled_key, is_handled_key
from stream.validation import Validator

log = logging.getLogger("uxmon")

EXIT_BATCH_FAILED = 70  # EX_SOFTWARE: let the supervisor restart us


@dataclass(slots=True)
class _Timings:
    """A partition's stored states as the due indexes take them: (key, time) lists."""

    follow_ups: list[tuple[bytes, float]] = field(default_factory=list)
    episodes: list[tuple[bytes, float]] = field(default_factory=list)
    idle: list[tuple[bytes, float]] = field(default_factory=list)


class Scorers(NamedTuple):
    judges: list[Scorer]  # run on every assistant turn
    grm: Scorer | None  # run on the turns the budget picks
    shadows: Sequence[Scorer] = ()  # candidates on every turn; their scores feed nothing


def build_scorers(settings: Settings) -> Scorers:
    """Create the configured scorers (not loaded yet)."""
    from scorer.registry import create

    runtime = Runtime(threads=settings.threads, dtype=settings.dtype)

    def make(name: str, *, shadow: bool = False) -> Scorer:
        options = settings.scorer_options(name, shadow=shadow)
        if ":" not in name:  # built-ins share the runtime
            options["runtime"] = runtime
        return create(name, **options)

    grm = make(settings.grm) if settings.grm else None
    shadows = [make(name, shadow=True) for name in settings.shadow_scorers]
    return Scorers([make(name) for name in settings.scorers], grm, shadows)


class Service:
    """One uxmon worker. `run()` blocks until the worker stops."""

    def __init__(self, settings: Settings, scorers: Scorers, metrics: Metrics) -> None:
        self.settings = settings
        self.judges = list(scorers.judges)
        self.grm = scorers.grm
        self.shadows = list(scorers.shadows)
        self.live = self.judges + ([self.grm] if self.grm else [])
        self.scorers = self.live + self.shadows  # all loaded; only the live ones validated
        self.metrics = metrics
        self.pipeline = Pipeline(
            judges=self.judges,
            grm=self.grm,
            shadows=self.shadows,
            budget=Budget(
                rate=settings.grm_rate,
                burst=settings.grm_burst,
                max_per_batch=settings.grm_max_per_batch,
                uncertain_margin=settings.grm_uncertain_margin,
                sample_rate=settings.grm_sample_rate,
            ),
            deadline=Deadline(settings.grm_deadline_s),
            limits=settings.limits(),
            bounds=settings.bounds(),
            tracking=Tracking(
                patterns=Patterns.load(settings.patterns_dir),
                episode_max_turns=settings.episode_max_turns,
                own_patterns=Patterns.own(settings.patterns_dir),
                labels=settings.labels_topic is not None,
            ),
            open_below=settings.open_episode_below,
            follow_up_s=settings.follow_up_timeout_s,
            episode_s=settings.episode_timeout_s,
            reactions=ReactionLayer.for_scorers(
                settings.reaction_model_dir(),
                self.judges,
                cache_dir=settings.model_cache,
                runtime=Runtime(threads=settings.threads, dtype=settings.dtype),
            )
            if settings.reaction_model is not None
            else None,
        )
        self.accounting = Accounting(
            metrics, self.pipeline, settings.scenarios, settings.label_values_max
        )
        # Batches and the timer both read-modify-write conversation states; one at a time.
        self._state_lock = asyncio.Lock()
        # One thread: batches run one at a time and scorers use torch's own thread pool.
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="uxmon-batch")
        self._validator: Validator | None = None
        self._lag_labels: set[int] = set()  # partitions whose lag gauge this worker exports
        # Each owned partition's mark, reconciled after the table's recovery (stream/ledger.py);
        # `_epoch` counts assignments, so a batch that outlives one shows nothing stale.
        self._marks: dict[int, Mark] = {}
        self._epoch = 0
        # What falls due when in the owned partitions (stream/due.py): replies awaiting a
        # follow-up, open episodes, idle conversations. Indexed as states are written, and
        # from the table once it is recovered.
        self._follow_ups, self._episodes, self._idle = Due(), Due(), Due()
        # Per owned partition, the event time of the last event applied there (log order).
        self._read_to: dict[int, float] = {}
        self.health = Health(settings.health_loop_s, settings.health_progress_s)
        metrics.ledger.alive = self._alive
        self.security = settings.kafka_security()  # its files are read once, here
        self._tabledir = own_tabledir(settings.datadir / settings.app_id)
        self.app = self._build_app()
        # Applies each partition's records in log order, whatever faust hands over.
        self.reader = Reader(
            self.app,
            settings.turns_topic,
            settings.broker,
            metrics.rereads,
            metrics.offset_resets,
            self.security.aiokafka(),
        )

    def _build_app(self) -> faust.App:
        s = self.settings
        conf: dict[str, Any] = {
            "broker": s.broker_urls(),
            "datadir": str(s.datadir / s.app_id),
            "tabledir": str(self._tabledir),
            "store": f"{s.state_store}://",
            "web_enabled": False,  # /metrics is served by prometheus_client
            "web_bind": "127.0.0.1",
            "topic_partitions": s.partitions,
            "topic_replication_factor": s.replication,
            "broker_session_timeout": s.session_timeout_s,
            "broker_heartbeat_interval": s.heartbeat_interval_s,
            "broker_commit_interval": s.commit_interval_s,
            "table_standby_replicas": s.standby_replicas,
            "consumer_auto_offset_reset": "earliest",
            "broker_credentials": self.security.faust_credentials(),
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
        # Compacted: a replayed batch repeats a label's key, and compaction keeps one.
        self.labels = (
            app.topic(
                s.labels_topic,
                value_serializer="json",
                compacting=True,
                retention=s.labels_retention_s,
            )
            if s.labels_topic
            else None
        )
        self.table = ConversationTable(
            app,
            name="conversations",
            default=None,
            partitions=s.partitions,
            key_type=bytes,  # raw conversation_id bytes, as keyed in the turns topic
            value_type=None,  # JSON (ConversationState.to_json)
            help="Per-conversation state, keyed by conversation_id bytes.",
            options=dict(STORE_OPTIONS) if s.state_store == "rocksdb" else None,
        )
        app.tables.add(self.table)
        app.agent(self.turns, name="score-turns")(self._consume)
        app.timer(interval=s.eviction_interval_s)(self._evict_idle)
        app.timer(interval=s.timers_interval_s)(self._follow_time)
        app.timer(interval=s.timers_interval_s)(self._find_stalls)
        app.timer(interval=s.timers_interval_s)(self._sample_gauges)
        app.timer(interval=1.0)(self._beat)
        app.on_partitions_revoked.connect(self._on_revoked)  # type: ignore[arg-type]
        app.on_partitions_assigned.connect(self._on_assigned)  # type: ignore[arg-type]
        app.on_rebalance_complete.connect(self._on_rebalance_complete)  # type: ignore[arg-type]
        return app

    async def _on_revoked(self, app: faust.App, revoked: set[TP], **_: Any) -> None:
        self._epoch += 1
        self._marks.clear()
        for due in (self._follow_ups, self._episodes, self._idle):
            due.clear()
        self._read_to.clear()
        self.metrics.ledger.hide()  # the partitions' next owners continue their totals

    async def _on_rebalance_complete(self, app: faust.App, **_: Any) -> None:
        """The table is recovered: reconcile the marks before any record is applied.

        faust 0.15 also sends this signal when a rebalance cut its recovery short (it
        takes the interruption for the end of reading, then sees the new generation and
        stops before resuming the streams). The table then lacks what the new recovery
        is still to read, marks included, so a mark reconciled now would restart its
        partition's totals from zero. A recovery pending means just that: wait for it."""
        recovery = app.tables.recovery  # type: ignore[attr-defined]  # TableManager's
        if recovery.signal_recovery_start.is_set():
            log.info("a rebalance interrupted the table's recovery; reconciling after the next")
            return
        async with self._state_lock:
            await self._reconcile({tp.partition for tp in self.reader.owned()})

    async def _reconcile(self, partitions: set[int]) -> None:
        """Each partition's mark with the shares of states a crash left it without,
        written back before anything else moves on (stream/ledger.py), then shown; then
        what falls due in the partition, indexed from its states. Called under the lock."""
        todo = partitions - self._marks.keys()
        if not todo:
            return
        stored = [
            (key, value)
            for key, value in list(self.table.items())
            if not is_handled_key(key) and value and value.get("partition") in todo
        ]
        entries: dict[int, list[Entry]] = {p: [] for p in todo}
        for _, value in stored:
            entry = Entry.from_json(value.get("ledger"))
            if entry is not None:
                entries[value["partition"]].append(entry)
        # No await from reading the marks to writing them back: a revocation in between
        # would let this worker write marks of partitions another one owns by then.
        epoch, marks = self._epoch, {}
        for partition in todo:
            mark = Mark.from_json(self.table.get(handled_key(partition)))
            marks[partition] = reconciled = mark.reconciled(entries[partition])
            if reconciled is not mark:
                log.info("partition %d: counts of a batch cut short restored", partition)
                self.table[handled_key(partition)] = reconciled.to_json(partition)
        await self._confirm_state()
        if epoch != self._epoch:
            return
        self._show(marks, inherited=True)  # the series its last owner showed go on
        # Reading every state takes seconds at a million: in the batch thread (no batch
        # runs under the lock), so the loop goes on heartbeating meanwhile.
        loop = asyncio.get_running_loop()
        timings = await loop.run_in_executor(self._executor, self._timings, stored, todo)
        for partition, timing in timings.items() if epoch == self._epoch else ():
            self._follow_ups.load(partition, timing.follow_ups)
            self._episodes.load(partition, timing.episodes)
            self._idle.load(partition, timing.idle)

    def _show(
        self,
        marks: dict[int, Mark],
        *,
        inherited: bool = False,
        exemplars: dict[int, Exemplars] | None = None,
    ) -> None:
        self._marks.update(marks)
        for partition, mark in marks.items():
            examples = (exemplars or {}).get(partition)
            self.metrics.ledger.show(
                partition, mark.totals, inherited=inherited, exemplars=examples
            )

    async def _beat(self) -> None:
        self.health.beat()

    def _alive(self) -> bool:
        """The event loop ran lately: this worker still holds its partitions."""
        return self.health.loop_turned_within(0.9 * self.settings.session_timeout_s)

    async def _on_assigned(self, app: faust.App, assigned: set[TP], **_: Any) -> None:
        owned = [tp for tp in assigned if tp.topic == self.settings.turns_topic]
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
        if self.pipeline.reactions is not None:  # after the scorers: it shares their encoder
            self.pipeline.reactions.load()
        described = [(s.name, s.version) for s in self.live]
        described += [(shadow_name(s.name), s.version) for s in self.shadows]
        self.metrics.describe_worker(__version__, described)

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
                self.reader.settled(records)
                self.health.progressed()
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
        return self._marks[partition].offset

    async def handle(self, records: Sequence[Record]) -> Outcome:
        async with self._state_lock:
            await self._reconcile({r.position.partition for r in records})
            loop = asyncio.get_running_loop()
            outcome = await loop.run_in_executor(
                self._executor,
                self.pipeline.run,
                records,
                self._load_state,
                self._handled_before,
                utcnow(),
            )
            # Publishing, the state write and counting belong together: a cancel (SIGTERM)
            # landing between them would leave state that says "applied" for turns nobody
            # counted. Finish them, then let the cancel through.
            delivery = asyncio.ensure_future(self._deliver(outcome))
            try:
                await asyncio.shield(delivery)
            except asyncio.CancelledError:
                await delivery
                raise
            return outcome

    async def _deliver(self, outcome: Outcome) -> None:
        """Outputs on the broker, then the states, then the counts."""
        s = self.settings
        pending = []
        for item, scores in outcome.scored:
            record = scored_record(
                item,
                scores,
                outcome.scored_at,
                include_text=s.include_text,
                shadow=outcome.shadow.get((item.event.conversation_id, item.event.turn_id), ()),
            )
            key = item.event.conversation_id.encode()
            pending.append(await self.scores.send(key=key, value=record, force=True))
        pending += await self._send_signals(outcome.signals)
        for letter in outcome.dead:
            value = dead_letter_record(
                letter, outcome.scored_at, max_value_bytes=s.dlq_max_value_bytes
            )
            pending.append(await self.dead.send(key=letter.record.key, value=value, force=True))
        await asyncio.gather(*pending)  # outputs are on the broker before state moves on
        tally = self.accounting.tally(outcome)
        await self._write(outcome.plan.states, tally, outcome.plan.handled)
        self._read_to.update(outcome.plan.read_to)
        self.accounting.observe(outcome)

    async def _write(
        self, states: dict[str, ConversationState], tally: Tally, handled: dict[int, int]
    ) -> None:
        """The states with their shares of the tally, then each partition's mark (the same
        changelog partition, so a crash leaves a prefix: stream/ledger.py), and once the
        broker has them all, the new totals."""
        epoch = self._epoch
        seqs = {p: self._marks[p].seq + 1 for p in tally.partitions() | handled.keys()}
        for conversation_id, state in states.items():
            value = state.to_json()
            if state.partition is not None:  # always, for a state a batch applied
                share = tally.of_conversation(state.partition, conversation_id)
                if share:
                    value["ledger"] = Entry(seqs[state.partition], share).to_json()
            self.table[conversation_id.encode()] = value
            self._index(conversation_id.encode(), state)
        marks = {
            p: self._marks[p].after(seq, handled.get(p), tally.of_partition(p))
            for p, seq in seqs.items()
        }
        await self._write_marks(marks)
        if epoch == self._epoch:
            self._show(marks, exemplars=tally.exemplars)

    async def _write_marks(self, marks: dict[int, Mark]) -> None:
        for partition, mark in marks.items():
            self.table[handled_key(partition)] = mark.to_json(partition)
        await self._confirm_state()

    async def _confirm_state(self) -> None:
        """Wait until the broker has every state write: the offsets commit after this."""
        await asyncio.gather(*self.table.take_unconfirmed())
        await self.app.producer.flush()

    async def _send_signals(self, signals: Sequence[tuple[str, Signal]]) -> list[Any]:
        pending = []
        for conversation_id, signal in signals:
            if isinstance(signal, Labelled):
                if self.labels is not None:  # signals exist only when it is on
                    pending.append(await self._send_label(conversation_id, signal))
                continue
            record = signal_record(conversation_id, signal)
            if record is not None:
                key = conversation_id.encode()
                pending.append(await self.scores.send(key=key, value=record, force=True))
        return pending

    async def _send_label(self, conversation_id: str, labelled: Labelled) -> Any:
        assert self.labels is not None
        s = self.settings
        weight = 1.0 if labelled.source is Source.EXPLICIT else s.labels_implicit_weight
        record = label_record(conversation_id, labelled, weight=weight, at=utcnow())
        key = record["label_id"].encode()
        await self.labels.maybe_declare()  # compacted, with its retention; once per process
        return await self.labels.send(key=key, value=record, force=True)

    async def _sample_gauges(self) -> None:
        """Records in the log not applied yet, per owned partition, on a timer: a stalled
        partition's lag grows here even though no batch touches it. The GRM backend's
        circuit state is sampled on the same tick."""
        health = getattr(self.grm, "health", None)  # not part of the Scorer protocol
        if health is not None:
            self.metrics.grm_backend_state.set(float(health().get("state_code", 0.0)))
        lags = self.reader.lags()
        for partition, lag in lags.items():
            self.metrics.consumer_lag.labels(str(partition)).set(lag)
            self._lag_labels.add(partition)
        self.health.lags(lags.values())

    def _index(self, key: bytes, state: ConversationState) -> None:
        """When `state`'s time limits and its idle time run out (stream/due.py)."""
        partition = state.partition
        if partition is None:
            return
        follow_up, episode = self.pipeline.time_limits(state)
        self._follow_ups.put(partition, key, follow_up)
        self._episodes.put(partition, key, episode)
        self._idle.put(partition, key, state.touched_at + self.settings.conversation_ttl_s)

    def _timings(
        self, stored: list[tuple[bytes, dict[str, Any]]], partitions: set[int]
    ) -> dict[int, _Timings]:
        """What `_index` puts for each stored state, per partition, in bulk."""
        out = {partition: _Timings() for partition in partitions}
        ttl = self.settings.conversation_ttl_s
        for key, value in stored:
            state = ConversationState.from_json(value)
            timings = out[value["partition"]]
            follow_up, episode = self.pipeline.time_limits(state)
            if follow_up is not None:
                timings.follow_ups.append((key, follow_up))
            if episode is not None:
                timings.episodes.append((key, episode))
            timings.idle.append((key, state.touched_at + ttl))
        return out

    def _clocks(self, caught_up: set[int]) -> dict[int, datetime]:
        """The time each owned partition's limits run on: the wall clock once it is caught
        up; while it is behind, the event time of the last event applied in it (log
        order) less the lateness allowed, never ahead of the wall clock. A partition behind
        with no event applied since its assignment waits.

        The last event applied, not the newest: a replay written conversation after
        conversation goes back in time at each one, and a reply must not time out while
        the message that answers it, later in the log, is still to be read."""
        now = utcnow()
        clocks = {}
        for partition in self._marks:
            read_to = self._read_to.get(partition)
            if partition in caught_up:
                clocks[partition] = now
            elif read_to is not None:
                behind = datetime.fromtimestamp(read_to - self.settings.event_lateness_s, UTC)
                clocks[partition] = min(now, behind)
        return clocks

    async def _follow_time(self) -> None:
        """Time passing: no-follow-up reactions and episode time limits, over what has
        fallen due. It waits for a running batch (the lock is fair), so no load starves it."""
        async with self._state_lock:
            due: dict[bytes, datetime] = {}
            for partition, clock in self._clocks(await self.reader.caught_up()).items():
                until = clock.timestamp()
                for index in (self._follow_ups, self._episodes):
                    due.update((key, clock) for key in index.take(partition, until))
            states = {
                key: ConversationState.from_json(value)
                for key in due
                if (value := self.table.get(key))
            }
            tick = self.pipeline.tick((key, state, due[key]) for key, state in states.items())
            for key, state in states.items():
                self._index(key, tick.changed.get(key, state))
            if tick.signals:
                delivery = asyncio.ensure_future(self._deliver_timed(tick.changed, tick.signals))
                await asyncio.shield(delivery)
            self.metrics.episodes_open.set(len(self._episodes))

    async def _deliver_timed(
        self, changed: dict[bytes, ConversationState], signals: list[tuple[str, Signal]]
    ) -> None:
        epoch = self._epoch
        await asyncio.gather(*await self._send_signals(signals))
        if epoch != self._epoch:
            return  # revoked meanwhile: the new owner times them out again, and counts them
        states = {key.decode(): state for key, state in changed.items()}
        await self._write(states, self.accounting.tally_signals(signals, states), {})
        self.accounting.observe_signals(signals)

    async def _evict_idle(self) -> None:
        """Conversations idle past their TTL leave the table (and the indexes)."""
        evicted = 0
        for partition in list(self._marks):
            for key in self._idle.take(partition, time.time()):
                self._follow_ups.put(partition, key, None)
                self._episodes.put(partition, key, None)
                if key in self.table:
                    del self.table[key]
                    evicted += 1
        await self._confirm_state()
        self.metrics.evicted.inc(evicted)
        self.metrics.conversations.set(len(self._idle))

    def _stop_children(self) -> None:
        """Every exit path ends the validation child: `os._exit` runs no finally."""
        validator, self._validator = self._validator, None
        if validator is not None:
            validator.stop()

    def run(self) -> None:
        from stream.validation import start_validation

        s = self.settings
        (s.datadir / s.app_id).mkdir(parents=True, exist_ok=True)
        self.load_scorers()
        if s.metrics_port:
            serve(s.metrics_host, s.metrics_port, self.metrics.registry, self.health)
            log.info("metrics on http://%s:%d/metrics", s.metrics_host, s.metrics_port)
            log.info("health on http://%s:%d%s", s.metrics_host, s.metrics_port, HEALTH_PATH)
        self._validator = start_validation(s, self.live, self.metrics)  # None when off
        worker = faust.Worker(self.app, loglevel=s.log_level, quiet=True)
        try:
            worker.execute_from_commandline()
        finally:
            self._stop_children()
            m = self.metrics
            log.info(
                "worker stopped: consumed=%d redelivered=%d",
                counter_total(m.consumed),
                counter_total(m.redelivered),
            )


def build(settings: Settings, scorers: Scorers | None = None) -> Service:
    return Service(
        settings,
        scorers if scorers is not None else build_scorers(settings),
        Metrics(process=True),
    )
