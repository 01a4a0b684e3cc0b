"""Reaction accuracy and recovery-episode outcomes, live: scripted conversations replayed
through the embedded broker into a real worker (UX-Judge + GRM), read back from the
scores topic.

    python bench/reactions_live.py [--grm grm|""] [--out bench/results/reactions_live.json]

The scripts (tests/support/scripted.py): the labelled reaction cases as three-turn
conversations, replies nobody answers (no_follow_up, from the worker's timer) and recovery
episodes written turn by turn. Timers are shortened so the run ends in about a minute.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stream.broker import EmbeddedBroker  # noqa: E402
from stream.local import LocalWorker  # noqa: E402
from tests.support.scripted import (  # noqa: E402
    all_scripts,
    encode,
    evaluate,
    wait_until_settled,
)
from tests.support.services import produce, read_topic  # noqa: E402

TIMERS = {"follow_up_timeout_s": "6", "episode_timeout_s": "20", "timers_interval_s": "1"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grm", default="grm", help="cascade scorer ('' for none)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/reactions_live.json")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="uxmon-reactions-"))
    tag = uuid.uuid4().hex[:6]
    scripts = all_scripts(datetime.now(UTC) - timedelta(seconds=2), tag)
    events = [e for s in scripts for e in s.events]
    replies = sum(e.get("role") == "assistant" for e in events)
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        worker = LocalWorker(
            broker.address,
            f"bench-{tag}",
            workdir,
            pythonpath=str(ROOT),
            turns_topic=f"turns-{tag}",
            scores_topic=f"scores-{tag}",
            dlq_topic=f"dlq-{tag}",
            grm=args.grm,
            **TIMERS,
        ).start()
        try:
            worker.wait_ready()
            started = time.monotonic()
            produce(broker.address, f"turns-{tag}", map(encode, events))
            wait_until_settled(worker, scripts, 600)
            records = read_topic(broker.address, f"scores-{tag}", replies)
            seconds = time.monotonic() - started
        finally:
            worker.stop()
    report: dict[str, Any] = {
        "scripts": len(scripts),
        "events": len(events),
        "grm": args.grm or None,
        "seconds": round(seconds, 1),
        **evaluate(scripts, records),
    }
    r, e = report["reactions"], report["episodes"]
    print(f"reactions: {r['accuracy']:.1%} of {r['n']} (target 90%)")
    for lang, row in r["by_lang"].items():
        print(f"  {lang}: {row['accuracy']:.1%} of {row['n']}")
    for kind, row in r["by_kind"].items():
        print(f"  {kind:<13} {row['accuracy']:.1%} of {row['n']}")
    print(
        f"episodes: {e['closed']} closed, outcomes {e['outcomes']}; {len(e['errors'])} of "
        f"{e['scripts']} scripts not as expected ({e['written_episodes']} episodes written "
        f"turn by turn, the rest follow their reaction); attempts the judge rated bad: "
        f"{e['attempts_judged_bad']}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}")
    return 0 if r["accuracy"] >= 0.9 and not e["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
