"""`uxmon grm train`: teach the bundled GRM what users like (a verdict head, see
scorer.verdict_head) from writer- or source-tagged UXBench-format data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="Train the GRM's verdict head.")


@app.command("train")
def train(
    out: Annotated[Path, typer.Option(help="Head directory to write.")],
    corpus: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            file_okay=False,
            help="Corpus root: task1/<group>.jsonl (Task-1 records) and optionally "
            "task3/<group>.jsonl (contexts with fixing_reply and non_fixing_reply). Groups "
            "are writers, or for a team's own thumbs: apps, weeks or regions. Default: the "
            "corpus bundled with uxmon.",
        ),
    ] = None,
    l2: Annotated[float | None, typer.Option(min=0.0, help="L2 penalty (default 0.1).")] = None,
    state_cache: Annotated[
        Path | None,
        typer.Option(help="Answer-state cache (resumable; default ~/.cache/uxmon/grm-states)."),
    ] = None,
    threads: Annotated[int, typer.Option(help="Torch threads (0 = all).")] = 0,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """One forward pass of the base model per example (cached, so an interrupted run
    resumes), then a logistic fit of the two verdict rows, calibrated out of group."""
    from benchmark import writers
    from benchmark.errors import BenchmarkError
    from scorer.errors import ScorerError
    from scorer.grm import GRM
    from scorer.grm_training import DEFAULT_L2, train_verdict_head
    from scorer.runtime import Runtime
    from scorer.types import Dialogue

    try:
        task1 = writers.load_task1(corpus)
        try:
            task3 = writers.load_task3(corpus)
        except BenchmarkError:
            task3 = []  # reply mode only
    except BenchmarkError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    examples: list[tuple[Dialogue, int, str]] = [
        (r.item.dialogue, r.item.label, r.writer) for r in task1
    ]
    for r in task3:
        fixing, non_fixing = r.attempts()
        examples += [(fixing.dialogue, 1, r.writer), (non_fixing.dialogue, 0, r.writer)]
    groups = sorted({g for _, _, g in examples})
    typer.echo(
        f"{len(task1)} Task-1 records and {len(task3)} Task-3 contexts from {len(groups)} groups",
        err=True,
    )
    if len(groups) < 2:
        typer.echo("error: calibration needs at least 2 groups (files)", err=True)
        raise typer.Exit(2)
    try:
        grm = GRM(verdict_head=False, runtime=Runtime(threads=threads))
        grm.load()
        version, metrics = train_verdict_head(
            grm,
            examples,
            out,
            l2=DEFAULT_L2 if l2 is None else l2,
            cache_dir=state_cache,
            progress=progress,
        )
    except ScorerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        json.dumps({"out_dir": str(out), "version": version, "out_of_group": metrics}, indent=2)
    )
