"""Measure the implicit-reaction classifier against labelled conversations.

    python bench/reactions.py [--split all|dev|heldout] [--errors] [--out PATH]

Two sources:

- tests/data/reactions/labelled.jsonl: scripted cases labelled by what a person would call
  the reaction. Its `heldout` split is kept out of pattern development and reported apart.
- the user turns of stream/data/sample_traffic.jsonl. The generator wrote two labels:
  `synthetic_expected` (DESIGN.md's rules applied literally, character-level similarity
  and no continuation rule) and `synthetic_intent` (what the simulated user meant).
  Agreement with both is reported; where they differ, intent is the one to match.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from stream.reactions import Patterns, Reaction, classify

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "reactions" / "labelled.jsonl"
TRAFFIC = ROOT / "stream" / "data" / "sample_traffic.jsonl"
KINDS = [r.value for r in Reaction if r is not Reaction.NO_FOLLOW_UP]


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    previous_user: str | None
    reply: str
    reply_ts: datetime
    next_user: str
    next_ts: datetime
    labels: dict[str, str]  # label source -> expected reaction
    group: str  # split (labelled) or language (traffic)


def labelled_cases(path: Path = LABELLED) -> list[Case]:
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        cases.append(
            Case(
                id=row["id"],
                previous_user=row["previous_user"],
                reply=row["reply"],
                reply_ts=datetime.fromisoformat(row["reply_ts"]),
                next_user=row["next_user"],
                next_ts=datetime.fromisoformat(row["next_ts"]),
                labels={"expected": row["expected"]},
                group=row["split"],
            )
        )
    return cases


def traffic_cases(path: Path = TRAFFIC) -> list[Case]:
    """Each user turn that follows a reply, with the turns before it in its conversation."""
    last_user: dict[str, str] = {}
    last_reply: dict[str, dict[str, Any]] = {}
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") != "turn":
            continue
        cid = event["conversation_id"]
        if event["role"] == "assistant":
            last_reply[cid] = event
            continue
        meta = event.get("metadata", {})
        reply = last_reply.get(cid)
        if reply is not None and meta.get("synthetic_expected", "none") != "none":
            cases.append(
                Case(
                    id=f"{cid}/{event['turn_id']}",
                    previous_user=last_user.get(cid),
                    reply=reply["text"],
                    reply_ts=datetime.fromisoformat(reply["ts"]),
                    next_user=event["text"],
                    next_ts=datetime.fromisoformat(event["ts"]),
                    labels={
                        "synthetic_expected": meta["synthetic_expected"],
                        "synthetic_intent": meta["synthetic_intent"],
                    },
                    group=event.get("locale") or "unknown",
                )
            )
        last_user[cid] = event["text"]
    return cases


def evaluate(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """Accuracy, per-kind recall and precision, and the confusion matrix (expected -> got)."""
    confusion: dict[str, Counter[str]] = {k: Counter() for k in KINDS}
    for expected, got in pairs:
        confusion.setdefault(expected, Counter())[got] += 1
    total = sum(sum(c.values()) for c in confusion.values())
    correct = sum(c[k] for k, c in confusion.items())
    predicted = Counter[str]()
    for row in confusion.values():
        predicted.update(row)
    per_kind = {}
    for kind, row in confusion.items():
        n = sum(row.values())
        per_kind[kind] = {
            "n": n,
            "recall": round(row[kind] / n, 4) if n else None,
            "precision": round(row[kind] / predicted[kind], 4) if predicted[kind] else None,
        }
    return {
        "n": total,
        "accuracy": round(correct / total, 4) if total else None,
        "per_kind": per_kind,
        "confusion": {k: dict(sorted(row.items())) for k, row in confusion.items() if row},
    }


def run(cases: list[Case], patterns: Patterns) -> list[str]:
    return [
        classify(c.previous_user, c.reply, c.reply_ts, c.next_user, c.next_ts, patterns).value
        for c in cases
    ]


def print_report(title: str, report: dict[str, Any]) -> None:
    print(f"\n{title}: accuracy {report['accuracy']:.1%} on {report['n']} cases")
    print(f"  {'kind':<12}{'n':>5}{'recall':>9}{'precision':>11}")
    for kind, row in report["per_kind"].items():
        if row["n"] or row["precision"] is not None:
            recall = f"{row['recall']:.1%}" if row["recall"] is not None else "-"
            precision = f"{row['precision']:.1%}" if row["precision"] is not None else "-"
            print(f"  {kind:<12}{row['n']:>5}{recall:>9}{precision:>11}")
    kinds = [k for k in KINDS if k in report["confusion"] or report["per_kind"][k]["precision"]]
    print("  confusion (rows expected, columns got):")
    print("  " + " " * 12 + "".join(f"{k[:9]:>10}" for k in kinds))
    for kind in kinds:
        row = report["confusion"].get(kind, {})
        print(f"  {kind:<12}" + "".join(f"{row.get(k, 0):>10}" for k in kinds))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=("all", "dev", "heldout"), default="all")
    parser.add_argument("--errors", action="store_true", help="list misclassified labelled cases")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "reactions.json")
    args = parser.parse_args(argv)

    patterns = Patterns.load()
    results: dict[str, Any] = {"labelled": {}, "sample_traffic": {}}

    labelled = labelled_cases()
    got = run(labelled, patterns)
    splits = ("dev", "heldout") if args.split == "all" else (args.split,)
    chosen = [(c, g) for c, g in zip(labelled, got, strict=True) if c.group in splits]
    for name, subset in [("all", chosen)] + [
        (s, [(c, g) for c, g in chosen if c.group == s]) for s in splits
    ]:
        if args.split != "all" and name == "all":
            continue
        report = evaluate((c.labels["expected"], g) for c, g in subset)
        results["labelled"][name] = report
        print_report(f"labelled [{name}]", report)
    if args.errors:
        print("\nmisclassified labelled cases:")
        for case, g in chosen:
            if case.labels["expected"] != g:
                print(f"  {case.id} [{case.group}] expected {case.labels['expected']}, got {g}")

    if args.split == "all":
        traffic = traffic_cases()
        got_traffic = run(traffic, patterns)
        for source in ("synthetic_expected", "synthetic_intent"):
            report = evaluate(
                (c.labels[source], g) for c, g in zip(traffic, got_traffic, strict=True)
            )
            results["sample_traffic"][source] = report
            print_report(f"sample traffic vs {source}", report)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
