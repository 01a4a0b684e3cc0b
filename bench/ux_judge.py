"""Measure the UX-Judge: encoder throughput and efficiency, naive vs product path, int8.

    python bench/ux_judge.py [--threads 2] [--reps 3] [--quick] [--out bench/results/ux_judge.json]

Everything is measured in one run, so ratios are meaningful on a noisy shared host:

1. Matmul peak (bf16 and fp32) of the encoder's own FFN linear, measured here, beside the
   figures STACK.md states.
2. Encoder throughput at exact token lengths x batch sizes (bf16, the product dtype; fp32
   and int8 at the largest batch), with FLOPs counted per sequence (see `encoder_flops`).
3. Turns/s on a realistic mix of held-out dialogues: the naive path (fp32, batch 1, every
   input padded to the encoder's 512-token window) vs the product path (`score()` as the
   worker calls it: bf16, batches of 32, length buckets), with fp32-bucketed and int8 in
   between, measured round-robin.
4. Accuracy cost of int8 dynamic quantization of the encoder's Linear layers on the 800
   held-out records (Good-Acc / Bad-Acc / Avg-Acc / AUROC, bf16 vs int8 vs fp32).
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from _timing import (
    STACK_BF16_PEAK_GFLOPS,
    STACK_FP32_PEAK_GFLOPS,
    load_average,
    measure_peak,
    timed,
)

HELDOUT = Path("tests/data/synthetic_task1.jsonl")
PARTS = ("grid", "paths", "accuracy")
WORKER_BATCH = 32  # assistant turns per score() call, as bench/pipeline.py sizes the worker


def encoder_flops(config: Any, length: int) -> dict[str, int]:
    """Multiply-adds x 2 of one sequence of `length` tokens through the encoder layers.

    Per layer: the Q, K, V and output projections (4 x 2·L·d²), attention scores Q·Kᵀ and
    the weighted sum of values (2 x 2·L²·d over all heads), and the FFN (2 x 2·L·d·d_ff).
    Excluded (each well under 1% here): embedding lookup, layer norms, softmax, GELU,
    residual adds, mean pooling, and the UX-Judge head (a few thousand FLOPs per turn).
    """
    d = int(config.hidden_size)
    ff = int(config.intermediate_size)
    layers = int(config.num_hidden_layers)
    projections = 8 * length * d * d
    attention = 4 * length * length * d
    ffn = 4 * length * d * ff
    return {
        "linear": layers * (projections + ffn),
        "attention": layers * attention,
        "total": layers * (projections + ffn + attention),
    }


class PaddedTo:
    """An encoder model that pads every batch to `width` tokens before running and cuts
    the outputs back: the scorer's own code path without length bucketing."""

    def __init__(self, model: Any, width: int, pad_id: int) -> None:
        self._model = model
        self._width = width
        self._pad_id = pad_id

    def __getattr__(self, name: str) -> Any:  # config, dtype, ...: the wrapped model's
        return getattr(self._model, name)

    def __call__(
        self, *, input_ids: Any, attention_mask: Any, output_hidden_states: bool
    ) -> SimpleNamespace:
        import torch.nn.functional as F

        width = input_ids.shape[1]
        extra = self._width - width
        out = self._model(
            input_ids=F.pad(input_ids, (0, extra), value=self._pad_id),
            attention_mask=F.pad(attention_mask, (0, extra), value=0),
            output_hidden_states=output_hidden_states,
        )
        hidden = out.hidden_states
        return SimpleNamespace(
            last_hidden_state=out.last_hidden_state[:, :width],
            hidden_states=None if hidden is None else tuple(h[:, :width] for h in hidden),
        )


def build_judge(threads: int, dtype: str, max_batch: int = WORKER_BATCH) -> Any:
    from scorer.registry import create
    from scorer.runtime import Runtime

    judge = create("ux_judge", runtime=Runtime(threads=threads, dtype=dtype, max_batch=max_batch))
    judge.load()
    judge.encoder.cache_size = 0  # the bench repeats its inputs: time forwards, not lookups
    return judge


