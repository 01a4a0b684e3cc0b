"""Is the UX-Judge's P(liked) calibrated on topics it never saw?

    python bench/judge_calibration.py [--data benchmark/data/task1_seed.jsonl] [--repeats 3]
                                      [--fresh-per-label 2000] [--parts cv,fresh]
                                      [--out bench/results/judge_calibration.json]

Part `cv` is seed-only cross-validation (how the training method was chosen); part `fresh`
measures the shipped head (or `--head DIR`) on a large fresh draw of held-out records (how
precisely its ECE is known).

Part cv.
Outer folds hold out whole topics (`synthetic_meta.topic` in this project's synthetic
records; records without one are their own group, as in a team's export), so every score is
made on topics absent from training, as live traffic will be. Within each outer training
part two ways of training and calibrating a head are compared:

- `single-split`: one MLP trained on 80 % of the examples, early-stopped on the other 20 %,
  temperature and threshold fitted on those 20 % (what `uxmon judge train` did before);
- `cross-fit`: `scorer.training.fit_head`, what `uxmon judge train` does now: one MLP per
  stratified fold, the head is their ensemble, calibration fitted on out-of-fold logits.

Each repeat reshuffles the topic folds. Reported per method: ECE of the pooled outer
predictions (every example scored once per repeat) and per outer fold, AUROC, Good/Bad/Avg-
Acc at the calibrated threshold, and the pooled reliability table of the first repeat.
The held-out file is never read: this is how the method was chosen without looking at it.

Part fresh. ECE over 10 bins is biased upwards on small samples: a perfectly calibrated
scorer evaluated on 800 records still shows about 0.03 from sampling noise alone, so the
committed 800-record held-out file cannot tell 0.045 from 0.055. This part draws
`--fresh-per-label` new records per label from the generator's held-out topic banks
(topics disjoint from the seed corpus; a new random seed; duplicates dropped), scores them
and the committed held-out file with the shipped head, and reports for each: the metrics,
a bootstrap 95 % interval of ECE, and the noise floor (the ECE a perfectly calibrated
scorer with the same scores would show: labels drawn as Bernoulli(p), 1,000 times).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from scorer.calibration import (
    auroc,
    balanced_threshold,
    ece,
    fit_temperature,
    judge_metrics,
    sigmoid,
)
from scorer.heads import DEFAULT_HEAD
from scorer.runtime import one_thread
from scorer.training import (
    TrainConfig,
    _fit,
    _standardisation,
    fit_head,
    stratified_folds,
)

SEED = Path("benchmark/data/task1_seed.jsonl")
HELDOUT = Path("benchmark/data/task1_heldout.jsonl")
FRESH_SEED_OFFSET = 7000  # the committed files use DEFAULT_SEED and DEFAULT_SEED + 1000
OUTER_FOLDS = 5
Predictor = Callable[[np.ndarray], np.ndarray]


def read_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def featurized(records: list[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(features, labels, topic of each record) — features from the bundled encoder."""
    from benchmark.adapters import task1_item
    from scorer.encoder import E5Encoder
    from scorer.ux_judge import featurize

    items = [task1_item(r) for r in records]
    topics = [str((r.get("synthetic_meta") or {}).get("topic") or r["cid"]) for r in records]
    encoder = E5Encoder()
    encoder.load()
    features = featurize([item.dialogue for item in items], encoder, progress=True)
    labels = np.asarray([item.label for item in items], dtype=np.int64)
    return features, labels, np.asarray(topics)


def fresh_records(per_label: int) -> list[dict[str, Any]]:
    """A new draw from the held-out topic banks, without duplicate (query, reply) pairs."""
    from benchmark.synthetic.corpus import DEFAULT_SEED
    from benchmark.synthetic.task1 import build_task1

    seen, out = set(), []
    for record in build_task1("heldout", per_label, DEFAULT_SEED + FRESH_SEED_OFFSET, 12):
        key = json.dumps([record["source_query"], record["agent_response_full"]])
        if key not in seen:
            seen.add(key)
            out.append(record)
    return out


