"""Scale-out: 1, 2 and 3 workers in one consumer group sharing a 12-partition turns topic,
throughput measured in the same run; the rebalance when a worker joins and when one leaves.

    python bench/scale_out.py [--turns 3000] [--wait-s 0.5] [--out bench/results/scale_out.json]

The scorer is a stand-in that waits per batch (`tests.support.scorers:Slow`, `--wait-s`,
then a trivial verdict), as a remote GPU scorer keeps a worker waiting without burning its
CPU: these machines have two cores, so a CPU-bound scorer would measure the cores, not
the scale-out. No GRM, the reaction rules (no encoder). Every worker is a real `uxmon
serve` on the embedded broker; the ground truth is the scores topic, read by a kafka-python
consumer that shares no code with the service.

Throughput: for each group size, a fresh topic and group; once every worker owns
partitions and the assignment has settled, `--turns` assistant turns (and as many user
turns) are produced at once, and the rate is taken between 20 % and 80 % of the scores
read back (the backlog is there throughout, and start-up and the tail stay out). Worker
CPU seconds over the same span, per event read, give the pipeline's own cost, and so how
many such workers one core can carry. Rebalance: two workers under steady traffic, a third
starts, later one of the three stops (SIGTERM); for each, the time until the group holds
every partition again, and the longest gap in which no score came back.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import uuid
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafka import KafkaConsumer, KafkaProducer  # noqa: E402
from kafka.admin import KafkaAdminClient, NewTopic  # noqa: E402

from stream.broker import EmbeddedBroker  # noqa: E402
from stream.local import LocalWorker, scrape, total  # noqa: E402
from tests.support.services import worker as spawn_worker  # noqa: E402
from tests.support.traffic import conversation, encode  # noqa: E402

PARTITIONS = 12
BATCH_MAX = 32
TICK = 2**-4  # seconds between progress samples (dyadic: exact sums)


class Scores(threading.Thread):
    """Counts the turns scored in the scores topic as they arrive (its reaction and episode
    records aside): (monotonic time, distinct turns) samples, and score records in all."""

    def __init__(self, broker: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.consumer = KafkaConsumer(
            topic,
            bootstrap_servers=broker,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            group_id=None,
        )
        self.turns: set[str] = set()
        self.records = 0  # score records; more than turns means some turn was scored twice
        self.samples: list[tuple[float, int]] = []
        self.done = threading.Event()

    @property
    def count(self) -> int:
        return len(self.turns)

    def run(self) -> None:
        while not self.done.is_set():
            for records in self.consumer.poll(timeout_ms=50).values():
                for record in records:
                    data = json.loads(record.value)
                    if data.get("type") == "score":
                        self.records += 1
                        self.turns.add(data["turn_id"])
            self.samples.append((time.monotonic(), self.count))
        self.consumer.close()

    def when(self, count: int) -> float | None:
        return next((t for t, c in self.samples if c >= count), None)

    def wait(self, count: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.count < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.count} of {count} scores read back in {timeout_s}s")
            time.sleep(TICK)

    def longest_gap(self, start: float, end: float) -> float:
        """The longest span in [start, end] with no new score."""
        gap, last_change, last_count = 0.0, start, None
        for t, c in self.samples:
            if t < start or t > end:
                continue
            if c != last_count:
                gap = max(gap, t - last_change)
                last_change, last_count = t, c
        return max(gap, end - last_change)


def cpu_seconds(worker: LocalWorker) -> float:
    """User + system CPU of the worker process so far (/proc)."""
    assert worker.process is not None
    fields = Path(f"/proc/{worker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def assigned(workers: list[LocalWorker]) -> list[int]:
    return [round(total(scrape(w.url), "uxmon_assigned_partitions")) for w in workers]


def settled(workers: list[LocalWorker], timeout_s: float = 120, hold_s: float = 3.0) -> float:
    """Until every worker owns partitions and together they own all, unchanged for
    `hold_s`; returns when that state began (monotonic)."""
    deadline = time.monotonic() + timeout_s
    since, last = None, None
    while time.monotonic() < deadline:
        now = assigned(workers)
        if sum(now) == PARTITIONS and all(now):
            if now != last:
                since, last = time.monotonic(), now
            elif since is not None and time.monotonic() - since >= hold_s:
                return since
        else:
            since, last = None, None
        time.sleep(0.1)
    raise TimeoutError(f"assignment did not settle: {assigned(workers)}")


class Run:
    def __init__(self, broker: str, workdir: Path, wait_s: float) -> None:
        self.broker = broker
        self.workdir = workdir
        os.environ["UXMON_TEST_SLOW_S"] = str(wait_s)
        os.environ["UXMON_TEST_SLOW_INNER"] = "tests.support.scorers:Keyword"
        self.admin = KafkaAdminClient(bootstrap_servers=broker)
        self.producer = KafkaProducer(bootstrap_servers=broker, acks=1, linger_ms=5)

    def topics(self) -> tuple[str, dict[str, str]]:
        tag = uuid.uuid4().hex[:8]
        names = {"turns_topic": f"turns-{tag}", "scores_topic": f"scores-{tag}"}
        self.admin.create_topics([NewTopic(names["turns_topic"], PARTITIONS, 1)])
        return f"scale-{tag}", names

    def workers(self, group: str, names: dict[str, str], n: int) -> list[LocalWorker]:
        settings: dict[str, Any] = {
            "scorers": "tests.support.scorers:Slow",
            "grm": "",
            "reaction_model": "",
            "partitions": str(PARTITIONS),
            "batch_max": str(BATCH_MAX),
            "dlq_topic": f"dlq-{group}",
            **names,
        }
        return [
            spawn_worker(self.broker, group, self.workdir / f"{group}-{i}", **settings)
            for i in range(n)
        ]

    def send(self, topic: str, first: int, count: int) -> int:
        """Conversations first..first+count-1 (two exchanges each); returns assistant turns."""
        for i in range(first, first + count):
            for event in conversation(i, exchanges=2, prefix="scale"):
                key, value = encode(event)
                self.producer.send(topic, key=key, value=value)
        self.producer.flush()
        return 2 * count

    def throughput(self, n: int, turns: int) -> dict[str, Any]:
        group, names = self.topics()
        scores = Scores(self.broker, names["scores_topic"])
        scores.start()
        with ExitStack() as stack:
            workers = self.workers(group, names, n)
            for w in workers:
                stack.callback(w.stop)
                w.start()
            for w in workers:
                w.wait_ready()
            settled(workers)
            cpu0 = sum(cpu_seconds(w) for w in workers)
            sent = self.send(names["turns_topic"], 0, turns // 2)
            scores.wait(sent, timeout_s=600)
            cpu1 = sum(cpu_seconds(w) for w in workers)
            time.sleep(2)  # anything scored twice would arrive now
            scores.done.set()
            scores.join(5)
        low, high = scores.when(int(0.2 * sent)), scores.when(int(0.8 * sent))
        assert low is not None and high is not None
        rate = 0.6 * sent / (high - low)
        events = 2 * sent  # a user turn per assistant turn
        return {
            "workers": n,
            "assistant_turns": sent,
            "turns_scored": scores.count,
            "score_records": scores.records,  # one per turn: more would be a redelivery
            "turns_per_s": round(rate, 1),
            "worker_cpu_s_per_event": round((cpu1 - cpu0) / events, 6),
            # a batch holds BATCH_MAX events, half of them user turns, and waits once
            "ceiling_turns_per_s": round(
                n * BATCH_MAX / 2 / float(os.environ["UXMON_TEST_SLOW_S"]), 1
            ),
        }

    def rebalance(self, rate: float) -> dict[str, Any]:
        """Two workers under `rate` assistant turns/s; a third joins; then one leaves."""
        group, names = self.topics()
        scores = Scores(self.broker, names["scores_topic"])
        scores.start()
        stop = threading.Event()

        def traffic() -> None:
            i = 0
            while not stop.is_set():
                started = time.monotonic()
                self.send(names["turns_topic"], i, 1)
                i += 1
                time.sleep(max(0.0, 2 / rate - (time.monotonic() - started)))

        with ExitStack() as stack:
            workers = self.workers(group, names, 3)
            for w in workers:
                stack.callback(w.stop)
            first, newcomer = workers[:2], workers[2]
            for w in first:
                w.start()
            for w in first:
                w.wait_ready()
            settled(first)
            feeder = threading.Thread(target=traffic, daemon=True)
            feeder.start()
            stack.callback(feeder.join, 10)
            stack.callback(stop.set)
            time.sleep(10)
            started = time.monotonic()
            newcomer.start()
            newcomer.wait_ready()
            joined_at = time.monotonic()
            done = settled(workers)
            time.sleep(10)
            joined = {
                "start_to_settled_s": round(done - started, 2),
                "start_to_owning_partitions_s": round(joined_at - started, 2),
                "longest_gap_without_scores_s": round(scores.longest_gap(started, done + 5), 2),
            }
            leaving = workers[0]
            stopped = time.monotonic()
            leaving.stop()
            done = settled(workers[1:])
            time.sleep(10)
            left = {
                "sigterm_to_settled_s": round(done - stopped, 2),
                "longest_gap_without_scores_s": round(scores.longest_gap(stopped, done + 5), 2),
            }
            stop.set()
        scores.done.set()
        scores.join(5)
        return {"turns_per_s_offered": rate, "join": joined, "leave": left}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=3000, help="assistant turns per size")
    parser.add_argument("--wait-s", type=float, default=0.5, help="the scorer's wait per batch")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/scale_out.json")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="uxmon-scale-"))
    with EmbeddedBroker(log_path=workdir / "tansu.log") as broker:
        run = Run(broker.address, workdir, args.wait_s)
        sizes = []
        for n in (1, 2, 3):
            sizes.append(run.throughput(n, args.turns))
            print(json.dumps(sizes[-1]), flush=True)
        one = sizes[0]["turns_per_s"]
        rebalance = run.rebalance(rate=0.5 * sizes[1]["turns_per_s"])
        print(json.dumps(rebalance), flush=True)
    cpu = max(s["worker_cpu_s_per_event"] for s in sizes)
    per_worker = one * 2  # events/s one worker reads (a user turn per assistant turn)
    report = {
        "partitions": PARTITIONS,
        "batch_max": BATCH_MAX,
        "scorer_wait_s_per_batch": args.wait_s,
        "sizes": sizes,
        "speedup": {str(s["workers"]): round(s["turns_per_s"] / one, 2) for s in sizes},
        "rebalance": rebalance,
        # A worker's pipeline (parse, fold, publish, commit; not the scorer) at one
        # worker's pace: how many such workers one core carries before CPU, not the
        # scorer, limits them.
        "workers_per_core_at_this_load": round(1 / (cpu * per_worker), 1),
        "where": f"{os.cpu_count()} cores; one run, one machine",
    }
    print("speedup", report["speedup"], "workers per core", report["workers_per_core_at_this_load"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
