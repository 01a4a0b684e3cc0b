"""`uxmon judge ...`: train the UX-Judge head and measure it on labelled data.

Data files are UXBench Task-1 JSONL (or a team's thumbs-up/down export in that format),
read by `benchmark.uxbench.load_task1`. Heavy imports happen inside the commands so that
`uxmon --help` stays instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stream.commands.options import BatchSize, OldBatch, resolve_batch

if TYPE_CHECKING:
    from scorer.types import Dialogue

app = typer.Typer(no_args_is_help=True, help="Train and measure the UX-Judge scorer.")

DataFiles = Annotated[
    list[Path],
    typer.Option(
        "--data",
        exists=True,
        dir_okay=False,
        readable=True,
        help="UXBench Task-1 JSONL file; repeat for several.",
    ),
]


def _examples(files: list[Path]) -> list[tuple[Dialogue, int]]:
    """Labelled dialogues from the files; bad data exits 2 with the loader's message (which
    names the file or the record's cid and field, never its text)."""
    from benchmark.errors import BenchmarkError
    from benchmark.uxbench import load_task1

    examples: list[tuple[Dialogue, int]] = []
    for path in files:
        try:
            examples.extend((item.dialogue, int(item.label)) for item in load_task1(path))
        except BenchmarkError as exc:
            typer.echo(f"error: {path}: {exc}", err=True)
            raise typer.Exit(2) from None
    return examples


def _print(value: object) -> None:
    typer.echo(json.dumps(value, indent=2, sort_keys=True, default=str))


@app.command("train")
def train(
    out: Annotated[Path, typer.Option("--out", help="Head directory to write (replaced).")],
    data: Annotated[
        list[Path] | None,
        typer.Option(
            "--data",
            exists=True,
            dir_okay=False,
            readable=True,
            help="UXBench Task-1 JSONL file; repeat for several (stratified folds).",
        ),
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            file_okay=False,
            help="A corpus root with task1/<group>.jsonl (writers, apps, weeks): one fold "
            "per group, so calibration comes from groups each member never saw. Without "
            "--data or --corpus: the bundled corpus.",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for the folds, init and shuffling.")] = 0,
    folds: Annotated[
        int, typer.Option(help="Cross-fitting folds = MLPs in the ensemble head.", min=2)
    ] = 5,
    l2: Annotated[
        float, typer.Option(help="L2 penalty on the standardised weights.", min=0.0)
    ] = 1.0,
    model: Annotated[
        str | None, typer.Option(help="Encoder folder or model id (default: bundled e5).")
    ] = None,
) -> None:
    """Train a head on labelled dialogues, calibrate it, and save it to --out."""
    from scorer.errors import ScorerError
    from scorer.training import train_judge

    groups: list[str] | None = None
    if data and corpus:
        typer.echo("error: give --data or --corpus, not both", err=True)
        raise typer.Exit(2)
    if data:
        examples = _examples(data)
        where = f"{len(data)} file(s)"
    else:
        from benchmark import writers
        from benchmark.errors import BenchmarkError

        try:
            records = writers.load_task1(corpus)
        except BenchmarkError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        examples = [(r.item.dialogue, r.item.label) for r in records]
        groups = [r.writer for r in records]
        where = f"{len(set(groups))} groups of {corpus or 'the bundled corpus'}"
    typer.echo(f"{len(examples)} labelled dialogues from {where}", err=True)
    try:
        report = train_judge(
            examples, out, seed=seed, folds=folds, l2=l2, model=model, groups=groups
        )
    except ScorerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    _print(
        {
            "out_dir": str(report.out_dir),
            "version": report.version,
            "n_examples": report.n_examples,
            "folds": len(report.fitted.members),
            "temperature": report.fitted.temperature,
            "threshold": report.fitted.threshold,
            "oof_metrics": report.fitted.oof_metrics,
            "embed_seconds": round(report.embed_seconds, 1),
            "train_seconds": round(report.train_seconds, 1),
        }
    )


@app.command("eval")
def evaluate(
    data: DataFiles,
    head: Annotated[
        Path | None, typer.Option(help="Head directory (default: the shipped head).")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="Encoder folder or model id (default: bundled e5).")
    ] = None,
    batch_size: BatchSize = 64,
    batch: OldBatch = None,
) -> None:
    """Score labelled dialogues with a head and print Good/Bad/Avg-Acc, AUROC and ECE."""
    import time

    from scorer.calibration import judge_metrics
    from scorer.errors import ScorerError
    from scorer.ux_judge import UXJudge

    batch = resolve_batch(batch_size, batch)
    examples = _examples(data)
    try:
        judge = UXJudge(model=model, head=str(head) if head else None)
        judge.load()
        start = time.perf_counter()
        scores = []
        for i in range(0, len(examples), batch):
            scores.extend(judge.score([d for d, _ in examples[i : i + batch]]))
        seconds = time.perf_counter() - start
        metrics = judge_metrics(
            [s.p_satisfied for s in scores],
            [label for _, label in examples],
            judge.threshold,
        )
    except ScorerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    _print(
        {
            "version": judge.version,
            "n": len(examples),
            "metrics": metrics.as_dict(),
            "turns_per_second": round(len(examples) / seconds, 1) if seconds else None,
        }
    )
