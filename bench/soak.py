"""Soak: distinct conversations through one worker at a steady rate, with TTL eviction.

    python bench/soak.py [--conversations 1000000] [--rate 300] [--out FILE.json]

One real `uxmon serve` on the embedded broker, with a trivial stand-in scorer
(`tests.support.scorers:Keyword`) and the reaction rules, so what is measured is the
worker itself: its state, its timers, its eviction. Each conversation is a question and a
reply and nothing after, so each reply times out as `no_follow_up`
(`--follow-up-s`) and each conversation is evicted once idle past `--ttl-s`; the state
should then hold about rate x TTL conversations whatever the total.

Every 5 s: conversations sent, the worker's RSS (/proc), the conversations it holds
(`uxmon_conversations_in_state`), its lag, and the worker's and the broker's share of a
core (/proc) with the broker's RSS: over 1M on the embedded broker, the broker limits
the run. The no-follow-up latency is each reaction's publish time (the scores topic's
record timestamp, read by kafka-python) minus the time its reply ran out (reply ts +
follow-up timeout). Reported: the RSS curve, its growth from the sample at 10,000
conversations to the end, the state size against rate x TTL, memory per conversation
(RSS at the plateau less RSS before any traffic, over the most conversations held: an
upper bound, since it includes the worker's own warm-up), the latency percentiles, and
whether every conversation got its reaction.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kafka import KafkaConsumer, KafkaProducer  # noqa: E402

from stream.broker import EmbeddedBroker  # noqa: E402
from stream.local import LocalWorker, total  # noqa: E402
from stream.metrics import CONSUMER_LAG  # noqa: E402
from tests.support.services import worker as spawn_worker  # noqa: E402
from tests.support.traffic import encode, turn_event  # noqa: E402

SAMPLE_S = 5.0
WARM_UP = 10_000  # conversations: the RSS growth is measured from here


def _cpu_s(pid: int) -> float:
    """CPU seconds `pid` has used (user + system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


class Reactions(threading.Thread):
    """Reads the scores topic: each no_follow_up reaction's publish time, by conversation."""

    def __init__(self, broker: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.consumer = KafkaConsumer(
            topic, bootstrap_servers=broker, auto_offset_reset="earliest", group_id=None
        )
        self.published: dict[str, float] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            for records in self.consumer.poll(timeout_ms=200).values():
                for record in records:
                    data = json.loads(record.value)
                    if data.get("reaction") == "no_follow_up":
                        self.published[data["conversation_id"]] = record.timestamp / 1000
        self.consumer.close()


def soak(args: argparse.Namespace) -> dict[str, Any]:
    tag = uuid.uuid4().hex[:6]
    turns, scores = f"soak-turns-{tag}", f"soak-scores-{tag}"
    replied: dict[str, float] = {}  # conversation -> its reply's event time
    samples: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, EmbeddedBroker() as broker:
        worker: LocalWorker = spawn_worker(
            broker.address,
            f"soak-{tag}",
            Path(tmp),
            scorers="tests.support.scorers:Keyword",
            grm="",
            reaction_model="",
            turns_topic=turns,
            scores_topic=scores,
            dlq_topic=f"soak-dlq-{tag}",
            follow_up_timeout_s=str(args.follow_up_s),
            conversation_ttl_s=str(args.ttl_s),
            eviction_interval_s="5",
            timers_interval_s="1",
            producer_max_batch_size="16384",  # faust's default: no restart here to recover
            state_store=args.store,
        ).start()
        try:
            worker.wait_ready()
            assert worker.process is not None
            pid = worker.process.pid
            assert broker.process is not None
            broker_pid = broker.process.pid
            cpu_before = {"worker": _cpu_s(pid), "broker": _cpu_s(broker_pid)}
            cpu_at = time.monotonic()
            reactions = Reactions(broker.address, scores)
            reactions.start()
            producer = KafkaProducer(bootstrap_servers=broker.address, linger_ms=20)
            started = time.monotonic()
            next_sample = started
            sent = 0

            def send(event: dict[str, Any]) -> None:
                key, value = encode(event)
                producer.send(turns, key=key, value=value)

            while sent < args.conversations or len(reactions.published) < sent:
                now_m = time.monotonic()
                due = min(args.conversations, int((now_m - started) * args.rate))
                while sent < due:
                    cid, now = f"c{tag}-{sent}", datetime.now(UTC)
                    send(turn_event(cid, "q", "user", now, "Where is it?"))
                    send(turn_event(cid, "a", "assistant", now, "Here."))
                    replied[cid] = now.timestamp()
                    sent += 1
                if now_m >= next_sample:
                    metrics = worker.samples()
                    cpu = {"worker": _cpu_s(pid), "broker": _cpu_s(broker_pid)}
                    # share of one core since the last sample: which process limits the run
                    spent = max(now_m - cpu_at, 1e-3)
                    share = {k: round((cpu[k] - cpu_before[k]) / spent, 2) for k in cpu}
                    cpu_before, cpu_at = cpu, now_m
                    samples.append(
                        {
                            "t_s": round(now_m - started, 1),
                            "sent": sent,
                            "rss_mib": round(_rss_mib(pid), 1),
                            "in_state": total(metrics, "uxmon_conversations_in_state"),
                            "lag": total(metrics, CONSUMER_LAG),
                            "no_follow_up": len(reactions.published),
                            "worker_cpu": share["worker"],
                            "broker_cpu": share["broker"],
                            "broker_rss_mib": round(_rss_mib(broker_pid), 1),
                            "state_disk_mib": _disk_mib(Path(tmp) / "data"),
                        }
                    )
                    print(json.dumps(samples[-1]), flush=True)
                    next_sample += SAMPLE_S
                if now_m - started > args.conversations / args.rate + args.drain_s:
                    break  # some reaction never came: reported below
                time.sleep(0.01)
            producer.flush()
            producer.close()
            reactions.done.set()
            reactions.join(5)
        finally:
            worker.stop()
    return _summary(args, samples, replied, reactions.published)


def _disk_mib(folder: Path) -> float:
    """What the worker's data directory (the table on disk, with RocksDB) takes."""
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):  # RocksDB removes files as it compacts
            total += path.stat().st_size if path.is_file() else 0
    return round(total / 2**20, 1)


def _summary(
    args: argparse.Namespace,
    samples: list[dict[str, Any]],
    replied: dict[str, float],
    published: dict[str, float],
) -> dict[str, Any]:
    latencies = sorted(published[c] - (replied[c] + args.follow_up_s) for c in published)
    warm = next(s for s in samples if s["sent"] >= min(WARM_UP, args.conversations))
    steady = [s for s in samples if s["t_s"] >= args.ttl_s + 10 and s["sent"] < args.conversations]
    in_state = [s["in_state"] for s in steady]
    plateau_rss = max(s["rss_mib"] for s in steady) if steady else None
    return {
        "conversations": args.conversations,
        "rate_per_s": args.rate,
        "ttl_s": args.ttl_s,
        "store": args.store,
        "state_disk_mib_max": max(s.get("state_disk_mib", 0.0) for s in samples),
        "follow_up_s": args.follow_up_s,
        "rss_mib": {
            "at_warm_up": warm["rss_mib"],
            "max": max(s["rss_mib"] for s in samples),
            "end": samples[-1]["rss_mib"],
            "growth_from_warm_up": round(max(s["rss_mib"] for s in samples) - warm["rss_mib"], 1),
        },
        "state": {
            "expected": round(args.rate * args.ttl_s),
            "steady_median": statistics.median(in_state) if in_state else None,
            "steady_max": max(in_state) if in_state else None,
            "mib_per_1000": round(1000 * (plateau_rss - samples[0]["rss_mib"]) / max(in_state), 2)
            if steady and plateau_rss is not None
            else None,
        },
        "no_follow_up": {
            "reactions": len(published),
            "missing": len(replied) - len(published),
            "latency_p50_s": round(latencies[len(latencies) // 2], 2) if latencies else None,
            "latency_p99_s": round(latencies[int(0.99 * (len(latencies) - 1))], 2)
            if latencies
            else None,
            "latency_max_s": round(latencies[-1], 2) if latencies else None,
        },
        "max_lag": max(s["lag"] for s in samples),
        "cpu_share_median": {
            who: statistics.median(s[f"{who}_cpu"] for s in samples[1:] or samples)
            for who in ("worker", "broker")
        },
        "broker_rss_mib_max": max(s["broker_rss_mib"] for s in samples),
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=1_000_000)
    parser.add_argument("--rate", type=float, default=300.0, help="conversations per second")
    parser.add_argument("--ttl-s", type=float, default=60.0)
    parser.add_argument("--follow-up-s", type=float, default=20.0)
    parser.add_argument("--drain-s", type=float, default=120.0, help="wait for the last ones")
    parser.add_argument("--store", choices=["rocksdb", "memory"], default="rocksdb")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "soak.json")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = soak(args)
    print(json.dumps({k: v for k, v in result.items() if k != "samples"}, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
