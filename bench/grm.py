"""Measure the local GRM: load time, verdict throughput by prompt length, forward vs generate.

    python bench/grm.py [--threads 2] [--reps 2] [--out bench/results/grm.json]

Conversion time and its peak memory come from the prepared folder's manifest (conversion
runs once; `uxmon models prepare --only qwen --force` under `/usr/bin/time -v` re-measures
it). Throughput is measured on the backend with prompts cut to exact token lengths, since
the GRM's own template alone is longer than the shortest length asked for.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from pathlib import Path
from typing import Any

# bf16 matmul peak on these 2 cores as STACK.md states it. torch's linear on 3-D inputs
# beats it (see measure_peak), so both figures are reported.
STACK_BF16_PEAK_GFLOPS = 400.0
FILLER = (
    "用户问了一个关于旅行安排的问题，助手给出了详细的行程建议，包括交通、住宿和餐饮。"
    "The user then asked for a shorter version with prices in euros and a packing list. "
)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def prompts_of_length(meter: Any, n_tokens: int, count: int) -> list[Any]:
    """`count` distinct chat prompts of exactly `n_tokens` tokens (chat template included)."""
    from scorer.prompts import ChatPrompt

    system = "你是一名用户体验评审员。只回答一个字：好 或 差。"
    out = []
    for i in range(count):
        body = f"第{i}条。" + FILLER * (n_tokens // 20 + 2)
        overhead = meter.count_prompt(ChatPrompt(system, "")) + 8
        text = meter.head(body, max(n_tokens - overhead, 1)) + "\n评价：好 或 差？"
        while meter.count_prompt(ChatPrompt(system, text)) > n_tokens and len(text) > 12:
            text = text[1:]
        out.append(ChatPrompt(system, text))
    return out


def measure_peak(threads: int) -> float:
    """Best bf16 GFLOP/s of the model's largest linear (896 -> 4864) on a [8, 256] batch."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    x = torch.randn(8, 256, 896, dtype=torch.bfloat16)
    w = torch.randn(4864, 896, dtype=torch.bfloat16)
    for _ in range(3):
        F.linear(x, w)
    seconds = timed(lambda: F.linear(x, w), 20)
    return 2 * 8 * 256 * 896 * 4864 / seconds / 1e9


def timed(fn: Any, reps: int) -> float:
    """Best wall time of `reps` calls (the machine is shared; the minimum is the signal)."""
    best = float("inf")
    for _ in range(reps):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lengths", type=int, nargs="+", default=[90, 256, 512])
    parser.add_argument("--out", type=Path, default=Path("bench/results/grm.json"))
    args = parser.parse_args()

    started = time.perf_counter()
    import torch
    import transformers  # noqa: F401  (timed apart from loading the weights)

    import_seconds = time.perf_counter() - started
    from scorer.grm import GRM
    from scorer.models.qwen import prepare_qwen, read_manifest
    from scorer.runtime import Runtime
    from scorer.types import Dialogue

    torch.set_num_threads(args.threads)
    results: dict[str, Any] = {
        "threads": args.threads,
        "batch": args.batch,
        "load_average_at_start": os.getloadavg(),
        "import_torch_transformers_seconds": round(import_seconds, 2),
    }
    peak = measure_peak(args.threads)
    results["measured_bf16_linear_peak_gflops"] = round(peak)
    folder = prepare_qwen()
    manifest = read_manifest(folder) or {}
    results["conversion_seconds"] = manifest.get("conversion_seconds")

    started = time.perf_counter()
    grm = GRM(threshold=0.5, runtime=Runtime(threads=args.threads, dtype="bfloat16"))
    grm.load()
    results["load_seconds"] = round(time.perf_counter() - started, 2)
    results["rss_after_load_mb"] = round(rss_mb())
    backend: Any = grm._backend
    meter = backend.meter()
    model = backend._model
    params = sum(p.numel() for p in model.parameters())
    embedding = model.get_input_embeddings().weight.numel()
    head = model.get_output_embeddings().weight.numel()
    body_params = params - embedding - head  # the lm_head runs on one position only
    results["template_overhead_tokens"] = dict(grm._overhead)
    typical = grm.prompt(Dialogue("北京有什么好玩的地方？", "故宫、长城、颐和园都值得一去。"))
    results["typical_grm_prompt_tokens"] = meter.count_prompt(typical)

    throughput = {}
    for length in args.lengths:
        batch = prompts_of_length(meter, length, args.batch)
        real = [meter.count_prompt(p) for p in batch]
        backend.verdict_logprobs(batch[:1])  # warm-up
        seconds = timed(lambda b=batch: backend.verdict_logprobs(b), args.reps)
        gflops = 2 * body_params * sum(real) / seconds / 1e9
        throughput[str(length)] = {
            "prompt_tokens": round(sum(real) / len(real), 1),
            "batch_seconds": round(seconds, 3),
            "verdicts_per_s": round(len(batch) / seconds, 2),
            "tokens_per_s": round(sum(real) / seconds),
            "gflops": round(gflops, 1),
            "share_of_stack_peak": round(gflops / STACK_BF16_PEAK_GFLOPS, 3),
            "share_of_measured_peak": round(gflops / peak, 3),
        }
        print(
            f"{length:4d} tokens x {args.batch}: {len(batch) / seconds:6.2f} verdicts/s "
            f"({gflops:.0f} GFLOP/s; {gflops / peak:.0%} of the measured linear peak)"
        )
    results["throughput"] = throughput

    results["forward_vs_generate"] = compare_generate(backend, meter, args)
    results["peak_rss_mb"] = round(rss_mb())
    results["load_average_at_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.out.is_file():  # keep the calibration report recorded by hand alongside
        previous = json.loads(args.out.read_text())
        if "calibration" in previous:
            results["calibration"] = previous["calibration"]
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps(results, indent=2, ensure_ascii=False))