def topic_folds(topics: np.ndarray, repeat: int) -> np.ndarray:
    rng = np.random.default_rng(1000 + repeat)
    unique = np.unique(topics)
    rng.shuffle(unique)
    fold_of = {topic: i % OUTER_FOLDS for i, topic in enumerate(unique)}
    return np.asarray([fold_of[t] for t in topics])


def single_split(x: np.ndarray, y: np.ndarray, cfg: TrainConfig) -> tuple[Predictor, float]:
    import torch

    held = np.asarray(stratified_folds(y.tolist(), OUTER_FOLDS, cfg.seed)) == 0
    mean, std = _standardisation(x[~held])
    xs = (torch.from_numpy(x) - mean) / std
    with one_thread():
        net, _, held_logits = _fit(
            xs[torch.from_numpy(~held)],
            y[~held],
            xs[torch.from_numpy(held)],
            y[held],
            cfg,
            "",
            False,
        )
    temperature = fit_temperature(held_logits, y[held])
    threshold = balanced_threshold(sigmoid(held_logits / temperature), y[held])

    def predict(rows: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            z = net((torch.from_numpy(rows) - mean) / std).squeeze(-1).double().numpy()
        return sigmoid(z / temperature)

    return predict, threshold


def cross_fit(x: np.ndarray, y: np.ndarray, cfg: TrainConfig) -> tuple[Predictor, float]:
    fitted = fit_head(x, y.tolist(), cfg)
    return fitted.probabilities, fitted.threshold


METHODS = {"single-split": single_split, "cross-fit": cross_fit}


def reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict[str, Any]]:
    which = np.minimum((p * bins).astype(np.int64), bins - 1)
    rows = []
    for b in range(bins):
        members = which == b
        if members.any():
            rows.append(
                {
                    "bin": f"{b / bins:.1f}-{(b + 1) / bins:.1f}",
                    "n": int(members.sum()),
                    "mean_p": round(float(p[members].mean()), 3),
                    "liked": round(float(y[members].mean()), 3),
                }
            )
    return rows


def cross_validation(path: Path, repeats: int) -> dict[str, Any]:
    x, y, topics = featurized(read_records(path))
    results = {m: evaluate(m, x, y, topics, repeats) for m in METHODS}
    print(
        f"\n{len(y)} records, {len(np.unique(topics))} topics, {OUTER_FOLDS} topic folds "
        f"x {repeats} repeats (pooled = every record scored once per repeat)"
    )
    print(
        f"{'method':14s} {'pooled ECE':>14s} {'fold ECE':>14s} {'AUROC':>7s} "
        f"{'Good':>6s} {'Bad':>6s} {'Avg':>6s}"
    )
    for method, r in results.items():
        s = r["pooled"]
        print(
            f"{method:14s} {s['ece']['mean']:.3f} ± {s['ece']['sd']:.3f}   "
            f"{s['fold_ece']['mean']:.3f} ± {s['fold_ece']['sd']:.3f} "
            f"{s['auroc']['mean']:7.3f} {s['good_acc']['mean']:6.1%} "
            f"{s['bad_acc']['mean']:6.1%} {s['avg_acc']['mean']:6.1%}"
        )
    for method, r in results.items():
        print(f"\nreliability, {method} (repeat 0): bin  n  mean P  share liked")
        for row in r["reliability_repeat0"]:
            print(f"  {row['bin']}  {row['n']:5d}  {row['mean_p']:.3f}  {row['liked']:.3f}")
    return {
        "data": str(path),
        "n": int(y.size),
        "topics": int(np.unique(topics).size),
        "outer_folds": OUTER_FOLDS,
        "repeats": repeats,
        "methods": results,
    }


