"""The GRM on an OpenAI-compatible server: the cascade's throughput limit, and its
event→score lag at half of it.

    python bench/grm_server.py [--latency-s 0.25] [--slots 8] [--out bench/results/grm_server.json]

A stub server (tests/support/grm_server.py) answers each verdict after `latency_s`; the
worker keeps at most `slots` calls in flight (UXMON_GRM_CONCURRENCY), as a GPU server
batching that many at once would, so the server side allows `slots / latency_s` verdicts
a second. The worker runs the real UX-Judge on every turn and the built-in GRM, configured
by settings alone (UXMON_GRM_BACKEND=openai), on every turn the budget allows; the budget
is opened wide (every turn uncertain, a rate far above the server's) so the cascade, not
its budget, is what is measured.

1. Capacity: the sample traffic as fast as the worker takes it: assistant turns scored per
   second, and GRM verdicts per second.
2. Half load: the same traffic, stamped as sent, at half that rate: p50 and p99
   event→score from the scores topic, and the share of turns the GRM judged in time.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import load_average  # noqa: E402
from pipeline import dialogues_of, lags, percentile, relabel, send  # noqa: E402

from stream.broker import EmbeddedBroker  # noqa: E402
from stream.commands.demo import sample_traffic  # noqa: E402
from stream.commands.replay import read_events  # noqa: E402
from stream.local import LocalWorker  # noqa: E402
from tests.support.grm_server import Action, serving  # noqa: E402


def judged(worker: LocalWorker) -> float:
    return worker.total("uxmon_turns_scored_total", scorer="ux_judge")


def until_judged(worker: LocalWorker, target: float, timeout_s: float = 900) -> None:
    deadline = time.monotonic() + timeout_s
    while judged(worker) < target:
        if not worker.alive() or time.monotonic() > deadline:
            raise RuntimeError(f"{judged(worker)} of {target} judged:\n{worker.log_tail()}")
        time.sleep(0.25)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency-s", type=float, default=0.25, help="per verdict")
    parser.add_argument("--slots", type=int, default=8, help="verdicts in flight at most")
    parser.add_argument("--batch", type=int, default=32, help="assistant turns per batch")
    parser.add_argument("--out", type=Path, default=Path("bench/results/grm_server.json"))
    args = parser.parse_args()

    pairs = read_events(sample_traffic())
    turns = len(dialogues_of(pairs))
    per_event = turns / len(pairs)
    workdir = Path(tempfile.mkdtemp(prefix="uxmon-bench-grm-"))
    with serving() as (url, stub), EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        stub.default = Action(delay_s=args.latency_s)
        worker = LocalWorker(
            broker.address,
            f"bench-{uuid.uuid4().hex[:6]}",
            workdir,
            scorers="ux_judge",
            grm="grm",
            grm_backend="openai",
            grm_base_url=url,
            grm_model="judge",
            grm_concurrency=str(args.slots),
            grm_threshold="0.5",
            grm_uncertain_margin="1.0",  # every turn is wanted by the GRM
            grm_rate="1000",
            grm_burst="1000",
            grm_max_per_batch=str(args.batch),
            batch_max=str(round(args.batch / per_event)),
            producer_max_batch_size="16384",
        ).start()
        try:
            worker.wait_ready()
            warm = relabel(pairs[:200], "warm-", now=True)
            send(broker.address, "uxmon.turns", warm)
            until_judged(worker, len(dialogues_of(warm)), 300)

            before, verdicts = judged(worker), worker.total("uxmon_grm_verdicts_total")
            started = time.perf_counter()
            send(broker.address, "uxmon.turns", relabel(pairs, "cap-", now=True))
            until_judged(worker, before + turns)
            seconds = time.perf_counter() - started
            verdicts = worker.total("uxmon_grm_verdicts_total") - verdicts
            capacity = {
                "seconds": seconds,
                "turns_per_s": turns / seconds,
                "grm_verdicts_per_s": verdicts / seconds,
                "server_limit_per_s": args.slots / args.latency_s,
            }
            print(
                f"capacity: {capacity['turns_per_s']:.1f} turns/s, "
                f"{capacity['grm_verdicts_per_s']:.1f} GRM verdicts/s "
                f"(server allows {capacity['server_limit_per_s']:.0f}/s)"
            )

            rate = 0.5 * capacity["turns_per_s"] / per_event  # events/s at half capacity
            verdicts = worker.total("uxmon_grm_verdicts_total")
            skipped = worker.total("uxmon_grm_skipped_total")
            send(broker.address, "uxmon.turns", relabel(pairs, "half-", now=False), rate, True)
            lag = lags(broker.address, "uxmon.scores", "half-", turns)
            half = {
                "events_per_s": rate,
                "n": len(lag),
                "p50_s": statistics.median(lag),
                "p99_s": percentile(lag, 0.99),
                "grm_verdicts": worker.total("uxmon_grm_verdicts_total") - verdicts,
                "grm_skipped": worker.total("uxmon_grm_skipped_total") - skipped,
            }
        finally:
            worker.stop()
    print(
        f"half load ({rate:.1f} events/s): p50 {half['p50_s']:.3f}s, p99 {half['p99_s']:.3f}s; "
        f"GRM verdicts {half['grm_verdicts']:.0f}, skipped {half['grm_skipped']:.0f}"
    )
    result = {
        "latency_s": args.latency_s,
        "slots": args.slots,
        "assistant_turns": turns,
        "capacity": capacity,
        "half_load": half,
        "load_average": load_average(),
        "measured_at": datetime.now(UTC).isoformat(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