def compare_generate(backend: Any, meter: Any, args: argparse.Namespace) -> dict[str, Any]:
    """One forward reading two tokens vs generate(max_new_tokens=k) then parsing the text,
    on the same batch of real GRM-style prompts (left-padded, batch `args.batch`)."""
    import torch

    from scorer.prompts import ChatPrompt

    tokenizer = meter._tok
    model = backend._model
    length = 256
    batch = prompts_of_length(meter, length, args.batch)
    # Same verdict question as the GRM asks, so generated text can be parsed.
    batch = [ChatPrompt(p.system, p.user + "\n只输出一个字：好 或 差。") for p in batch]
    texts = [
        tokenizer.apply_chat_template(p.messages(), tokenize=False, add_generation_prompt=True)
        for p in batch
    ]
    tokenizer.padding_side = "left"
    enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)

    def generate(k: int) -> Any:
        with torch.inference_mode():
            return model.generate(
                **enc, max_new_tokens=k, do_sample=False, pad_token_id=tokenizer.pad_token_id
            )

    # Round-robin over the methods, best of `reps` each: the machine is shared, and
    # interleaving spreads other processes' load evenly over the methods compared.
    methods: dict[str, Any] = {"forward": lambda: backend.verdict_logprobs(batch)}
    for k in (1, 2, 3, 4):
        methods[f"generate_{k}"] = lambda k=k: generate(k)
    best = dict.fromkeys(methods, float("inf"))
    for _ in range(args.reps):
        for name, fn in methods.items():
            best[name] = min(best[name], timed(fn, 1))
    forward_s = best["forward"]
    out: dict[str, Any] = {"prompt_tokens": length, "forward_seconds": round(forward_s, 3)}
    for k in (1, 2, 3, 4):
        new = generate(k)[:, enc["input_ids"].shape[1] :]
        decoded = tokenizer.batch_decode(new, skip_special_tokens=True)
        parsed = sum(("好" in t) != ("差" in t) for t in decoded)
        seconds = best[f"generate_{k}"]
        out[f"generate_{k}"] = {
            "seconds": round(seconds, 3),
            "ratio_to_forward": round(seconds / forward_s, 2),
            "parsed_verdicts": f"{parsed}/{len(decoded)}",
        }
        print(
            f"generate(max_new_tokens={k}): {seconds:.2f} s vs forward {forward_s:.2f} s "
            f"= {seconds / forward_s:.2f}x; parsed {parsed}/{len(decoded)}"
        )
    return out


if __name__ == "__main__":
    main()