def compiled_judge(threads: int) -> Any:
    """A bf16 UX-Judge whose encoder runs under torch.compile (inductor, frozen weights,
    dynamic shapes); compiled here by a one-row and a several-row forward (torch
    specialises size-1 dimensions), so the timed calls reuse the kernels."""
    import torch

    judge = build_judge(threads, "bfloat16")
    encoder = judge.encoder
    encoder._model = torch.compile(encoder._model, dynamic=True, options={"freezing": True})
    for rows in ([[encoder._cls, encoder._sep]], [[encoder._cls, 5, 6, encoder._sep]] * 3):
        run_forward(encoder, rows)
    return judge


def quantized_judge(threads: int) -> Any:
    """A UX-Judge whose encoder Linear layers are int8 dynamic-quantized (fp32 elsewhere;
    the head stays as shipped)."""
    import torch
    from torch.ao.quantization import quantize_dynamic

    judge = build_judge(threads, "float32")
    encoder = judge.encoder
    encoder._model = quantize_dynamic(encoder._model, {torch.nn.Linear}, dtype=torch.qint8)
    return judge


def token_pool(encoder: Any, dialogues: Sequence[Any], need: int) -> list[int]:
    """A stream of real token ids (replies of the held-out data, mixed zh/en) to cut inputs
    of exact lengths from."""
    pool: list[int] = []
    for ids in encoder.tokenize([d.reply for d in dialogues]):
        pool.extend(ids)
        if len(pool) >= need:
            break
    while len(pool) < need:
        pool = pool + pool
    return pool


