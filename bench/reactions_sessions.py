"""Reaction accuracy on the independent writers' sessions, offline: each session folded
through the worker's own state step (stream/conversation.py), time passing included, no
broker. Per writer, per language and per expected reaction, with Wilson intervals and
beside the majority baseline; the confusions and the hard cases apart.

    python bench/reactions_sessions.py [--sessions DIR] [--out FILE.json]

The same sessions replay through the real broker and a worker in bench/reactions_live.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmark.sessions import Session, load_sessions, problems  # noqa: E402
from benchmark.tasks import wilson  # noqa: E402
from stream.conversation import (  # noqa: E402
    Bounds,
    ConversationState,
    Position,
    ReactionSeen,
    Tracking,
    apply_event,
    expire,
)
from stream.events import Limits, parse_event  # noqa: E402
from stream.reactions import Patterns  # noqa: E402

START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
FOLLOW_UP_S = 1800.0  # the service's default session timeout (UXMON_FOLLOW_UP_TIMEOUT_S)


def detected(session: Session, tracking: Tracking) -> dict[str, str]:
    """Assistant turn id -> the reaction the worker's fold reports for it."""
    state, seen = ConversationState(), {}
    events = session.events(START)
    for offset, event in enumerate(events):
        at = datetime.fromisoformat(event["ts"])
        parsed = parse_event(json.dumps(event).encode(), Limits(), at).event  # as the worker does
        applied = apply_event(
            state,
            parsed,
            Position("sessions", 0, offset),
            now_s=parsed.ts.timestamp(),
            bounds=Bounds(8, 4000),
            tracking=tracking,
        )
        state = applied.state
        seen.update(
            {s.turn_id: str(s.reaction) for s in applied.signals if isinstance(s, ReactionSeen)}
        )
    end = datetime.fromisoformat(events[-1]["ts"]) + timedelta(seconds=FOLLOW_UP_S + 1)
    _, late = expire(state, end, follow_up_s=FOLLOW_UP_S, episode_s=10 * FOLLOW_UP_S)
    seen.update({s.turn_id: str(s.reaction) for s in late if isinstance(s, ReactionSeen)})
    return seen


def ci(hits: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson interval (benchmark.tasks.wilson), rounded for the report."""
    interval = wilson(hits, n)
    return (round(interval.low, 4), round(interval.high, 4))


def table(rows: list[tuple[str, str, str]]) -> dict[str, Any]:
    """rows: (group, expected, got) -> accuracy per group with its interval."""
    out: dict[str, Any] = {}
    for group in sorted({g for g, _, _ in rows}):
        mine = [(e, g) for k, e, g in rows if k == group]
        hits = sum(e == g for e, g in mine)
        out[group] = {
            "n": len(mine),
            "accuracy": round(hits / len(mine), 4),
            "ci": ci(hits, len(mine)),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/reactions_sessions.json")
    args = parser.parse_args(argv)

    sessions = load_sessions(args.sessions)
    found = problems(sessions)
    if found:
        print("\n".join(found[:20]), file=sys.stderr)
        return 2
    tracking = Tracking(Patterns.load())
    rows = []  # (writer, lang, expected, got, hard)
    for session in sessions:
        got = detected(session, tracking)
        hard = session.hard_turns()
        for turn, want in session.expected().items():
            rows.append((session.writer, session.lang, want, got.get(turn, "none"), turn in hard))
    hits = sum(want == got for _, _, want, got, _ in rows)
    majority, majority_n = Counter(want for _, _, want, _, _ in rows).most_common(1)[0]
    report = {
        "sessions": len(sessions),
        "assistant_turns": len(rows),
        "detector": "rules (stream/reactions.py, stream/patterns)",
        "accuracy": round(hits / len(rows), 4),
        "ci": ci(hits, len(rows)),
        "majority_baseline": {"reaction": majority, "accuracy": round(majority_n / len(rows), 4)},
        "by_writer": table([(w, e, g) for w, _, e, g, _ in rows]),
        "by_lang": table([(lang, e, g) for _, lang, e, g, _ in rows]),
        "by_kind": table([(e, e, g) for _, _, e, g, _ in rows]),
        "by_kind_and_lang": table([(f"{e}/{lang}", e, g) for _, lang, e, g, _ in rows]),
        "hard": table([("hard" if h else "plain", e, g) for _, _, e, g, h in rows]),
        "confusions": dict(
            Counter(f"{e} -> {g}" for _, _, e, g, _ in rows if e != g).most_common(25)
        ),
    }
    print(
        f"reactions: {report['accuracy']:.1%} {report['ci']} of {len(rows)} (majority "
        f"'{majority}' {report['majority_baseline']['accuracy']:.1%})"
    )
    for name in ("by_lang", "by_writer", "by_kind"):
        for group, row in report[name].items():
            print(f"  {group:<14} {row['accuracy']:.1%} of {row['n']}")
    for confusion, n in list(report["confusions"].items())[:10]:
        print(f"  {n:4d}  {confusion}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
