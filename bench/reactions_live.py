"""Reaction accuracy and recovery-episode outcomes, live: conversations replayed through
the embedded broker into a real worker (UX-Judge + GRM), read back from the scores topic.

    python bench/reactions_live.py [--grm grm|""] [--reaction-model DIR|""] [--sessions DIR]
                                   [--out FILE.json]

Default: this project's scripts (tests/support/scripted.py): the labelled reaction cases
as three-turn conversations, replies nobody answers (no_follow_up, from the worker's
timer) and recovery episodes written turn by turn; timers are shortened so the run ends in
about a minute. `--sessions`: the independent writers' sessions (benchmark/sessions.py) on
their own timing, with the service's default timers: each session is placed so that it
ended more than the follow-up timeout ago, all are produced before the worker starts, and
the worker's timer then gives the trailing replies their no_follow_up.
`--reaction-model ""`: the rules alone (the default: the worker's, the bundled learned
model; stream/data/reaction_model.json names the writers it was trained on).
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

from benchmark.sessions import load_sessions  # noqa: E402
from stream.broker import EmbeddedBroker  # noqa: E402
from stream.local import LocalWorker  # noqa: E402
from tests.support.scripted import (  # noqa: E402
    Script,
    all_scripts,
    encode,
    evaluate,
    of_type,
    wait_until_settled,
)
from tests.support.services import produce, read_topic  # noqa: E402

TIMERS = {"follow_up_timeout_s": "6", "episode_timeout_s": "20", "timers_interval_s": "1"}
FOLLOW_UP_S = 1800.0  # the service's default (UXMON_FOLLOW_UP_TIMEOUT_S), used for sessions
SESSIONS = ROOT / "benchmark/data/sessions"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grm", default="grm", help="cascade scorer ('' for none)")
    parser.add_argument("--sessions", type=Path, nargs="?", const=SESSIONS, default=None)
    parser.add_argument("--reaction-model", default=None, help="UXMON_REACTION_MODEL")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    name = "reactions_sessions_live" if args.sessions else "reactions_live"
    out = args.out or ROOT / f"bench/results/{name}.json"

    workdir = Path(tempfile.mkdtemp(prefix="uxmon-reactions-"))
    tag = uuid.uuid4().hex[:6]
    if args.sessions:
        scripts, writers, timers = session_scripts(args.sessions), True, {"timers_interval_s": "1"}
    else:
        scripts, writers = all_scripts(datetime.now(UTC) - timedelta(seconds=2), tag), False
        timers = TIMERS
    if args.reaction_model is not None:
        timers = {**timers, "reaction_model": args.reaction_model}
    events = [e for s in scripts for e in s.events]
    replies = sum(e.get("role") == "assistant" for e in events)
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        if writers:  # on the broker before the worker starts: see the docstring
            produce(broker.address, f"turns-{tag}", map(encode, events))
        worker = LocalWorker(
            broker.address,
            f"bench-{tag}",
            workdir,
            pythonpath=str(ROOT),
            turns_topic=f"turns-{tag}",
            scores_topic=f"scores-{tag}",
            dlq_topic=f"dlq-{tag}",
            grm=args.grm,
            **timers,
        ).start()
        try:
            worker.wait_ready()
            started = time.monotonic()
            if not writers:
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
        "reaction_model": "bundled" if args.reaction_model is None else args.reaction_model,
        "seconds": round(seconds, 1),
        **evaluate(scripts, records),
    }
    r, e = report["reactions"], report["episodes"]
    if writers:  # no outcome was written for these: episodes are what the reactions made
        r["by_writer"] = by_writer(scripts, records)
        e.pop("errors")
        if args.reaction_model != "":
            report["in_sample_writers"] = in_sample(args.reaction_model, r["by_writer"])
    print(f"reactions: {r['accuracy']:.1%} of {r['n']} (target 90%)")
    for name, rows in (("language", r["by_lang"]), ("expected", r["by_kind"])):
        for key, row in rows.items():
            print(f"  {name} {key:<13} {row['accuracy']:.1%} of {row['n']}")
    for writer, row in r.get("by_writer", {}).items():
        print(f"  writer {writer:<13} {row['accuracy']:.1%} of {row['n']}")
    print(f"episodes: {e['closed']} closed, outcomes {e['outcomes']}")
    if not writers:
        print(
            f"  {len(e['errors'])} of {e['scripts']} scripts not as expected "
            f"({e['written_episodes']} episodes written turn by turn, the rest follow their "
            f"reaction); attempts the judge rated bad: {e['attempts_judged_bad']}"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {out}")
    return 0 if r["accuracy"] >= 0.9 and not e.get("errors") else 1


def session_scripts(folder: Path) -> list[Script]:
    """The writers' sessions as scripts, each ending FOLLOW_UP_S + a minute before now."""
    now = datetime.now(UTC)
    scripts = []
    for s in load_sessions(folder):
        start = now - timedelta(seconds=s.duration_s() + FOLLOW_UP_S + 60)
        scripts.append(Script(s.id, s.lang, s.events(start), s.expected(), writer=s.writer))
    return scripts


def in_sample(directory: str | None, writers: dict[str, Any]) -> list[str]:
    """The writers of this run the learned model was trained on: figures over them are
    in-sample, not evidence of how it does on traffic it has not seen."""
    from stream.reaction_model import META_FILE, default_dir

    meta = json.loads((Path(directory or default_dir()) / META_FILE).read_text(encoding="utf-8"))
    return sorted(set(writers) & set(meta.get("training_writers", ())))


def by_writer(scripts: list[Script], records: list[dict[str, Any]]) -> dict[str, Any]:
    seen = {
        (r["conversation_id"], r["turn_id"]): r["reaction"] for r in of_type(records, "reaction")
    }
    tally: dict[str, list[int]] = {}
    for script in scripts:
        row = tally.setdefault(script.writer, [0, 0])  # type: ignore[attr-defined]
        for turn, want in script.reactions.items():
            row[0] += seen.get((script.cid, turn)) == want
            row[1] += 1
    return {w: {"n": n, "accuracy": round(h / n, 4)} for w, (h, n) in sorted(tally.items())}


if __name__ == "__main__":
    sys.exit(main())
