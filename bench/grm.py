"""Measure the local GRM: load time, verdict throughput by prompt length, forward vs generate.

    python bench/grm.py [--threads 2] [--reps 2] [--out bench/results/grm.json]

Conversion time and its peak memory come from the prepared folder's manifest (conversion
runs once; `uxmon models prepare --only qwen --force` under `/usr/bin/time -v` re-measures
it). Throughput is measured on the backend with prompts cut to exact token lengths, since
the GRM's own template alone is longer than the shortest length asked for.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import resource
import time
from pathlib import Path
from typing import Any

from _timing import STACK_BF16_PEAK_GFLOPS, measure_peak, timed

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lengths", type=int, nargs="+", default=[90, 256, 512])
    parser.add_argument(
        "--dialogues", type=int, default=16, help="held-out dialogues for verdict vs generate"
    )
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="1 rep, fewer lengths/dialogues")
    parser.add_argument("--out", type=Path, default=Path("bench/results/grm.json"))
    args = parser.parse_args()
    if args.quick:
        args.reps, args.lengths, args.dialogues = 1, [256], 8

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
        seconds = timed(functools.partial(backend.verdict_logprobs, batch), args.reps)
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
    results["verdict_vs_generate_then_parse"] = verdict_vs_generate_then_parse(grm, args)
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


# What an LLM judge is usually asked for: a short reason, then the verdict in a JSON object
# (reason first, so the verdict can draw on it), generated greedily to EOS and parsed.
JUDGE_INSTRUCTION = (
    '先用一句话说明理由，然后只输出一个 JSON 对象：{"理由": "……", "评价": "好" 或 "差"}'
)
VERDICT_FIELD = re.compile(r'"评价"\s*[:：]\s*"?\s*(好|差)')


def judge_prompt(prompt: Any, good: str, bad: str) -> Any:
    """The GRM's own prompt with its one-word answer line replaced by JUDGE_INSTRUCTION."""
    from scorer.prompts import ChatPrompt

    lines = prompt.user.rstrip().split("\n")
    if good in lines[-1] and bad in lines[-1]:
        lines = lines[:-1]
    return ChatPrompt(prompt.system, "\n".join([*lines, JUDGE_INSTRUCTION]))


def verdict_vs_generate_then_parse(grm: Any, args: argparse.Namespace) -> dict[str, Any]:
    """verdicts/s of `GRM.score()` (one forward, two tokens read) vs generate-then-parse on
    the same held-out dialogues, each timed end to end (prompt building included)."""
    import random

    import torch

    from benchmark.uxbench import load_task1

    items = load_task1("tests/data/synthetic_task1.jsonl")
    dialogues = [i.dialogue for i in random.Random(7).sample(items, args.dialogues)]
    backend = grm._backend
    tokenizer = backend.meter()._tok
    model = backend._model
    good, bad = grm._language.good, grm._language.bad

    def generate_then_parse() -> tuple[list[str | None], list[int]]:
        prompts = [judge_prompt(grm.prompt(d), good, bad) for d in dialogues]
        texts = [
            tokenizer.apply_chat_template(p.messages(), tokenize=False, add_generation_prompt=True)
            for p in prompts
        ]
        # Same advantages as the product path: length-sorted batches, left padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        tokenizer.padding_side = "left"
        verdicts: list[str | None] = [None] * len(texts)
        lengths = [0] * len(texts)
        for lo in range(0, len(order), args.batch):
            rows = order[lo : lo + args.batch]
            enc = tokenizer(
                [texts[i] for i in rows],
                return_tensors="pt",
                padding=True,
                add_special_tokens=False,
            )
            with torch.inference_mode():
                out = model.generate(
                    **enc,
                    max_new_tokens=args.max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                )
            new = out[:, enc["input_ids"].shape[1] :]
            for row, ids, text in zip(
                rows, new, tokenizer.batch_decode(new, skip_special_tokens=True), strict=True
            ):
                found = VERDICT_FIELD.search(text)
                verdicts[row] = found.group(1) if found else None
                lengths[row] = int((ids != tokenizer.pad_token_id).sum())
        return verdicts, lengths

    scores = grm.score(dialogues)  # warm-up, and the verdicts to compare with
    best = {"single_forward": float("inf"), "generate_then_parse": float("inf")}
    generated: tuple[list[str | None], list[int]] = ([], [])
    for _ in range(args.reps):  # round-robin: both methods see the same background load
        best["single_forward"] = min(best["single_forward"], timed(lambda: grm.score(dialogues), 1))
        began = time.perf_counter()
        generated = generate_then_parse()
        best["generate_then_parse"] = min(best["generate_then_parse"], time.perf_counter() - began)
    verdicts, new_tokens = generated
    parsed = [v for v in verdicts if v is not None]
    raw = [good if s.extras.get("margin", 0.0) >= 0 else bad for s in scores]
    agree = sum(v == r for v, r in zip(verdicts, raw, strict=True) if v is not None)
    n = len(dialogues)
    out = {
        "dialogues": n,
        "batch": args.batch,
        "max_new_tokens": args.max_new_tokens,
        "single_forward_seconds": round(best["single_forward"], 3),
        "single_forward_verdicts_per_s": round(n / best["single_forward"], 3),
        "generate_then_parse_seconds": round(best["generate_then_parse"], 3),
        "generate_then_parse_verdicts_per_s": round(n / best["generate_then_parse"], 3),
        "speedup": round(best["generate_then_parse"] / best["single_forward"], 2),
        "generated_tokens_mean": round(sum(new_tokens) / n, 1),
        "hit_max_new_tokens": sum(t >= args.max_new_tokens for t in new_tokens),
        "unparseable": f"{n - len(parsed)}/{n}",
        "parsed_good_share": round(parsed.count(good) / len(parsed), 3) if parsed else None,
        "agreement_with_raw_single_forward_verdict": (
            round(agree / len(parsed), 3) if parsed else None
        ),
        "baseline": (
            "the GRM's own prompt for each dialogue with its one-word answer line replaced by "
            "a request for a one-sentence reason then a JSON verdict; greedy generate() until "
            "EOS or max_new_tokens on length-sorted, left-padded batches of `batch`; verdict "
            "parsed with a regex on the 评价 field; unparseable = no verdict found"
        ),
    }
    print(
        f"verdict vs generate-then-parse on {n} held-out dialogues: "
        f"{out['single_forward_verdicts_per_s']:.2f} vs "
        f"{out['generate_then_parse_verdicts_per_s']:.2f} verdicts/s = {out['speedup']:.2f}x; "
        f"{out['generated_tokens_mean']} tokens generated on average, "
        f"unparseable {out['unparseable']}"
    )
    return out


if __name__ == "__main__":
    main()
