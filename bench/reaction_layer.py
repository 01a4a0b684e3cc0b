"""What the learned reaction layer adds to a batch, per user message: the pre-pass and the
model in the fold (encoder excluded), and the encoder batch (included).

    python bench/reaction_layer.py [--batch 32] [--repeats 5] [--out FILE.json]

The bundled sample traffic is cut into batches of `--batch` records (the worker's
`batch_max`) and folded batch after batch, states carried over as the table would, three
ways: the rules (`plan_batch`, the worker without the layer); the layer with the texts
embedded beforehand (pre-pass `parse_records` + `follow_up_texts` + a dict lookup, then
the fold asking the model); the layer as the worker runs it (the same pre-pass with the
real encoder's batch, then the fold, and the judge scoring the batch's assistant turns
after it, so a reply the judge scored in an earlier batch is a cache hit). The encoder is
the UX-Judge's, as in the worker, and the judge's own time is measured too, for scale. Each
batch's time is the best of `--repeats` passes (the
machine is shared; the minimum is the signal), divided by the user messages that got a
reaction in it. The issue's target: at most 5 ms p99 per user message, encoder excluded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from _timing import load_average  # noqa: E402

from stream.commands.demo import sample_traffic  # noqa: E402
from stream.commands.replay import read_events  # noqa: E402
from stream.conversation import (  # noqa: E402
    Bounds,
    ConversationState,
    Learned,
    Position,
    ReactionSeen,
    Tracking,
)
from stream.events import Limits  # noqa: E402
from stream.pipeline import follow_up_texts, parse_records, plan_batch  # noqa: E402
from stream.reaction_layer import FollowUpTexts, ReactionLayer  # noqa: E402
from stream.reactions import Patterns, Reaction  # noqa: E402
from stream.records import Record  # noqa: E402

LIMITS, BOUNDS = Limits(), Bounds()
TRACKING = Tracking(Patterns.load())


def batches(size: int) -> list[list[Record]]:
    pairs = read_events(sample_traffic())
    records = [Record(k, v, Position("bench", 0, i)) for i, (k, v) in enumerate(pairs)]
    return [records[i : i + size] for i in range(0, len(records), size)]


Folded = tuple[list[Reaction], dict[str, ConversationState]]
Fold = Callable[[Sequence[Record], Callable[[str], ConversationState]], Folded]


def run(fold: Fold, work: list[list[Record]]) -> tuple[list[float], list[list[Reaction]]]:
    """Seconds per batch and the reactions of each, states carried from batch to batch."""
    table: dict[str, ConversationState] = {}
    seconds, reactions = [], []
    for records in work:
        started = time.perf_counter()
        seen, states = fold(records, lambda c: table.get(c, ConversationState()))
        seconds.append(time.perf_counter() - started)
        reactions.append(seen)
        table.update(states)
    return seconds, reactions


def _fold(records: Sequence[Record], load: Any, **extra: Any) -> Folded:
    now = datetime.now(UTC)
    plan = plan_batch(
        records, load, limits=LIMITS, now=now, bounds=BOUNDS, tracking=TRACKING, **extra
    )
    return [s.reaction for _, s in plan.signals if isinstance(s, ReactionSeen)], plan.states


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def best(passes: list[list[float]]) -> list[float]:
    return [min(column) for column in zip(*passes, strict=True)]


def per_message(seconds: list[float], reactions: list[list[Reaction]]) -> list[float]:
    return [s / len(r) for s, r in zip(seconds, reactions, strict=True) if r]


def stats_ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(1000 * statistics.median(values), 3),
        "p99_ms": round(1000 * percentile(values, 0.99), 3),
        "max_ms": round(1000 * max(values), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/reaction_layer.json")
    args = parser.parse_args()

    from scorer.registry import create

    work = batches(args.batch)
    judge = create("ux_judge")
    judge.load()
    layer = ReactionLayer.for_scorers(None, [judge])
    layer.load()
    assert layer.model is not None
    model = layer.model

    # Every text the layer will ask for, embedded once beforehand: "encoder excluded".
    messages: list[str] = []
    replies: list[str] = []
    table: dict[str, ConversationState] = {}
    for records in work:
        parsed = parse_records(records, lambda p: -1, LIMITS, datetime.now(UTC))
        texts = follow_up_texts(parsed, lambda c: table.get(c, ConversationState()), BOUNDS)
        messages += texts.messages
        replies += texts.replies
        table.update(_fold(records, lambda c: table.get(c, ConversationState()))[1])
    vectors = layer.embed(
        FollowUpTexts(list(dict.fromkeys(messages)), list(dict.fromkeys(replies)))
    )

    def rules(records: Sequence[Record], load: Any) -> Folded:
        return _fold(records, load)

    def model_no_encoder(records: Sequence[Record], load: Any) -> Folded:
        now = datetime.now(UTC)
        parsed = parse_records(records, lambda p: -1, LIMITS, now)
        needed = follow_up_texts(parsed, load, BOUNDS)
        learned = Learned(
            model,
            {t: vectors.messages[t] for t in needed.messages},
            {t: vectors.replies[t] for t in needed.replies},
        )
        return _fold(records, load, pre_parsed=parsed, learned=learned)

    def model_with_encoder(records: Sequence[Record], load: Any) -> Folded:
        now = datetime.now(UTC)
        parsed = parse_records(records, lambda p: -1, LIMITS, now)
        learned = layer.embed(follow_up_texts(parsed, load, BOUNDS))
        return _fold(records, load, pre_parsed=parsed, learned=learned)

    timed: dict[str, list[list[float]]] = {"rules": [], "model": []}
    reactions: dict[str, list[list[Reaction]]] = {}
    for _ in range(args.repeats):  # alternate, so both see the same drift in load
        for name, fold in (("rules", rules), ("model", model_no_encoder)):
            seconds, seen = run(fold, work)
            timed[name].append(seconds)
            reactions[name] = seen
    # In the worker's order: each batch's reaction pre-pass and fold (timed as the layer's
    # cost), then the judge scoring the batch's assistant turns (timed apart). The cache
    # starts empty, so a reply is embedded by the judge's scoring of an earlier batch, or
    # by the pre-pass when its follow-up comes in the same batch, as in the worker.
    judge.encoder.clear_cache()
    encoder_seconds, seen, judge_seconds = [], [], []
    table.clear()
    for records in work:
        load = lambda c: table.get(c, ConversationState())  # noqa: E731
        started = time.perf_counter()
        reacted, _ = model_with_encoder(records, load)
        encoder_seconds.append(time.perf_counter() - started)
        seen.append(reacted)
        plan = plan_batch(
            records, load, limits=LIMITS, now=datetime.now(UTC), bounds=BOUNDS, tracking=TRACKING
        )
        table.update(plan.states)
        started = time.perf_counter()
        judge.score([item.dialogue for item in plan.to_score])
        judge_seconds.append(time.perf_counter() - started)
    # Embedded per batch rather than all at once: other length buckets, other low bits
    # (bf16), and now and then another verdict on a near tie.
    batch_flips = sum(
        a != b
        for ra, rb in zip(seen, reactions["model"], strict=True)
        for a, b in zip(ra, rb, strict=True)
    )

    rules_s, model_s = best(timed["rules"]), best(timed["model"])
    added = [m - r for m, r in zip(model_s, rules_s, strict=True)]
    with_encoder = [e - r for e, r in zip(encoder_seconds, rules_s, strict=True)]
    n_msgs = sum(len(r) for r in reactions["rules"])
    changed = sum(
        a != b
        for ra, rb in zip(reactions["rules"], reactions["model"], strict=True)
        for a, b in zip(ra, rb, strict=True)
    )
    report = {
        "batch_max": args.batch,
        "batches": len(work),
        "events": sum(len(b) for b in work),
        "user_messages_with_reaction": n_msgs,
        "texts_embedded": len(vectors.messages) + len(vectors.replies),
        "reactions_changed_by_model": changed,
        "reactions_differing_when_embedded_per_batch": batch_flips,
        "repeats": args.repeats,
        "per_user_message": {
            "rules_fold": stats_ms(per_message(rules_s, reactions["rules"])),
            "added_encoder_excluded": stats_ms(per_message(added, reactions["rules"])),
            "added_encoder_included": stats_ms(per_message(with_encoder, reactions["rules"])),
        },
        "per_batch": {
            "rules_fold": stats_ms(rules_s),
            "model_fold_encoder_excluded": stats_ms(model_s),
            "model_fold_encoder_included": stats_ms(encoder_seconds),
            "ux_judge_scoring": stats_ms(judge_seconds),
        },
        "ratio_total_time": {
            "encoder_excluded_over_rules": round(sum(model_s) / sum(rules_s), 3),
            "encoder_included_over_rules": round(sum(encoder_seconds) / sum(rules_s), 3),
            "added_encoder_included_over_ux_judge": round(
                (sum(encoder_seconds) - sum(rules_s)) / sum(judge_seconds), 3
            ),
        },
        "target": "added p99 per user message, encoder excluded, <= 5 ms",
        "load_average": load_average(),
        "measured_at": datetime.now(UTC).isoformat(),
    }
    pm = report["per_user_message"]
    print(json.dumps(pm, indent=1))
    print(json.dumps(report["ratio_total_time"]))
    print(f"{changed} of {n_msgs} reactions changed by the model")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    ok = pm["added_encoder_excluded"]["p99_ms"] <= 5.0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
