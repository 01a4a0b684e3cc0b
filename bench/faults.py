"""Fault injection: a worker group loses no assistant turn and counts each exactly once
while its workers are killed, restarted in turn, and the broker restarts.

    python bench/faults.py [--events 20000] [--kills 5] [--kill-every 20-30] [--quick]

moto S3 + tansu (s3 storage, so the broker restart keeps the log and the group offsets),
a real Prometheus scraping every worker each second, `--workers` `uxmon serve` children in
one consumer group, a steady kafka-python producer. Faults: SIGKILL of a random worker
every `--kill-every` seconds (restarted on the same metrics port), one rolling restart
(SIGTERM one at a time), one broker restart. The run itself: tests/support/faults_run.py.
Exits 1 when an invariant fails; the JSON names which, with the evidence.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.faults_run import QUICK, Config, run_faults  # noqa: E402


def seconds_range(text: str) -> tuple[float, float]:
    """'20-30' → (20.0, 30.0); '25' → (25.0, 25.0)."""
    low, _, high = text.partition("-")
    bounds = (float(low), float(high or low))
    if not 0 < bounds[0] <= bounds[1]:
        raise argparse.ArgumentTypeError(f"expected LOW-HIGH seconds, got {text!r}")
    return bounds


def config_from(args: argparse.Namespace) -> Config:
    """The QUICK size under --quick, then whatever was given explicitly on top."""
    base = QUICK if args.quick else Config()
    given = {
        "events": args.events,
        "workers": args.workers,
        "kill_every": args.kill_every,
        "kills": args.kills,
        "scorer": args.scorer,
        "seed": args.seed,
        "fix_list_offsets": False if args.no_offsets_fix else None,
    }
    return dataclasses.replace(base, **{k: v for k, v in given.items() if v is not None})


def summary(result: dict[str, Any]) -> str:
    t, s, c = result["timings"], result["scores"], result["counters"]
    kinds = [f["kind"] for f in result["faults"]]
    failed = [name for name, ok in result["invariants"].items() if not ok]
    return "\n".join(
        [
            f"{result['traffic']['events_sent']} events in {t['traffic_s']}s "
            f"({t['events_per_s']}/s); run {t['duration_s']}s, caught up "
            f"{t['caught_up_after_traffic_s']}s after the traffic stopped",
            f"faults: {kinds.count('sigkill')} SIGKILLs, {kinds.count('rolling_restart')} "
            f"rolling restart, {kinds.count('broker_restart')} broker restart, "
            f"{kinds.count('crash_restart')} crashes",
            f"assistant turns {s['assistant_turns']}: missing {s['missing']}, "
            f"duplicate score records {s['duplicate_records']}",
            f"counted (durable totals, shown by the workers) {c['shown_by_workers_at_end']:.0f}; "
            f"Prometheus: last {c['prometheus_last']:.0f}, raw samples "
            f"{c['prometheus_samples_reset_rule']:.0f}, drops {c['prometheus_drops']}, "
            f"increase() {c['prometheus_increase']}",
            f"dead letters {result['dead_letters']['count']}, unexpected exits "
            f"{len(result['unexpected_exits'])}; the broker lost "
            f"{result['broker']['acked_not_in_log']} acknowledged events",
            "PASSED" if not failed else f"FAILED: {', '.join(failed)}",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, help="at least this many turn events (20000)")
    parser.add_argument("--workers", type=int, help="workers in the group (3)")
    parser.add_argument("--kill-every", type=seconds_range, help="LOW-HIGH seconds (20-30)")
    parser.add_argument("--kills", type=int, help="SIGKILLs, at least (5)")
    parser.add_argument("--scorer", help="scorer the workers run (tests.support.scorers:Keyword)")
    parser.add_argument("--seed", type=int, help="for the fault schedule and victims")
    parser.add_argument("--quick", action="store_true", help="the small CI-sized run")
    parser.add_argument(
        "--no-offsets-fix",
        action="store_true",
        help="no ListOffsets proxy: see what tansu's S3 engine does to faust recovery",
    )
    parser.add_argument("--workdir", type=Path, help="logs and data (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/faults.json")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    for noisy in ("kafka", "httpx"):  # reconnects while the broker is away, every scrape
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="uxmon-faults-"))
    print(f"workdir {workdir}")
    result = run_faults(config_from(args), workdir)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(summary(result))
    print(f"wrote {args.out}")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
