"""python -m benchmark.synthetic: write the synthetic corpus, fixtures and traffic."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from benchmark.synthetic import corpus, leakage, report

MAX_LEAKAGE = 0.85


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark.synthetic", description=__doc__)
    parser.add_argument("--out-dir", type=Path, default=Path("benchmark/data"))
    parser.add_argument("--fixtures-dir", type=Path, default=Path("tests/data"))
    parser.add_argument(
        "--traffic-out", type=Path, default=Path("stream/data/sample_traffic.jsonl")
    )
    parser.add_argument("--seed", type=int, default=corpus.DEFAULT_SEED)
    parser.add_argument(
        "--skip-leakage-check",
        action="store_true",
        help="do not train the bag-of-words probe (saves ~20 s)",
    )
    args = parser.parse_args(argv)

    built = corpus.build(args.seed)
    layout = corpus.Layout(args.out_dir, args.fixtures_dir, args.traffic_out)
    for path, n in corpus.write(built, layout).items():
        print(f"wrote {n:>5} lines  {path}")
    print()
    print(report.summary("task1_seed", built.seed))
    print()
    print(report.summary("task1_heldout", built.heldout))
    seed_topics = {r["synthetic_meta"]["topic"] for r in built.seed}
    held_topics = {r["synthetic_meta"]["topic"] for r in built.heldout}
    print(
        f"\ntopics: seed {len(seed_topics)}, held-out {len(held_topics)}, shared "
        f"{len(seed_topics & held_topics)}"
    )
    convs = {e["conversation_id"] for e in built.traffic}
    kinds = Counter(e.get("kind") or e["role"] for e in built.traffic)
    print(f"traffic: {len(built.traffic)} events in {len(convs)} conversations: {dict(kinds)}")
    expected = Counter(
        e["metadata"]["synthetic_expected"]
        for e in built.traffic
        if e["type"] == "turn" and e["role"] == "user"
    )
    print(f"  expected user reactions: {dict(expected)}")
    if args.skip_leakage_check:
        return 0
    print(
        "\nleakage probe (bag-of-words logistic regression, trained on seed, scored on held-out):"
    )
    worst = 0.0
    probes = [leakage.probe(built.seed, built.heldout, with_query=q) for q in (True, False)]
    for p in [*probes, leakage.length_probe(built.seed, built.heldout)]:
        print(
            f"  {p.name:<12} Good-Acc {p.good_acc:.3f}  Bad-Acc {p.bad_acc:.3f}  Avg-Acc "
            f"{p.avg_acc:.3f}"
        )
        worst = max(worst, p.avg_acc)
    print("  Bad-Acc by failure dimension (query+reply probe):")
    for dim, recall in probes[0].bad_recall_by_dimension.items():
        print(f"    {dim:<32} {recall:.2f}")
    if worst > MAX_LEAKAGE:
        print(
            f"\nLEAKAGE: a bag-of-words model reaches Avg-Acc {worst:.3f} > {MAX_LEAKAGE}; "
            "the surface gives labels away, make the data harder.",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
