"""Pipeline benchmark: scorer-only vs end-to-end throughput, and event→score lag at 50% load.

    python bench/pipeline.py [--scorer ux_judge] [--out bench/results/pipeline.json]

Everything is measured in one run on one machine, so the ratio end-to-end / scorer-only
is meaningful even on a noisy shared host. End-to-end goes through a real broker (the
embedded tansu) and a real `uxmon serve` worker process with the same scorer. Scorer-only
and end-to-end passes alternate (`--repeats` pairs) and the median of the pairs' ratios is
the result: a shared host's load drifts over minutes, and back-to-back passes see the same.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from scorer.registry import create
from stream.broker import EmbeddedBroker
from stream.commands.demo import sample_traffic
from stream.commands.replay import read_events
from stream.conversation import Bounds, ConversationState, Position, Tracking
from stream.events import Limits
from stream.local import LocalWorker
from stream.pipeline import plan_batch
from stream.reactions import Patterns
from stream.records import Record

Pair = tuple[bytes | None, bytes]


def relabel(pairs: list[Pair], prefix: str, now: bool) -> list[Pair]:
    """Each pass new traffic: fresh conversation ids, texts tagged with the pass (so no
    pass reads another's embeddings from the encoder's cache) and, optionally, ts = now."""
    out = []
    for _, value in pairs:
        event = json.loads(value)
        event["conversation_id"] = f"{prefix}{event['conversation_id']}"
        if "text" in event:
            event["text"] = f"{prefix} {event['text']}"
        if now:
            event["ts"] = datetime.now(UTC).isoformat()
        out.append(
            (event["conversation_id"].encode(), json.dumps(event, ensure_ascii=False).encode())
        )
    return out


def dialogues_of(pairs: list[Pair]) -> list[Any]:
    """The dialogues the worker would build, via the same pure step it runs."""
    records = [Record(k, v, Position("bench", 0, i)) for i, (k, v) in enumerate(pairs)]
    states: dict[str, ConversationState] = {}
    plan = plan_batch(
        records,
        lambda c: states.get(c, ConversationState()),
        limits=Limits(),
        now=datetime.now(UTC),
        bounds=Bounds(8, 256),
        tracking=Tracking(Patterns.load()),
    )
    return [item.dialogue for item in plan.to_score]


def scorer_only(scorer: Any, dialogues: list[Any], batch: int) -> dict[str, float]:
    started = time.perf_counter()
    for i in range(0, len(dialogues), batch):
        scorer.score(dialogues[i : i + batch])
    seconds = time.perf_counter() - started
    return {"turns": len(dialogues), "seconds": seconds, "turns_per_s": len(dialogues) / seconds}


def send(broker: str, topic: str, pairs: list[Pair], rate: float = 0, stamp: bool = False) -> None:
    producer = KafkaProducer(bootstrap_servers=broker, acks="all", linger_ms=5)
    started = time.monotonic()
    for i, (key, value) in enumerate(pairs):
        if rate:
            delay = started + i / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        if stamp:
            event = json.loads(value)
            event["ts"] = datetime.now(UTC).isoformat()
            value = json.dumps(event, ensure_ascii=False).encode()
        producer.send(topic, key=key, value=value)
    producer.flush()
    producer.close()


def lags(
    broker: str, topic: str, prefix: str, expected: int, timeout_s: float = 600
) -> list[float]:
    consumer = KafkaConsumer(bootstrap_servers=broker, enable_auto_commit=False)
    parts = consumer.partitions_for_topic(topic) or set()
    consumer.assign([TopicPartition(topic, p) for p in parts])
    consumer.seek_to_beginning()
    out: list[float] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < expected and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            for r in records:
                s = json.loads(r.value)
                # the scores topic also carries reaction and episode records
                if s["type"] == "score" and s["conversation_id"].startswith(prefix):
                    scored = datetime.fromisoformat(s["scored_at"])
                    out.append((scored - datetime.fromisoformat(s["event_ts"])).total_seconds())
    consumer.close()
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scorer", default="ux_judge")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3, help="scorer-only / e2e pairs")
    parser.add_argument("--out", type=Path, default=Path("bench/results/pipeline.json"))
    args = parser.parse_args()

    pairs = read_events(sample_traffic())
    dialogues = dialogues_of(pairs)
    per_event = len(dialogues) / len(pairs)
    print(f"{len(pairs)} events, {len(dialogues)} assistant turns; scorer {args.scorer}")

    scorer = create(args.scorer)
    scorer.load()
    scorer.score(dialogues_of(relabel(pairs[:200], "warm-", now=False))[: args.batch])  # warm-up
    pairs_measured: list[dict[str, Any]] = []

    workdir = Path(tempfile.mkdtemp(prefix="uxmon-bench-"))
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        worker = LocalWorker(
            broker.address,
            f"bench-{uuid.uuid4().hex[:6]}",
            workdir,
            scorers=args.scorer,
            grm="",  # like for like with the scorer-only run: the judge alone
            # batch_max counts events; size it so a batch holds ~`batch` assistant turns,
            # the batch the scorer-only run uses.
            batch_max=str(round(args.batch / per_event)),
            # Production producer batching: the tansu one-record-batches work-around only
            # matters for table recovery, which this run does not exercise.
            producer_max_batch_size="16384",
        ).start()
        try:
            worker.wait_ready()
            warm = relabel(pairs[:200], "warm-", now=True)
            send(broker.address, "uxmon.turns", warm)
            worker.wait_for("uxmon_turns_scored_total", len(dialogues_of(warm)), 300)
            for i in range(args.repeats):
                run = relabel(pairs, f"e2e{i}-", now=True)
                only = scorer_only(scorer, dialogues_of(run), args.batch)
                base = worker.total("uxmon_turns_scored_total")
                started = time.perf_counter()
                send(broker.address, "uxmon.turns", run)
                worker.wait_for("uxmon_turns_scored_total", base + len(dialogues), 900)
                seconds = time.perf_counter() - started
                e2e = {
                    "turns": len(dialogues),
                    "seconds": seconds,
                    "turns_per_s": len(dialogues) / seconds,
                }
                ratio = e2e["turns_per_s"] / only["turns_per_s"]
                pairs_measured.append({"scorer_only": only, "end_to_end": e2e, "ratio": ratio})
                print(
                    f"pair {i + 1}: scorer only {only['turns_per_s']:.1f} turns/s, end to end "
                    f"{e2e['turns_per_s']:.1f} turns/s, ratio {ratio:.1%}"
                )
            median_ratio = statistics.median(p["ratio"] for p in pairs_measured)

            capacity = statistics.median(p["end_to_end"]["turns_per_s"] for p in pairs_measured)
            rate = 0.5 * capacity / per_event  # events/s at half capacity
            lag_pairs = relabel(pairs, "lag-", now=False)
            send(broker.address, "uxmon.turns", lag_pairs, rate=rate, stamp=True)
            lag = lags(broker.address, "uxmon.scores", "lag-", len(dialogues))
        finally:
            worker.stop()

    result = {
        "scorer": args.scorer,
        "batch_max": args.batch,
        "events": len(pairs),
        "assistant_turns": len(dialogues),
        "pairs": pairs_measured,
        "e2e_over_scorer_only": median_ratio,
        "lag_at_half_capacity": {
            "events_per_s": rate,
            "n": len(lag),
            "p50_s": statistics.median(lag),
            "p99_s": percentile(lag, 0.99),
        },
        "measured_at": datetime.now(UTC).isoformat(),
    }
    lag_stats = result["lag_at_half_capacity"]
    print(
        f"e2e / scorer-only = {median_ratio:.1%} (median of {args.repeats}); "
        f"lag at {rate:.1f} events/s: "
        f"p50 {lag_stats['p50_s']:.3f}s, p99 {lag_stats['p99_s']:.3f}s"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