def rows_of_length(encoder: Any, pool: list[int], length: int, count: int) -> list[list[int]]:
    """`count` distinct rows of exactly `length` tokens, start and end specials included."""
    step = max(1, (len(pool) - length) // max(count, 1))
    return [
        [encoder._cls, *pool[i * step : i * step + length - 2], encoder._sep] for i in range(count)
    ]


def round_robin(methods: Mapping[str, Callable[[], Any]], reps: int) -> dict[str, float]:
    """Best time of each method over `reps` rounds; interleaving spreads other processes'
    load evenly over the methods compared."""
    best = dict.fromkeys(methods, float("inf"))
    for _ in range(max(reps, 1)):
        for name, fn in methods.items():
            best[name] = min(best[name], timed(fn, 1))
    return best


def run_forward(encoder: Any, rows: list[list[int]]) -> None:
    import torch

    with torch.inference_mode():
        encoder._forward(rows, None)


def encoder_grid(
    judges: dict[str, Any], pool: list[int], lengths: list[int], batches: list[int], reps: int
) -> dict[str, Any]:
    """Throughput of one forward (model + mean pooling) at exact lengths x batch sizes: bf16
    at every batch size, the other dtypes at the largest. The cells of one length are timed
    round-robin, so the dtypes compared see the same background load."""
    grid: dict[str, Any] = {}
    for length in lengths:
        cells = [("bfloat16", b) for b in batches]
        cells += [(kind, max(batches)) for kind in judges if kind != "bfloat16"]
        calls = {}
        for kind, batch in cells:
            encoder = judges[kind].encoder
            rows = rows_of_length(encoder, pool, length, batch)

            forward = functools.partial(run_forward, encoder, rows)
            forward()  # warm-up: oneDNN picks and caches kernels per shape
            calls[f"{kind}/{length}/{batch}"] = forward
        best = round_robin(calls, reps)
        for (kind, batch), (key, seconds) in zip(cells, best.items(), strict=True):
            flops = encoder_flops(judges[kind].encoder._model.config, length)
            grid[key] = {
                "seconds": round(seconds, 4),
                "seq_per_s": round(batch / seconds, 2),
                "gflop_per_seq": round(flops["total"] / 1e9, 3),
                "attention_share_of_flops": round(flops["attention"] / flops["total"], 3),
                "gflops": round(flops["total"] * batch / seconds / 1e9, 1),
            }
    return grid


def compiled_cell(encoder: Any, pool: list[int], batch: int, reps: int) -> dict[str, Any]:
    """The encoder at batch x 256 tokens under torch.compile (dynamic shapes, inductor with
    frozen weights), timed after its compile, beside the eager forward in the same run."""
    import torch

    eager = encoder._model
    rows = rows_of_length(encoder, pool, 256, batch)
    compiled = torch.compile(eager, dynamic=True, options={"freezing": True})

    def forward_with(model: Any) -> None:
        encoder._model = model
        run_forward(encoder, rows)

    began = time.perf_counter()
    try:
        forward_with(compiled)
        compile_s = time.perf_counter() - began
        times = round_robin(
            {
                "compiled": functools.partial(forward_with, compiled),
                "eager": functools.partial(forward_with, eager),
            },
            reps,
        )
    finally:
        encoder._model = eager
    best, eager_s = times["compiled"], times["eager"]
    flops = encoder_flops(eager.config, 256)["total"] * batch
    return {
        "seconds": round(best, 4),
        "gflops": round(flops / best / 1e9, 1),
        "compile_seconds": round(compile_s, 1),
        "speedup_over_eager_same_run": round(eager_s / best, 2),
    }


def add_efficiency(grid: dict[str, Any], peaks: dict[str, float]) -> None:
    """Share of the STACK.md peak and of the measured peak of each cell's dtype (int8 is
    held against the bf16 peaks: same FLOPs, and bf16 is what it competes with)."""
    print(
        f"\n{'dtype':>8} {'tokens':>6} {'batch':>5} {'seq/s':>8} {'GFLOP/s':>8} "
        f"{'%STACK':>7} {'%meas':>6}"
    )
    for key, cell in grid.items():
        kind, length, batch = key.split("/")
        fp32 = kind == "float32"
        stack = STACK_FP32_PEAK_GFLOPS if fp32 else STACK_BF16_PEAK_GFLOPS
        measured = peaks["float32"] if fp32 else peaks["bfloat16"]
        cell["share_of_stack_peak"] = round(cell["gflops"] / stack, 3)
        cell["share_of_measured_peak"] = round(cell["gflops"] / measured, 3)
        print(
            f"{kind:>8} {length:>6} {batch:>5} {cell['seq_per_s']:8.2f} {cell['gflops']:8.1f} "
            f"{cell['share_of_stack_peak']:7.0%} {cell['share_of_measured_peak']:6.0%}"
        )


def own_shapes_bound(
    threads: int, config: Any, batch: int, length: int, reps: int = 20
) -> dict[str, Any]:
    """The fastest this encoder could run at `batch` x `length` if every matmul it does ran
    at the speed measured here for that very shape and nothing else cost any time.

    Per layer: Q, K, V and output projections (rows x d -> d), the FFN's two linears
    (d -> d_ff, d_ff -> d), and attention at its own shape (scaled_dot_product_attention,
    [batch, heads, length, d / heads]). The FFN-shape peak is the best case of one shape;
    attention with 32-dim heads runs several times slower per FLOP on these CPUs, so the
    model's own mix has a lower ceiling than any single linear.
    """
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    d, ff = int(config.hidden_size), int(config.intermediate_size)
    heads, layers = int(config.num_attention_heads), int(config.num_hidden_layers)
    rows = batch * length
    linears = {"projection": (d, d, 4), "ffn_in": (d, ff, 1), "ffn_out": (ff, d, 1)}
    rates: dict[str, float] = {}
    seconds = 0.0
    for name, (fan_in, fan_out, count) in linears.items():
        rates[name] = measure_peak(threads, "bfloat16", rows, fan_in, fan_out, reps=reps)
        seconds += count * 2 * rows * fan_in * fan_out / (rates[name] * 1e9)
    q, k, v = (torch.randn(batch, heads, length, d // heads, dtype=torch.bfloat16) for _ in "qkv")
    with torch.inference_mode():
        F.scaled_dot_product_attention(q, k, v)
        attention_s = timed(lambda: F.scaled_dot_product_attention(q, k, v), reps)
    attention_flops = 4 * batch * length * length * d
    rates["attention"] = attention_flops / attention_s / 1e9
    seconds = layers * (seconds + attention_s)
    total = encoder_flops(config, length)["total"] * batch
    return {
        "shape": [batch, length],
        "gflops_by_shape": {k: round(v) for k, v in rates.items()},
        "bound_seconds": round(seconds, 4),
        "bound_gflops": round(total / seconds / 1e9, 1),
    }


def measure_peaks(threads: int, rows: int, d: int, ff: int) -> dict[str, float]:
    """bf16 and fp32 peaks on the encoder's FFN shape, and bf16 on the GRM's (the shape
    bench/grm.py measures), best of 30 calls each."""
    return {
        "bfloat16": measure_peak(threads, "bfloat16", rows, d, ff, reps=30),
        "float32": measure_peak(threads, "float32", rows, d, ff, reps=30),
        "bfloat16_grm_shape": measure_peak(threads, "bfloat16", reps=30),
    }


def held_out() -> tuple[list[Any], list[int]]:
    from benchmark.uxbench import load_task1

    items = load_task1(str(HELDOUT))
    return [i.dialogue for i in items], [int(i.label) for i in items]


def balanced(dialogues: list[Any], labels: list[int], n: int) -> tuple[list[Any], list[int]]:
    """The first n/2 liked and n/2 disliked records, in file order."""
    liked = [i for i, y in enumerate(labels) if y == 1][: n // 2]
    disliked = [i for i, y in enumerate(labels) if y == 0][: n - n // 2]
    keep = sorted(liked + disliked)
    return [dialogues[i] for i in keep], [labels[i] for i in keep]


def score_all(judge: Any, dialogues: Sequence[Any]) -> list[Any]:
    """Score in worker-sized batches, as the worker calls `score()`."""
    out: list[Any] = []
    for lo in range(0, len(dialogues), WORKER_BATCH):
        out.extend(judge.score(dialogues[lo : lo + WORKER_BATCH]))
    return out


def mix_lengths(encoder: Any, dialogues: Sequence[Any]) -> dict[str, Any]:
    """Token lengths the encoder sees for the sample (context and reply inputs), and the
    FLOPs they need at their real lengths vs padded to the full window."""
    from scorer.ux_judge import represent

    inputs = represent(dialogues, encoder)
    lengths = sorted(len(ids) + 2 for x in inputs for ids in (x.context_ids, x.reply_ids))
    config = encoder._model.config
    real = sum(encoder_flops(config, n)["total"] for n in lengths)
    padded = len(lengths) * encoder_flops(config, encoder.max_tokens)["total"]
    return {
        "inputs": len(lengths),
        "tokens_p10_p50_p90_max": [
            lengths[int(q * (len(lengths) - 1))] for q in (0.1, 0.5, 0.9, 1.0)
        ],
        "mean_tokens": round(sum(lengths) / len(lengths), 1),
        "gflop_at_real_lengths": round(real / 1e9, 1),
        "gflop_padded_to_window": round(padded / 1e9, 1),
    }


def naive_vs_product(judges: dict[str, Any], mix: list[Any], reps: int) -> dict[str, Any]:
    """turns/s of each path on the same dialogues, timed round-robin."""
    paths = {
        "naive_fp32_batch1_padded512": judges["naive"],
        "fp32_bucketed_batch32": judges["float32"],
        "int8_bucketed_batch32": judges["int8"],
        "product_bf16_bucketed_batch32": judges["bfloat16"],
    }
    if "compiled" in judges:
        paths["bf16_bucketed_batch32_compiled"] = judges["compiled"]
    outputs = {name: score_all(judge, mix) for name, judge in paths.items()}  # + warm-up
    best = round_robin(
        {name: functools.partial(score_all, j, mix) for name, j in paths.items()}, reps
    )
    product = best["product_bf16_bucketed_batch32"]
    rows = {
        name: {
            "seconds": round(seconds, 3),
            "turns_per_s": round(len(mix) / seconds, 2),
            "product_speedup_over_this": round(seconds / product, 2),
        }
        for name, seconds in best.items()
    }
    for name, row in rows.items():
        print(
            f"{name:>30}: {row['turns_per_s']:7.2f} turns/s  "
            f"(product is {row['product_speedup_over_this']:.2f}x this)"
        )
    return {
        "turns_per_s": rows,
        # The naive path must do the same work: same scores as fp32 with buckets.
        "naive_vs_fp32_bucketed": agreement(
            outputs["fp32_bucketed_batch32"], outputs["naive_fp32_batch1_padded512"]
        ),
        "bf16_vs_fp32_bucketed": agreement(
            outputs["fp32_bucketed_batch32"], outputs["product_bf16_bucketed_batch32"]
        ),
    }


def accuracy(labels: list[int], scores: Sequence[Any]) -> dict[str, float]:
    from benchmark.metrics import auroc, avg_acc, bad_acc, good_acc

    predictions = [1 if str(s.verdict) == "good" else 0 for s in scores]
    probabilities = [s.p_satisfied for s in scores]
    return {
        "good_acc": round(good_acc(labels, predictions), 4),
        "bad_acc": round(bad_acc(labels, predictions), 4),
        "avg_acc": round(avg_acc(labels, predictions), 4),
        "auroc": round(auroc(labels, probabilities), 4),
    }


def agreement(reference: Sequence[Any], other: Sequence[Any]) -> dict[str, float]:
    pairs = list(zip(reference, other, strict=True))
    same = sum(str(a.verdict) == str(b.verdict) for a, b in pairs)
    diffs = [abs(a.p_satisfied - b.p_satisfied) for a, b in pairs]
    return {
        "verdict_agreement": round(same / len(pairs), 4),
        "mean_abs_p_diff": round(sum(diffs) / len(diffs), 5),
        "max_abs_p_diff": round(max(diffs), 5),
    }


def accuracy_by_dtype(
    judges: dict[str, Any], dialogues: list[Any], labels: list[int]
) -> dict[str, Any]:
    """Task-1 metrics of each dtype at the shipped head's threshold, same records."""
    out: dict[str, Any] = {}
    scored = {}
    for kind in ("bfloat16", "int8", "float32"):
        began = time.perf_counter()
        scored[kind] = score_all(judges[kind], dialogues)
        seconds = time.perf_counter() - began
        out[kind] = {
            **accuracy(labels, scored[kind]),
            "n": len(dialogues),
            "turns_per_s_in_this_pass": round(len(dialogues) / seconds, 2),
        }
        a = out[kind]
        print(
            f"{kind:>9}: Good {a['good_acc']:.3f}  Bad {a['bad_acc']:.3f}  "
            f"Avg {a['avg_acc']:.3f}  AUROC {a['auroc']:.4f}"
        )
    out["int8_vs_bfloat16"] = agreement(scored["bfloat16"], scored["int8"])
    out["int8_vs_float32"] = agreement(scored["float32"], scored["int8"])
    out["bfloat16_vs_float32"] = agreement(scored["float32"], scored["bfloat16"])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 256, 512])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument(
        "--mix", type=int, default=32, help="held-out dialogues in the naive-vs-product mix"
    )
    parser.add_argument(
        "--accuracy-n", type=int, default=0, help="held-out records for int8 accuracy (0 = all)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        help="what to measure; the other parts' results are kept from --out if it exists",
    )
    parser.add_argument("--quick", action="store_true", help="1 rep, smaller samples")
    parser.add_argument(
        "--compiled",
        action="store_true",
        help="also time the encoder under torch.compile (inductor, frozen weights): at 256 "
        "tokens in the grid, and on the realistic mix beside the product path",
    )
    parser.add_argument("--out", type=Path, default=Path("bench/results/ux_judge.json"))
    args = parser.parse_args()
    if args.quick:
        args.reps, args.mix, args.accuracy_n = 1, 16, 200

    import torch

    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    results: dict[str, Any] = {
        **previous,
        "threads": args.threads,
        "reps": args.reps,
        "torch": torch.__version__,
        "load_average_at_start": load_average(),
    }
    judges = {
        "bfloat16": build_judge(args.threads, "bfloat16"),
        "float32": build_judge(args.threads, "float32"),
        "int8": quantized_judge(args.threads),
    }
    encoder = judges["bfloat16"].encoder
    config = encoder._model.config
    d, ff = int(config.hidden_size), int(config.intermediate_size)
    rows = max(args.batches) * 256
    peaks_at_start = measure_peaks(args.threads, rows, d, ff)
    bound_at_start = own_shapes_bound(args.threads, config, max(args.batches), 256)

    dialogues, labels = held_out()
    if "grid" in args.parts:
        pool = token_pool(encoder, dialogues, 4 * max(args.lengths) * max(args.batches))
        grid = encoder_grid(judges, pool, args.lengths, args.batches, args.reps)
    if "paths" in args.parts:
        paths(results, judges, dialogues, args)
    if "accuracy" in args.parts:
        if args.accuracy_n:
            dialogues, labels = balanced(dialogues, labels, args.accuracy_n)
        print(f"\naccuracy on {len(dialogues)} held-out records (threshold of the shipped head):")
        results["accuracy"] = accuracy_by_dtype(judges, dialogues, labels)

    if "grid" not in args.parts:
        return write(results, args, started)
    # Efficiency against the best peak seen at the start or the end of the run: a peak
    # measured during a burst of someone else's load would flatter every cell.
    peaks_at_end = measure_peaks(args.threads, rows, d, ff)
    peaks = {k: max(peaks_at_start[k], peaks_at_end[k]) for k in peaks_at_start}
    results["peak_gflops"] = {
        "stack_md": {"bfloat16": STACK_BF16_PEAK_GFLOPS, "float32": STACK_FP32_PEAK_GFLOPS},
        "measured_at_start": {k: round(v) for k, v in peaks_at_start.items()},
        "measured_at_end": {k: round(v) for k, v in peaks_at_end.items()},
        "used": {k: round(v) for k, v in peaks.items()},
        "encoder_shape": [rows, d, ff],
        "grm_shape": [8 * 256, 896, 4864],
    }
    print(
        f"\npeak F.linear {rows}x{d}->{ff}: bf16 {peaks['bfloat16']:.0f}, fp32 "
        f"{peaks['float32']:.0f} GFLOP/s; GRM shape bf16 {peaks['bfloat16_grm_shape']:.0f} "
        f"(STACK.md: {STACK_BF16_PEAK_GFLOPS:.0f} / {STACK_FP32_PEAK_GFLOPS:.0f})"
    )
    add_efficiency(grid, peaks)
    target = f"bfloat16/256/{max(args.batches)}"
    if 256 in args.lengths:
        bounds = [bound_at_start, own_shapes_bound(args.threads, config, max(args.batches), 256)]
        bound = max(bounds, key=lambda b: b["bound_gflops"])
        cells = {"eager": grid[target]}
        if args.compiled:
            cells["compiled"] = compiled_cell(encoder, pool, max(args.batches), args.reps)
        results["efficiency_at_256_tokens"] = {
            "own_shapes_bound": bound,
            "own_shapes_bound_gflops_at_start_end": [b["bound_gflops"] for b in bounds],
            **{
                name: {
                    "gflops": cell["gflops"],
                    "share_of_ffn_shape_peak": round(cell["gflops"] / peaks["bfloat16"], 3),
                    "share_of_own_shapes_bound": round(cell["gflops"] / bound["bound_gflops"], 3),
                }
                for name, cell in cells.items()
            },
            "ffn_shape_peak_share_of_bound": round(bound["bound_gflops"] / peaks["bfloat16"], 3),
        }
        for name in cells:
            e = results["efficiency_at_256_tokens"][name]
            print(
                f"{name} {target}: {e['gflops']:.0f} GFLOP/s = {e['share_of_ffn_shape_peak']:.0%}"
                f" of the FFN-shape peak, {e['share_of_own_shapes_bound']:.0%} of its own "
                f"shapes' bound ({bound['bound_gflops']:.0f} GFLOP/s: {bound['gflops_by_shape']})"
            )
    results["encoder_grid"] = grid
    results["encoder_grid_note"] = (
        "key dtype/tokens/batch; one forward + mean pooling at exactly `tokens` tokens per "
        "row, no padding; int8 is held against the bf16 peaks"
    )

    return write(results, args, started)


def paths(results: dict[str, Any], judges: dict[str, Any], dialogues: list[Any], args: Any) -> None:
    mix = random.Random(args.seed).sample(dialogues, min(args.mix, len(dialogues)))
    encoder = judges["bfloat16"].encoder
    results["mix"] = {"dialogues": len(mix), **mix_lengths(encoder, mix)}
    print(f"\nrealistic mix: {results['mix']}")
    naive = build_judge(args.threads, "float32", max_batch=1)
    naive.encoder._model = PaddedTo(
        naive.encoder._model, naive.encoder.max_tokens, naive.encoder._pad
    )
    extra = {}
    if args.compiled:
        extra["compiled"] = compiled_judge(args.threads)
    results["paths"] = naive_vs_product({**judges, **extra, "naive": naive}, mix, args.reps)
    if args.compiled:
        results["paths"]["bf16_vs_compiled"] = agreement(
            score_all(judges["bfloat16"], mix), score_all(extra["compiled"], mix)
        )


def write(results: dict[str, Any], args: Any, started: float) -> int:
    results["parts_measured_last"] = args.parts
    results["load_average_at_end"] = load_average()
    results["wall_seconds"] = round(time.perf_counter() - started, 1)
    results["measured_at"] = datetime.now(UTC).isoformat()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out} ({results['wall_seconds']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
