"""Peak memory of a real `uxmon serve` worker: UX-Judge alone vs UX-Judge + GRM.

    python bench/memory.py [--conversations 36] [--out bench/results/memory.json]

Each configuration runs as its own worker process on the embedded broker (tansu), loads its
models, scores the first `--conversations` conversations of the sample traffic, and is read
from /proc/<pid>/status: VmHWM (peak resident set) and VmRSS, once ready (models loaded)
and once the traffic is scored. The GRM budget is opened wide (every turn sampled, a high
refill rate) so the GRM actually runs on the traffic instead of being skipped; its batches
keep the production cap (`grm_max_per_batch`, and the backend's padded-token cap).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _timing import load_average
from pipeline import Pair, dialogues_of, relabel, send

from stream.broker import EmbeddedBroker
from stream.commands.demo import sample_traffic
from stream.commands.replay import read_events
from stream.local import LocalWorker

# Every turn offered to the GRM, with a budget it never runs out of during the run.
GRM_WIDE_OPEN = {
    "grm_sample_rate": "1.0",
    "grm_rate": "1000",
    "grm_burst": "1000",
}
CONFIGS: dict[str, dict[str, str]] = {
    "ux_judge_only": {"scorers": "ux_judge", "grm": ""},
    "ux_judge_and_grm": {"scorers": "ux_judge", "grm": "grm", **GRM_WIDE_OPEN},
}


def memory_of(pid: int) -> dict[str, float]:
    """VmHWM (peak resident), VmRSS, and RSS split into anonymous memory and file pages
    (mapped weights and libraries, which the kernel can drop and re-read), in MiB."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in {"VmHWM", "VmRSS", "RssAnon", "RssFile"}:
            fields[f"{key}_mib"] = round(int(value.split()[0]) / 1024, 1)
    return fields


def first_conversations(pairs: list[Pair], count: int) -> list[Pair]:
    """Every event of the first `count` conversations of the traffic, in traffic order."""
    chosen: list[bytes | None] = []
    for key, _ in pairs:
        if key not in chosen:
            chosen.append(key)
    keep = set(chosen[:count])
    return [(k, v) for k, v in pairs if k in keep]


def measure(
    broker: str, workdir: Path, name: str, settings: dict[str, str], traffic: list[Pair]
) -> dict[str, Any]:
    prefix = f"mem-{name}-{uuid.uuid4().hex[:6]}-"
    events = relabel(traffic, prefix, now=True)
    turns = len(dialogues_of(events))
    worker = LocalWorker(broker, f"mem-{uuid.uuid4().hex[:6]}", workdir, **settings).start()
    assert worker.process is not None
    pid = worker.process.pid
    try:
        started = time.perf_counter()
        worker.wait_ready()
        ready_s = time.perf_counter() - started
        after_load = memory_of(pid)
        base = worker.total("uxmon_turns_scored_total", scorer="ux_judge")
        started = time.perf_counter()
        send(broker, "uxmon.turns", events)
        worker.wait_for("uxmon_turns_scored_total", base + turns, 1200)
        scoring_s = time.perf_counter() - started
        after_traffic = memory_of(pid)
        grm_verdicts = worker.total("uxmon_grm_verdicts_total")
    finally:
        worker.stop()
    row = {
        "settings": settings,
        "assistant_turns": turns,
        "grm_verdicts": grm_verdicts,
        "seconds_to_ready": round(ready_s, 1),
        "seconds_to_score_traffic": round(scoring_s, 1),
        "after_load": after_load,
        "after_traffic": after_traffic,
    }
    print(
        f"{name:>17}: peak RSS {after_traffic['VmHWM_mib']:7.0f} MiB "
        f"(after load {after_load['VmHWM_mib']:.0f}; RSS now {after_traffic['VmRSS_mib']:.0f}); "
        f"{turns} turns, {grm_verdicts:.0f} GRM verdicts"
    )
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--conversations", type=int, default=36)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("bench/results/memory.json"))
    args = parser.parse_args()

    traffic = first_conversations(read_events(sample_traffic()), args.conversations)
    results: dict[str, Any] = {
        "conversations": args.conversations,
        "events": len(traffic),
        "threads": args.threads,
        "load_average_at_start": load_average(),
    }
    workdir = Path(tempfile.mkdtemp(prefix="uxmon-memory-"))
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        for name, settings in CONFIGS.items():
            results[name] = measure(
                broker.address,
                workdir,
                name,
                {"threads": str(args.threads), "batch_max": "64", **settings},
                traffic,
            )
    both = results["ux_judge_and_grm"]["after_traffic"]["VmHWM_mib"]
    alone = results["ux_judge_only"]["after_traffic"]["VmHWM_mib"]
    results["grm_adds_mib"] = round(both - alone, 1)
    results["load_average_at_end"] = load_average()
    results["measured_at"] = datetime.now(UTC).isoformat()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"GRM adds {results['grm_adds_mib']:.0f} MiB of peak RSS; wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
