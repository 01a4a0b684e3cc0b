"""A fault-injection run: a consumer group of real workers keeps scoring a steady stream of
turns while its members are killed, restarted in turn, and the broker restarts under it.

Everything is real: moto's S3 server, tansu with its S3 storage (so the log, the table
changelogs and the committed offsets survive the broker restart), `uxmon serve` children,
a Debian Prometheus scraping them every second and a kafka-python producer. Used by
bench/faults.py (full size) and tests/integration/test_faults.py (the QUICK size).

The ground truth is the turns topic itself, read back at the end: every assistant turn in
it must have a score record, and the workers' counters together must count each once.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import random
import signal
import threading
import time
import uuid
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from stream.broker import EmbeddedBroker, free_port
from stream.local import LocalWorker
from tests.support.listoffsets import ListOffsetsFix, high_watermark
from tests.support.prometheus import Prometheus
from tests.support.s3 import S3
from tests.support.services import committed_offsets
from tests.support.services import worker as spawn_worker
from tests.support.traffic import turn_event

log = logging.getLogger("uxmon.faults")

TURNS_SCORED = "uxmon_turns_scored_total"
BATCH_MAX = 32  # the workers' UXMON_BATCH_MAX (the default)
PARTITIONS = 4  # of the turns topic: the service's default, and what tansu creates


@dataclass(frozen=True)
class Config:
    events: int = 20_000  # at least this many turn events are produced
    workers: int = 3
    kill_every: tuple[float, float] = (20.0, 30.0)  # seconds between faults, drawn uniformly
    kills: int = 5
    scorer: str = "tests.support.scorers:Keyword"
    exchanges: int = 4  # user/assistant pairs per conversation
    open_conversations: int = 200  # interleaved, so a conversation's turns are apart in time
    broker_down_s: float = 3.0
    catch_up_timeout_s: float = 300.0
    seed: int | None = None
    fix_list_offsets: bool = True  # the proxy in front of tansu (see "the broker" below)


# CI size: two kills, the rolling restart and the broker restart in about four minutes.
QUICK = Config(
    events=600, kills=2, kill_every=(5.0, 8.0), open_conversations=60, catch_up_timeout_s=240.0
)


# --- traffic ------------------------------------------------------------------------------

_BANK = [
    ("帮我写一句生日祝福", "祝你生日快乐，万事顺意！"),
    ("Python 怎么读取 JSON 文件？", "用 json.load 配合 open 即可。"),
    ("How do I boil an egg?", "Simmer it for 9 minutes, then cool it in cold water."),
    ("推荐一本入门经济学的书", "可以看曼昆的《经济学原理》。"),
]


@dataclass
class Sent:
    turn_id: str
    role: str
    partition: int
    offset: int


class Traffic(threading.Thread):
    """Conversations of user/assistant turns at a steady rate until `finish()` is called
    and `minimum` events went out. ts is the send time, so turns stay in order."""

    def __init__(
        self, broker: str, topic: str, rate: float, minimum: int, tag: str, config: Config
    ) -> None:
        super().__init__(name="traffic", daemon=True)
        self.broker, self.topic, self.rate, self.minimum = broker, topic, rate, minimum
        self.tag, self.config = tag, config
        self.acked: list[Sent] = []  # appended from kafka-python's I/O thread
        self.failed: list[tuple[str, str]] = []
        self.sent = 0
        self.started_at = self.stopped_at = 0.0
        self._finish = threading.Event()
        self.error: BaseException | None = None

    def finish(self) -> None:
        self._finish.set()

    def events(self) -> Iterator[dict[str, Any]]:
        """Round-robin over `open_conversations`; a finished one is replaced by a new one."""
        opened = 0
        waiting: deque[tuple[int, int]] = deque()  # (conversation, its next turn)
        while True:
            if len(waiting) < self.config.open_conversations:
                waiting.append((opened, 0))
                opened += 1
                continue
            index, turn = waiting.popleft()
            cid = f"{self.tag}-c{index:06d}"
            k, role = divmod(turn, 2)
            question, answer = _BANK[(index + k) % len(_BANK)]
            name = ("user", "assistant")[role]
            yield turn_event(
                cid,
                f"{cid}-{name[0]}{k}",
                name,
                datetime.now(UTC),
                text=(question, answer)[role],
                assistant_id="web",
                scenario="Information & Knowledge Seeking",
            )
            if turn + 1 < 2 * self.config.exchanges:
                waiting.append((index, turn + 1))

    def run(self) -> None:
        try:
            self._produce()
        except BaseException as exc:  # reported by the run, never lost in a thread
            self.error = exc

    def _produce(self) -> None:
        from kafka import KafkaProducer

        # Idempotent with endless retries (kafka-python's defaults): a send that outlives
        # the broker restart is retried, never duplicated nor reordered.
        producer = KafkaProducer(
            bootstrap_servers=self.broker, acks="all", linger_ms=5, delivery_timeout_ms=300_000
        )
        self.started_at = time.time()
        next_at = time.monotonic()
        for event in self.events():
            if self._finish.is_set() and self.sent >= self.minimum:
                break
            delay = next_at - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            # Steady, never bursting to catch up: a stall (broker away) is simply a gap.
            next_at = max(next_at, time.monotonic()) + 1 / self.rate
            key = event["conversation_id"].encode()
            value = json.dumps(event, ensure_ascii=False).encode()
            future = producer.send(self.topic, key=key, value=value)
            future.add_callback(self._acked, event["turn_id"], event["role"])
            future.add_errback(self._failed, event["turn_id"])
            self.sent += 1
        producer.flush(timeout=300)
        producer.close()
        self.stopped_at = time.time()

    def _acked(self, turn_id: str, role: str, meta: Any) -> None:
        self.acked.append(Sent(turn_id, role, meta.partition, meta.offset))

    def _failed(self, turn_id: str, exc: BaseException) -> None:
        self.failed.append((turn_id, repr(exc)))


# --- workers ------------------------------------------------------------------------------


@dataclass
class Life:
    """One process of a member: how it ended and what it showed by then."""

    started: float
    ended: float | None = None
    how: str | None = None  # sigkill | sigterm | crashed
    exit_code: int | None = None
    # its uxmon_turns_scored_total just before a SIGKILL: the totals of the partitions it
    # owned, which their next owners continue (stream/ledger.py)
    shown: float | None = None


class Member:
    """A worker slot of the group: fixed metrics port and log, one process after another."""

    def __init__(self, index: int, worker: LocalWorker) -> None:
        self.index = index
        self.worker = worker
        self.lives: list[Life] = []

    @property
    def instance(self) -> str:
        return f"127.0.0.1:{self.worker.metrics_port}"

    def start(self) -> None:
        self.worker.start()
        self.lives.append(Life(started=time.time()))

    def wait_joined(self, timeout_s: float = 120) -> None:
        """Until the process has joined the group. Not until it owns a partition: four
        partitions over three members can leave one with none (faust gave 2/2/0)."""
        self.worker.wait_for("uxmon_partition_assignments_total", 1, timeout_s)

    def kill(self) -> None:
        """SIGKILL, after reading its counter: a killed process says nothing more."""
        try:
            shown: float | None = self.worker.total(TURNS_SCORED)
        except httpx.HTTPError:
            shown = None
        self.worker.kill9()
        self._ended("sigkill", shown)

    def terminate(self) -> None:
        """SIGTERM (SIGKILL after 20 s)."""
        self.worker.stop()
        self._ended("sigterm", None)

    def crashed(self) -> bool:
        """True once, when the current process died without being told to."""
        if self.lives and self.lives[-1].ended is None and not self.worker.alive():
            self._ended("crashed", None)
            return True
        return False

    def _ended(self, how: str, shown: float | None) -> None:
        life = self.lives[-1]
        assert self.worker.process is not None
        life.ended, life.how, life.shown = time.time(), how, shown
        life.exit_code = self.worker.process.returncode


# --- reading topics back ------------------------------------------------------------------


STALL_S = 15.0  # nothing new for this long: what a topic holds is all there is


@dataclass
class Log:
    records: list[tuple[int, int, Any]]  # (partition, offset, JSON value)
    highwater: dict[int, int]


def read_log(
    broker: str, topic: str, expected: int = 0, quiet_s: float = 3.0, timeout_s: float = 600
) -> Log:
    """Every record of `topic` with its position: until nothing new came for `quiet_s` once
    `expected` arrived, or for STALL_S if fewer are there (or `timeout_s` passed). The
    high-water marks come from the fetch responses (tansu's ListOffsets is wrong)."""
    from kafka import KafkaConsumer, TopicPartition

    consumer = KafkaConsumer(
        bootstrap_servers=broker, enable_auto_commit=False, auto_offset_reset="earliest"
    )
    try:
        partitions: set[int] = set()
        deadline = time.monotonic() + min(timeout_s, 10)
        while not partitions and time.monotonic() < deadline:  # metadata can lag
            partitions = consumer.partitions_for_topic(topic) or set()
            if not partitions:
                time.sleep(0.5)
        if not partitions:  # never written to (the dead-letter topic, hopefully)
            return Log([], {})
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        consumer.seek_to_beginning()
        records: list[tuple[int, int, Any]] = []
        deadline = time.monotonic() + timeout_s
        quiet_since = time.monotonic()
        while time.monotonic() < deadline:
            quiet = time.monotonic() - quiet_since
            if quiet >= quiet_s and (len(records) >= expected or quiet >= STALL_S):
                break
            for tp, batch in consumer.poll(timeout_ms=500).items():
                records += [(tp.partition, r.offset, json.loads(r.value)) for r in batch]
                quiet_since = time.monotonic()
        highwater = {tp.partition: consumer.highwater(tp) or 0 for tp in tps}
    finally:
        consumer.close()
    return Log(records, highwater)


# --- counters from Prometheus -------------------------------------------------------------


def increase_by_resets(values: list[float]) -> tuple[float, int]:
    """A series' total increase by Prometheus' own reset rule (a drop is a restart from 0),
    plus its first sample (every series here starts inside the window), and its drops."""
    if not values:
        return 0.0, 0
    total, drops = values[0], 0
    for before, after in itertools.pairwise(values):
        total += after - before if after >= before else after
        drops += after < before
    return total, drops


def prometheus_counts(prom: Prometheus, window_s: int, at: float) -> dict[str, Any]:
    """Turns counted, as Prometheus saw them: one series per partition and label set,
    continued across workers (stream/ledger.py; the scrape drops their `instance`)."""

    def query(expr: str) -> list[dict[str, Any]]:
        body = httpx.get(
            f"{prom.url}/api/v1/query", params={"query": expr, "time": at}, timeout=30
        ).json()
        if body.get("status") != "success":
            raise ValueError(f"query failed: {body.get('error')} ({expr})")
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def one(expr: str) -> float:
        rows = query(expr)
        return float(rows[0]["value"][1]) if rows else 0.0

    # increase() extrapolates each series' first and last sample towards the window's
    # edges and never counts what a series held at its first sample (a label set's first
    # batch), so it reads a little low or high; the raw samples give the exact figure.
    by_resets, drops, series = 0.0, 0, query(f"{TURNS_SCORED}[{window_s}s]")
    for row in series:
        total, dropped = increase_by_resets([float(v) for _, v in row["values"]])
        by_resets += total
        drops += dropped
    return {
        "last": one(f"sum(last_over_time({TURNS_SCORED}[{window_s}s]))"),
        "increase": one(f"sum(increase({TURNS_SCORED}[{window_s}s]))"),
        "samples_reset_rule": by_resets,
        "drops": drops,
        "series": len(series),
        "series_with_instance": sum("instance" in row["metric"] for row in series),
    }


def shown_by_partition(members: list[Member]) -> dict[str, list[tuple[int, float]]]:
    """Each partition's total as the live members show it: (member, value) per partition."""
    shown: dict[str, list[tuple[int, float]]] = {}
    for member in members:
        by_partition: Counter[str] = Counter()
        for labels, value in member.worker.samples().get(TURNS_SCORED, []):
            by_partition[labels["partition"]] += value
        for partition, value in by_partition.items():
            shown.setdefault(partition, []).append((member.index, value))
    return shown


# --- the run ------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str  # sigkill | rolling_restart | broker_restart | crash_restart
    at: float
    took_s: float = 0.0  # restarts included: until the new process joined the group
    worker: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def plan(config: Config) -> list[str]:
    """The kills, with the rolling restart a third of the way in and the broker restart
    two thirds: each happens with traffic flowing and kills before and after it."""
    steps = ["sigkill"] * config.kills
    steps.insert(math.ceil(config.kills / 3), "rolling_restart")
    steps.insert(math.ceil(2 * config.kills / 3) + 1, "broker_restart")
    return steps


class FaultRun:
    def __init__(self, config: Config, workdir: Path) -> None:
        self.config = config
        self.workdir = workdir
        self.rng = random.Random(config.seed)
        self.tag = uuid.uuid4().hex[:8]
        self.app_id = f"faults-{self.tag}"
        self.topics = {
            "turns_topic": f"turns-{self.tag}",
            "scores_topic": f"scores-{self.tag}",
            "dlq_topic": f"dlq-{self.tag}",
        }
        self.faults: list[Fault] = []
        self.members: list[Member] = []
        self.tansu: EmbeddedBroker | None = None
        self.s3: Any = None  # a boto3 client of the S3 server tansu stores into
        self.proxy: ListOffsetsFix | None = None
        self.address = ""  # what every client bootstraps from
        self.t0 = time.time()

    # faults ------------------------------------------------------------------------------

    def sigkill(self) -> Fault:
        member = self.rng.choice(self.members)
        fault = Fault("sigkill", time.time(), worker=member.index)
        member.kill()
        fault.detail["shown_before_kill"] = member.lives[-1].shown
        member.start()
        self.join(member)
        return fault

    def rolling_restart(self) -> Fault:
        fault = Fault("rolling_restart", time.time())
        steps = []
        for member in self.members:
            started = time.time()
            member.terminate()
            life = member.lives[-1]
            member.start()
            self.join(member)
            steps.append(
                {
                    "worker": member.index,
                    "at": started,
                    "exit_code": life.exit_code,
                    "took_s": round(time.time() - started, 2),
                }
            )
        fault.detail["steps"] = steps
        return fault

    def broker_restart(self) -> Fault:
        assert self.tansu is not None
        fault = Fault("broker_restart", time.time())
        self.tansu.stop()
        time.sleep(self.config.broker_down_s)
        self.tansu.start()
        return fault

    def inject(self, kind: str) -> Fault:
        started = time.monotonic()
        fault: Fault = getattr(self, kind)()
        fault.took_s = round(time.monotonic() - started, 2)
        who = "" if fault.worker is None else f" of worker {fault.worker}"
        log.info("t=%.0fs %s%s took %.1fs", fault.at - self.t0, kind, who, fault.took_s)
        return fault

    def join(self, member: Member, timeout_s: float = 120) -> None:
        """Until the member's process joined the group; one that dies meanwhile is
        restarted (and recorded), so the run goes on to show what else happens."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                member.wait_joined(max(1.0, deadline - time.monotonic()))
                return
            except RuntimeError:  # LocalWorker.wait_for: the process exited
                if time.monotonic() > deadline:
                    raise
                self.restart_crashed()

    def restart_crashed(self) -> None:
        """A member that died on its own is a failed invariant; restart it so the run (and
        the evidence of what else happens) goes on."""
        for member in self.members:
            if member.crashed():
                log.warning("worker %d exited by itself; restarting it", member.index)
                self.faults.append(Fault("crash_restart", time.time(), worker=member.index))
                member.start()

    def watch(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.restart_crashed()
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))

    # the whole run -----------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        c = self.config
        with ExitStack() as stack:
            s3 = stack.enter_context(S3(self.workdir))
            self._start_broker(s3, stack)
            ports = [free_port() for _ in range(c.workers)]
            prom = Prometheus(
                self.workdir / "prometheus", [f"127.0.0.1:{p}" for p in ports], scrape_interval="1s"
            )
            stack.enter_context(prom)
            self.t0 = time.time()
            settings: dict[str, Any] = {"scorers": c.scorer, "grm": "", **self.topics}
            settings.update(self._batching())
            for i, port in enumerate(ports):
                worker = spawn_worker(
                    self.address,
                    self.app_id,
                    self.workdir / f"worker{i}",
                    metrics_port=port,
                    **settings,
                )
                self.members.append(Member(i, worker))
                stack.callback(worker.stop)
            for member in self.members:
                member.start()
            for member in self.members:
                self.join(member, timeout_s=300)
            return self._with_faults(prom)

    def _start_broker(self, s3: S3, stack: ExitStack) -> None:
        self.s3 = s3.client()
        port = free_port()
        advertised = free_port() if self.config.fix_list_offsets else port
        self.tansu = s3.broker(port, advertised_port=advertised)
        self.tansu.start()
        stack.callback(self.tansu.stop)
        if self.config.fix_list_offsets:
            self.proxy = ListOffsetsFix(advertised, port, s3)
            self.proxy.start()
            stack.callback(self.proxy.stop)
        self.address = f"127.0.0.1:{advertised}"

    def _batching(self) -> dict[str, str]:
        """Production batching when the proxy answers ListOffsets right: one-record batches
        (stream/local.py's tansu work-around) only keep faust's recovery whole where the
        broker reports the last batch's start as the end, and with S3 storage each batch
        is an object on the one moto server every member shares."""
        return {"producer_max_batch_size": "16384"} if self.config.fix_list_offsets else {}

    def _with_faults(self, prom: Prometheus) -> dict[str, Any]:
        c = self.config
        steps = plan(c)
        gaps = [self.rng.uniform(*c.kill_every) for _ in steps]
        # The rate spreads the events over the gaps between faults plus a few seconds per
        # rolling step: faults take longer than that (each restart waits for the group),
        # so the events are all sent before the faults are over, and traffic goes on
        # until they are regardless.
        planned_s = sum(gaps) + 5 * c.workers
        traffic = Traffic(
            self.address,
            self.topics["turns_topic"],
            rate=c.events / planned_s,
            minimum=c.events,
            tag=self.tag,
            config=c,
        )
        traffic.start()
        log.info("traffic at %.1f events/s; faults: %s", traffic.rate, ", ".join(steps))
        for gap, kind in zip(gaps, steps, strict=True):
            self.watch(gap)
            self.faults.append(self.inject(kind))
        faults_over = time.time()
        sent_during_faults = traffic.sent
        traffic.finish()
        while traffic.is_alive():
            traffic.join(0.5)
            self.restart_crashed()
        if traffic.error is not None:
            raise RuntimeError("the traffic thread failed") from traffic.error
        log.info("faults over; %d events sent, waiting for the group to catch up", traffic.sent)
        caught_up = self.catch_up(traffic)
        return self._result(prom, traffic, faults_over, sent_during_faults, caught_up)

    def catch_up(self, traffic: Traffic) -> dict[str, Any]:
        """Until the group committed every turns offset and no member reports lag. The
        log's end comes from tansu's S3 metadata: reading the topic through the broker
        now would compete with the group for the one S3 server."""
        assert self.s3 is not None
        topic = self.topics["turns_topic"]
        highwater = {p: high_watermark(self.s3, topic, p) or 0 for p in range(PARTITIONS)}
        deadline = time.monotonic() + self.config.catch_up_timeout_s
        committed: dict[int, int] = {}
        lag = math.inf
        while time.monotonic() < deadline:
            self.restart_crashed()
            committed = committed_offsets(self.address, self.app_id, topic)
            done = all(committed.get(p, 0) >= hw for p, hw in highwater.items())
            try:
                lag = sum(m.worker.total("uxmon_consumer_lag_messages") for m in self.members)
            except httpx.HTTPError:
                lag = math.inf
            if done and lag == 0:
                break
            time.sleep(1)
        caught_up_at = time.time()
        time.sleep(3)  # three scrapes, so Prometheus holds every member's final count
        return {
            "committed": committed,
            "highwater": highwater,
            "caught_up": all(committed.get(p, 0) >= hw for p, hw in highwater.items()) and lag == 0,
            "at": caught_up_at,
            "lag_s": round(caught_up_at - (traffic.stopped_at or caught_up_at), 1),
        }

    def _result(
        self,
        prom: Prometheus,
        traffic: Traffic,
        faults_over: float,
        sent_during_faults: int,
        caught_up: dict[str, Any],
    ) -> dict[str, Any]:
        end = time.time()
        window_s = math.ceil(end - self.t0) + 5  # from before any worker started
        prometheus = prometheus_counts(prom, window_s, end)
        shown = shown_by_partition(self.members)
        # Read back once the group is idle: tansu serves each record batch from its own
        # S3 object, a few hundred a second at best here.
        turns = read_log(self.address, self.topics["turns_topic"], len(traffic.acked))
        replies = sum(v.get("role") == "assistant" for _, _, v in turns.records)
        scores = read_log(self.address, self.topics["scores_topic"], replies)
        dead = read_log(self.address, self.topics["dlq_topic"], quiet_s=2, timeout_s=15)
        for member in self.members:  # the last lives end here, with their own final count
            member.terminate()
        return report(
            self,
            traffic=traffic,
            faults_over=faults_over,
            sent_during_faults=sent_during_faults,
            caught_up=caught_up,
            turns=turns,
            scores=scores,
            dead=dead,
            prometheus={**prometheus, "window_s": window_s},
            shown=shown,
        )


def report(
    run: FaultRun,
    *,
    traffic: Traffic,
    faults_over: float,
    sent_during_faults: int,
    caught_up: dict[str, Any],
    turns: Log,
    scores: Log,
    dead: Log,
    prometheus: dict[str, Any],
    shown: dict[str, list[tuple[int, float]]],
) -> dict[str, Any]:
    """The result document: what was produced, scored and counted, and the invariants."""
    in_log = {v["turn_id"]: (p, o) for p, o, v in turns.records if v.get("role") == "assistant"}
    acked = {s.turn_id for s in traffic.acked if s.role == "assistant"}
    logged = {v["turn_id"] for _, _, v in turns.records}
    # Acknowledged by the broker but not in the log read back: lost by the broker before
    # any worker could see it (tansu's S3 engine, rarely, around its restart: the ack has
    # offset -1, a DUPLICATE_SEQUENCE_NUMBER answer to the retried batch). The service is
    # judged on what the turns topic holds; this is reported as the broker's.
    lost_acked = sorted(
        (s.turn_id, s.partition, s.offset) for s in traffic.acked if s.turn_id not in logged
    )
    score_ids = Counter(v["turn_id"] for _, _, v in scores.records if v.get("type") == "score")
    missing = sorted(set(in_log) - set(score_ids))
    lives = [{"worker": m.index, **asdict(life)} for m in run.members for life in m.lives]
    # Our SIGKILLs (-9) and SIGTERMs (0) are expected; anything else is a crash.
    expected_codes = {"sigkill": -signal.SIGKILL, "sigterm": 0}
    unexpected = [x for x in lives if expected_codes.get(x["how"]) != x["exit_code"]]
    # Every partition's durable total, shown by its one owner at the end.
    counted = sum(value for owners in shown.values() for _, value in owners)
    kills = sum(f.kind == "sigkill" for f in run.faults)
    distinct = len(in_log)
    dead_reasons = Counter(v.get("reason") for _, _, v in dead.records)
    duration = caught_up["at"] - run.t0
    traffic_s = (traffic.stopped_at or faults_over) - traffic.started_at
    processing_s = caught_up["at"] - traffic.started_at  # first event sent to all applied
    invariants = {
        "every_turn_scored": not missing,
        "caught_up": caught_up["caught_up"],
        "no_dead_letters": not dead.records,
        "no_unexpected_exit": not unexpected,
        # Counted once each across every kill and restart (stream/ledger.py): by the
        # workers, and by Prometheus on series that never drop.
        "every_partition_shown_once": all(len(owners) == 1 for owners in shown.values()),
        "workers_count_each_turn_once": counted == distinct,
        "prometheus_counts_each_turn_once": prometheus["last"] == distinct
        and prometheus["samples_reset_rule"] == distinct,
        "prometheus_series_never_drop": prometheus["drops"] == 0
        and prometheus["series_with_instance"] == 0,
        "enough_events": traffic.sent >= run.config.events,
        "enough_kills": kills >= run.config.kills,
    }
    return {
        "config": {**asdict(run.config), "kill_every": list(run.config.kill_every)},
        "workdir": str(run.workdir),
        "tag": run.tag,
        "started_at": datetime.fromtimestamp(run.t0, UTC).isoformat(),
        "timings": {
            "duration_s": round(duration, 1),
            "traffic_s": round(traffic_s, 1),
            "events_per_s": round(traffic.sent / traffic_s, 1) if traffic_s else None,
            "caught_up_after_traffic_s": caught_up["lag_s"],
            # what the group got through, faults included (S3 via moto is the limit here)
            "group_events_per_s": round(len(turns.records) / processing_s, 1),
            "load_average_at_end": [round(v, 2) for v in os.getloadavg()],
        },
        "traffic": {
            "events_sent": traffic.sent,
            "events_sent_during_faults": sent_during_faults,
            "events_in_log": len(turns.records),
            "send_failures": traffic.failed[:20],
            "assistant_turns_acked": len(acked),
            "events_acked": len(traffic.acked),
        },
        "faults": [
            {**asdict(f), "t_s": round(f.at - run.t0, 1), "at": _iso(f.at)} for f in run.faults
        ],
        "scores": {
            "assistant_turns": distinct,
            "score_records": sum(score_ids.values()),
            "turns_scored": len(score_ids),
            "missing": len(missing),
            "missing_turns": [(t, *in_log[t]) for t in missing[:50]],  # (turn, partition, offset)
            "duplicate_records": sum(n - 1 for n in score_ids.values() if n > 1),
            "not_in_turns_topic": len(set(score_ids) - set(in_log)),
        },
        "counters": {
            "distinct_assistant_turns": distinct,
            "shown_by_workers_at_end": counted,
            "shown_by_partition": shown,
            "prometheus_last": prometheus["last"],
            "prometheus_samples_reset_rule": prometheus["samples_reset_rule"],
            "prometheus_increase": round(prometheus["increase"], 1),
            "prometheus_drops": prometheus["drops"],
            "prometheus_series": prometheus["series"],
            "prometheus_series_with_instance": prometheus["series_with_instance"],
            "window_s": prometheus["window_s"],
        },
        "dead_letters": {"count": len(dead.records), "reasons": dict(dead_reasons)},
        "broker": {
            "list_offsets_fix": run.proxy is not None,
            # ListOffsets LATEST answers tansu got wrong, replaced by the high watermark
            "latest_answers_fixed": len(run.proxy.fixed) if run.proxy else None,
            "examples": run.proxy.fixed[:10] if run.proxy else [],
            "acked_not_in_log": len(lost_acked),
            "acked_not_in_log_examples": lost_acked[:50],  # (turn, partition, acked offset)
        },
        "lives": lives,
        "unexpected_exits": unexpected,
        "committed": caught_up["committed"],
        "highwater": caught_up["highwater"],  # tansu's S3 metadata
        "highwater_fetched": turns.highwater,  # what the fetch responses said
        "invariants": invariants,
        "passed": all(invariants.values()),
    }


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat()


def run_faults(config: Config, workdir: Path) -> dict[str, Any]:
    """Run the whole fault-injection scenario in `workdir` (logs stay there)."""
    workdir.mkdir(parents=True, exist_ok=True)
    return FaultRun(config, workdir).run()
