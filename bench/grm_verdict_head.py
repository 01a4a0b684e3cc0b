"""What the trained verdict head costs: its load time and a verdict's latency with and
without it, measured in one run on the same dialogues (alternating, best of N).

    python bench/grm_verdict_head.py [--reps 3] [--out bench/results/grm_verdict_head.json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from _timing import timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--n", type=int, default=24, help="dialogues per timed batch")
    parser.add_argument("--out", type=Path, default=Path("bench/results/grm_verdict_head.json"))
    args = parser.parse_args()

    from benchmark import writers
    from scorer.grm import GRM
    from scorer.runtime import Runtime
    from scorer.verdict_head import DEFAULT_VERDICT_HEAD

    records = writers.load_task1()
    step = max(1, len(records) // args.n)
    dialogues = [r.item.dialogue for r in records[::step][: args.n]]
    runtime = Runtime(threads=args.threads)
    base = GRM(runtime=runtime, verdict_head=False)
    base.load()
    adapted = GRM(runtime=runtime)
    backend = adapted._backend  # the head's own cost: applied on top of a loaded model
    backend.load()
    started = time.perf_counter()
    backend.use_verdict_head(DEFAULT_VERDICT_HEAD)  # type: ignore[attr-defined]
    head_load_s = time.perf_counter() - started
    adapted.load()  # templates; the backend is already loaded (load() is idempotent enough)

    pairs = []
    for _ in range(args.reps):  # alternate, so both see the same host load
        t_base = timed(lambda: base.score(dialogues), 1)
        t_head = timed(lambda: adapted.score(dialogues), 1)
        pairs.append((t_base, t_head))
    best_base = min(p[0] for p in pairs)
    best_head = min(p[1] for p in pairs)
    result = {
        "dialogues": len(dialogues),
        "threads": args.threads,
        "head_load_seconds": round(head_load_s, 4),
        "base_seconds_per_verdict": round(best_base / len(dialogues), 4),
        "head_seconds_per_verdict": round(best_head / len(dialogues), 4),
        "head_over_base": round(best_head / best_base, 4),
        "pairs": [[round(a, 3), round(b, 3)] for a, b in pairs],
        "version": adapted.version,
    }
    print(json.dumps(result, indent=2))
    args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
