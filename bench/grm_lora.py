"""What LoRA adapters on the GRM's top layers buy over its verdict head alone, out of writer.

    pip install -e '.[grm,bench]'   # peft
    python bench/grm_lora.py [--layers 2] [--rank 8] [--epochs 1] [--out FILE.json]

The corpus and the folds are those of `uxmon crossval --scorer grm`: the Task-1 records and
both attempts of every Task-3 context of the bundled eight writers, each held-out writer's
dialogues scored by a model trained on the other seven (`--writers` picks the held-out
writers: LoRA training costs minutes per fold on two cores). Three methods, same folds:

- zero-shot: the base model's own margin, logit(好) - logit(差) at the first answer position;
- the verdict head (what ships, `scorer.verdict_head`, fitted as `uxmon grm train` fits it);
- LoRA (peft) on every projection of the top `--layers` decoder layers, trained jointly
  with a verdict direction and bias on the same margin (binary cross-entropy, class-balanced
  data), read at P >= 0.5.

The score keeps its definition in all three: P(好) / (P(好) + P(差)) at the first answer
position from one forward pass. The base model runs once per dialogue; its hidden states
entering the top layers are cached on disk (bf16; a rerun resumes), so each fold trains
only the top layers. Finished folds are kept in the cache too.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmark import crosswriter  # noqa: E402
from benchmark.metrics import auroc, pair_accuracy  # noqa: E402
from benchmark.writers import load_task1, load_task3  # noqa: E402
from scorer.encoder import progress_bar  # noqa: E402
from scorer.grm import GRM  # noqa: E402
from scorer.grm_training import DEFAULT_L2  # noqa: E402

CACHE = Path.home() / ".cache" / "uxmon" / "grm-lora"
TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def prompt_ids(grm: GRM, dialogues: Sequence[Any]) -> list[list[int]]:
    meter = grm._backend.meter()
    return [meter.chat_ids(grm.prompt(d)) for d in dialogues]


def cache_states(
    grm: GRM, ids: list[list[int]], first_top: int, folder: Path
) -> tuple[list[Path], NDArray[np.float32]]:
    """For every prompt: a file with the hidden states entering layer `first_top` (bf16),
    and the final answer state (float32) of the base model, computed once."""
    import torch

    decoder = grm._backend._decoder
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for row in ids:
        key = hashlib.sha256(json.dumps([grm.base_version, first_top, row]).encode()).hexdigest()
        paths.append(folder / f"{key[:32]}.pt")
    todo = [i for i, p in enumerate(paths) if not p.exists()]
    bar = progress_bar(len(todo), "base states") if todo else None
    for i in todo:
        with torch.inference_mode():
            out = decoder(
                input_ids=torch.tensor([ids[i]]), use_cache=False, output_hidden_states=True
            )
        state = {
            "entering": out.hidden_states[first_top][0].to(torch.bfloat16).clone(),
            "answer": out.last_hidden_state[0, -1].float().clone(),
        }
        tmp = paths[i].with_suffix(".tmp")
        torch.save(state, tmp)
        tmp.replace(paths[i])
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    answers = np.stack([torch.load(p)["answer"].numpy() for p in paths])
    return paths, answers


class Top:
    """The top decoder layers (a private copy with LoRA adapters), the final norm and the
    verdict rows: hidden states entering the top -> the verdict margin."""

    def __init__(self, grm: GRM, first_top: int, rank: int, seed: int) -> None:
        import torch
        from peft import LoraConfig, inject_adapter_in_model

        backend = grm._backend
        decoder = backend._decoder
        torch.manual_seed(seed)
        self.layers = torch.nn.ModuleList(copy.deepcopy(list(decoder.layers[first_top:])))
        for p in self.layers.parameters():
            p.requires_grad_(False)
        config = LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.05, target_modules=TARGETS)
        self.layers = inject_adapter_in_model(config, self.layers)
        self.norm = decoder.norm
        self.rotary = decoder.rotary_emb
        self.base_direction = torch.from_numpy(backend.base_direction()).float()
        self.direction = torch.zeros_like(self.base_direction, requires_grad=True)
        self.bias = torch.zeros(1, requires_grad=True)

    def adapters(self) -> list[Any]:
        return [p for n, p in self.layers.named_parameters() if "lora_" in n]

    def answer_state(self, entering: Any) -> Any:
        import torch

        h = entering.unsqueeze(0)
        positions = torch.arange(h.shape[1]).unsqueeze(0)
        rotary = self.rotary(h, positions)
        for layer in self.layers:  # batch of one, no padding: causal attention, no mask
            h = layer(h, attention_mask=None, position_ids=positions, position_embeddings=rotary)
        return self.norm(h[:, -1]).float()[0]

    def margin(self, entering: Any) -> Any:
        state = self.answer_state(entering)
        return state @ (self.base_direction + self.direction) + self.bias[0]


def lora_method(
    grm: GRM,
    paths: list[Path],
    labels: Sequence[int],
    writers: Sequence[str],
    args: argparse.Namespace,
    first_top: int,
    folds_dir: Path,
) -> crosswriter.Method:
    import torch

    y = np.asarray(labels, dtype=np.float32)
    w = np.asarray(writers)

    def fit(train: crosswriter.Indices, test: crosswriter.Indices) -> tuple[Any, float]:
        (writer,) = set(w[test].tolist())
        done = folds_dir / f"{writer}.json"
        if done.exists():
            return np.asarray(json.loads(done.read_text())["p"]), 0.5
        top = Top(grm, first_top, args.rank, args.seed)
        top.layers.train()
        optimizer = torch.optim.AdamW(
            [
                {"params": top.adapters(), "lr": args.lr},
                {"params": [top.direction, top.bias], "lr": args.head_lr, "weight_decay": 0.0},
            ],
            weight_decay=0.01,
        )
        rng = np.random.default_rng(args.seed)
        steps = 0
        started = time.perf_counter()
        bar = progress_bar(len(train) * args.epochs, f"LoRA without {writer}")
        for _ in range(args.epochs):
            for chunk in np.array_split(rng.permutation(train), max(1, len(train) // args.batch)):
                loss = torch.zeros(())
                for i in chunk:
                    entering = torch.load(paths[i])["entering"]
                    margin = top.margin(entering)
                    target = torch.tensor(float(y[i]))
                    loss = loss + torch.nn.functional.binary_cross_entropy_with_logits(
                        margin, target
                    )
                (loss / len(chunk)).backward()
                optimizer.step()
                optimizer.zero_grad()
                steps += 1
                bar.update(len(chunk))
        bar.close()
        seconds = time.perf_counter() - started
        top.layers.eval()
        with torch.inference_mode():
            margins = [float(top.margin(torch.load(paths[i])["entering"])) for i in test]
        p = 1.0 / (1.0 + np.exp(-np.asarray(margins)))
        folds_dir.mkdir(parents=True, exist_ok=True)
        done.write_text(json.dumps({"p": p.tolist(), "train_seconds": seconds, "steps": steps}))
        return p, 0.5

    return fit


def out_of_writer(
    method: crosswriter.Method,
    w: NDArray[np.str_],
    labels: Sequence[int],
    held_out: list[str],
    n1: int,
) -> dict[str, Any]:
    """Each held-out writer's dialogues scored by `method` trained on every other writer;
    Task-1 figures, and Task-3 pairs and verdicts, over the held-out writers."""
    y = np.asarray(labels, dtype=np.int64)
    p = np.full(y.size, np.nan)
    liked = np.zeros(y.size, dtype=bool)
    for writer in held_out:
        test, train = np.flatnonzero(w == writer), np.flatnonzero(w != writer)
        p[test], threshold = method(train, test)
        liked[test] = p[test] >= threshold
    scored = np.isin(w, held_out)
    is1 = np.arange(y.size) < n1

    def part(mask: NDArray[np.bool_]) -> dict[str, Any]:
        result = crosswriter.OutOfWriter(list(w[mask]), y[mask], p[mask], liked[mask])
        return crosswriter.report(result)

    pairs = [(i, i + 1) for i in range(n1, y.size, 2) if scored[i]]
    return {
        "task1": part(scored & is1),
        "task3": {
            "pair_accuracy": round(pair_accuracy(p, pairs), 4),
            "pairs": len(pairs),
            "verdicts": part(scored & ~is1),
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=2, help="top decoder layers adapted")
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=8, help="dialogues per optimizer step")
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--writers", default="", help="held-out writers, comma-separated (default: all eight)"
    )
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/grm_lora.json")
    args = parser.parse_args()

    import torch

    from scorer.runtime import Runtime

    torch.set_num_threads(args.threads)
    task1, task3 = load_task1(), load_task3()
    dialogues = crosswriter.grm_dialogues(task1, task3)
    labels = [r.item.label for r in task1] + [1, 0] * len(task3)
    writers = [r.writer for r in task1] + [r.writer for r in task3 for _ in (0, 1)]

    grm = GRM(verdict_head=False, runtime=Runtime(threads=args.threads))
    grm.load()
    layers = len(grm._backend._decoder.layers)
    first_top = layers - args.layers
    ids = prompt_ids(grm, dialogues)
    paths, answers = cache_states(grm, ids, first_top, args.cache / f"states-{first_top}")
    base = answers @ grm._backend.base_direction()

    # The split forward (cached states -> top layers) must be the model's own forward.
    check = Top(grm, first_top, args.rank, args.seed)
    check.layers.eval()
    with torch.inference_mode():
        again = check.answer_state(torch.load(paths[0])["entering"]).numpy()
    gap = float(np.abs(again - answers[0]).max() / np.abs(answers[0]).max())
    if gap > 0.05:
        raise SystemExit(f"the top-layer forward differs from the model's own: {gap:.3f}")

    recipe = (
        f"layers{args.layers}-r{args.rank}-e{args.epochs}-b{args.batch}-lr{args.lr:g}-"
        f"h{args.head_lr:g}-s{args.seed}"
    )
    folds_dir = args.cache / f"folds-{recipe}"
    n1 = len(task1)
    w = np.asarray(writers)
    held_out = args.writers.split(",") if args.writers else sorted(set(writers))
    methods = {
        "verdict_head": crosswriter.verdict_head_method(answers, base, labels, writers, DEFAULT_L2),
        "lora_and_head": lora_method(grm, paths, labels, writers, args, first_top, folds_dir),
    }
    results = {
        name: out_of_writer(method, w, labels, held_out, n1) for name, method in methods.items()
    }
    timing = [json.loads((folds_dir / f"{x}.json").read_text()) for x in held_out]
    lengths = [len(i) for i in ids]
    scored = np.isin(w, held_out)
    attempt_pairs = [(n1 + 2 * k, n1 + 2 * k + 1) for k in range(len(task3))]
    report = {
        "corpus": {"task1": n1, "task3_contexts": len(task3), "dialogues": len(dialogues)},
        "held_out_writers": held_out,
        "prompt_tokens_p50_p90_max": [
            int(np.percentile(lengths, 50)),
            int(np.percentile(lengths, 90)),
            max(lengths),
        ],
        "recipe": {
            "adapted_layers": f"{first_top}..{layers - 1} of {layers}",
            "targets": TARGETS,
            **{k: getattr(args, k) for k in ("rank", "epochs", "batch", "lr", "head_lr", "seed")},
        },
        "split_forward_max_rel_gap": round(gap, 5),
        "train_seconds_per_fold": [round(t["train_seconds"], 1) for t in timing],
        "zero_shot": {
            "task1_auroc": round(
                auroc(np.asarray(labels)[:n1][scored[:n1]], base[:n1][scored[:n1]]), 4
            ),
            "task3_pair_accuracy": round(
                pair_accuracy(base, [p for p in attempt_pairs if scored[p[0]]]), 4
            ),
        },
        **results,
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    for name, r in results.items():
        s1, t3 = r["task1"]["pooled"], r["task3"]
        print(
            f"{name:14s} task1 AUROC {s1['auroc']:.3f} Avg-Acc {s1['avg_acc']:.3f} | "
            f"task3 pairs {t3['pair_accuracy']:.3f} verdict Avg-Acc "
            f"{t3['verdicts']['pooled']['avg_acc']:.3f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