def evaluate(
    method: str, x: np.ndarray, y: np.ndarray, topics: np.ndarray, repeats: int
) -> dict[str, Any]:
    cfg = TrainConfig()
    pooled, per_fold, table = [], [], []
    for repeat in range(repeats):
        folds = topic_folds(topics, repeat)
        p, cut = np.empty(y.size), np.empty(y.size)
        for k in range(OUTER_FOLDS):
            train, test = folds != k, folds == k
            predict, threshold = METHODS[method](x[train], y[train], cfg)
            p[test], cut[test] = predict(x[test]), threshold
            per_fold.append(judge_metrics(p[test], y[test], threshold).ece)
        good = float(np.mean(p[y == 1] >= cut[y == 1]))
        bad = float(np.mean(p[y == 0] < cut[y == 0]))
        pooled.append(
            {
                "ece": ece(p, y),
                "auroc": auroc(p, y),
                "good_acc": good,
                "bad_acc": bad,
                "avg_acc": (good + bad) / 2,
            }
        )
        if repeat == 0:
            table = reliability(p, y)
        print(f"  {method} repeat {repeat}: pooled ECE {pooled[-1]['ece']:.3f}", flush=True)
    summary = {
        key: {
            "mean": float(np.mean([r[key] for r in pooled])),
            "sd": float(np.std([r[key] for r in pooled])),
        }
        for key in pooled[0]
    }
    summary["fold_ece"] = {"mean": float(np.mean(per_fold)), "sd": float(np.std(per_fold))}
    return {"pooled": summary, "per_repeat": pooled, "reliability_repeat0": table}


def head_on(head_dir: Path, records: list[dict[str, Any]], name: str) -> dict[str, Any]:
    import torch

    from scorer.heads import load_head

    head = load_head(head_dir)
    x, y, _ = featurized(records)
    with torch.inference_mode():
        z = head.logits(torch.from_numpy(x)).double().numpy()
    p = sigmoid(z / head.temperature)
    rng = np.random.default_rng(0)
    boot = [ece(p[i], y[i]) for i in (rng.integers(0, y.size, y.size) for _ in range(1000))]
    floor = [ece(p, (rng.random(p.size) < p).astype(np.int64)) for _ in range(1000)]
    metrics = judge_metrics(p, y, head.threshold).as_dict()
    print(
        f"{name}: n {y.size}  Good {metrics['good_acc']:.1%}  Bad {metrics['bad_acc']:.1%}  "
        f"Avg {metrics['avg_acc']:.1%}  AUROC {metrics['auroc']:.3f}  ECE {metrics['ece']:.3f} "
        f"(95 % CI {np.percentile(boot, 2.5):.3f}-{np.percentile(boot, 97.5):.3f}; "
        f"a perfectly calibrated scorer would show {np.mean(floor):.3f}, "
        f"95th percentile {np.percentile(floor, 95):.3f})",
        flush=True,
    )
    return {
        "head_version": head.version,
        "n": int(y.size),
        "metrics": metrics,
        "ece_ci95": [float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))],
        "ece_noise_floor": {"mean": float(np.mean(floor)), "p95": float(np.percentile(floor, 95))},
        "reliability": reliability(p, y),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SEED)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--fresh-per-label", type=int, default=2000)
    parser.add_argument("--parts", default="cv,fresh", help="comma-separated: cv, fresh")
    parser.add_argument("--head", type=Path, default=DEFAULT_HEAD, help="head measured by fresh")
    parser.add_argument("--out", type=Path, default=Path("bench/results/judge_calibration.json"))
    args = parser.parse_args()

    started = time.perf_counter()
    parts = set(args.parts.split(","))
    report: dict[str, Any] = {
        "bench": "judge_calibration",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    if "cv" in parts:
        report["cv"] = cross_validation(args.data, args.repeats)
    if "fresh" in parts:
        fresh = fresh_records(args.fresh_per_label)
        report["fresh"] = {
            "draw_seed_offset": FRESH_SEED_OFFSET,
            "committed_heldout": head_on(args.head, read_records(HELDOUT), "committed held-out"),
            "fresh_heldout": head_on(args.head, fresh, "fresh held-out draw"),
        }
    report["seconds"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
