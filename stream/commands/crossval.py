"""`uxmon crossval`: leave-one-writer-out validation of a scorer on the multi-writer corpus.

The figure this prints is the one to quote: each writer's records are scored by a model
trained on the other writers only, beside a reply-length baseline and the majority class
fitted the same way (benchmark.crosswriter).
"""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table


class Which(StrEnum):
    ux_judge = "ux_judge"
    grm = "grm"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def crossval(
    scorer: Annotated[Which, typer.Option(help="Which scorer's training to validate.")] = (
        Which.ux_judge
    ),
    corpus: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            file_okay=False,
            help="Corpus root with task1/<writer>.jsonl (and task3/ for the GRM); "
            "default: the corpus bundled with uxmon.",
        ),
    ] = None,
    writers: Annotated[
        str | None, typer.Option(help="Only these writers, comma-separated (default: all).")
    ] = None,
    per_writer: Annotated[
        int | None,
        typer.Option(
            min=4,
            help="A fast subset: the first N/2 liked and N/2 disliked Task-1 records and "
            "the first N/4 Task-3 contexts of each writer (CI's gate).",
        ),
    ] = None,
    l2: Annotated[
        float | None,
        typer.Option(min=0.0, help="L2 penalty (default: the scorer's shipped setting)."),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Write the full report (JSON) here.")] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="A committed crossval report: exit 1 if this run is worse (the gate).",
        ),
    ] = None,
    tolerance: Annotated[
        float, typer.Option(min=0.0, help="How much worse than --baseline still passes.")
    ] = 0.02,
    state_cache: Annotated[
        Path | None,
        typer.Option(
            help="GRM only: where answer states are cached (resumable; default "
            "~/.cache/uxmon/grm-states)."
        ),
    ] = None,
    resamples: Annotated[int, typer.Option(min=50, help="Bootstrap resamples for the CIs.")] = (
        1000
    ),
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """Leave-one-writer-out: train on all writers but one, test on that one, for each."""
    from benchmark import crosswriter
    from benchmark import writers as corpus_mod
    from benchmark.errors import BenchmarkError
    from scorer.errors import ScorerError

    if out is not None and not out.parent.is_dir():
        raise _fail(f"--out: {out.parent} is not a directory")
    try:
        task1 = corpus_mod.load_task1(corpus)
        task3 = corpus_mod.load_task3(corpus) if scorer is Which.grm else []
    except BenchmarkError as exc:
        raise _fail(str(exc)) from None
    if writers:
        keep = {w.strip() for w in writers.split(",") if w.strip()}
        task1 = [r for r in task1 if r.writer in keep]
        task3 = [r for r in task3 if r.writer in keep]
    if per_writer is not None:
        task1, task3 = corpus_mod.first_per_writer(task1, task3, per_writer)
    names = sorted({r.writer for r in task1})
    if len(names) < 2:
        raise _fail(f"leave-one-writer-out needs at least 2 writers; found {len(names)}")
    try:
        if scorer is Which.ux_judge:
            result, version = _judge(task1, l2, progress, resamples)
        else:
            result, version = _grm(task1, task3, l2, state_cache, progress, resamples)
    except ScorerError as exc:
        raise _fail(str(exc)) from None
    full = {
        "protocol": "leave-one-writer-out",
        "scorer": str(scorer),
        "version": version,
        "writers": names,
        "per_writer": per_writer,
        "task1_records": len(task1),
        "task3_contexts": len(task3),
        **result,
    }
    if out is not None:
        out.write_text(json.dumps(full, indent=2, ensure_ascii=False) + "\n")
    _show(full)
    if baseline is not None:
        worse = crosswriter.regressions(json.loads(baseline.read_text()), full, tolerance)
        for line in worse:
            typer.echo(f"REGRESSION {line}", err=True)
        if worse:
            raise typer.Exit(1)
        typer.echo(f"PASS: no pooled figure below {baseline.name} by more than {tolerance}")


def _judge(
    task1: list[Any], l2: float | None, progress: bool, resamples: int
) -> tuple[dict[str, Any], str]:
    from benchmark import crosswriter
    from scorer.encoder import E5Encoder
    from scorer.training import TrainConfig
    from scorer.ux_judge import FEATURE_SPEC

    encoder = E5Encoder()
    encoder.load()
    penalty = TrainConfig().l2 if l2 is None else l2
    result = crosswriter.run_judge(
        task1, encoder, l2=penalty, progress=progress, resamples=resamples
    )
    return result, f"{FEATURE_SPEC['name']}+l2={penalty:g}"


def _grm(
    task1: list[Any],
    task3: list[Any],
    l2: float | None,
    cache: Path | None,
    progress: bool,
    resamples: int,
) -> tuple[dict[str, Any], str]:
    from benchmark import crosswriter
    from scorer.grm import GRM
    from scorer.grm_training import DEFAULT_L2, cached_answer_states, default_state_cache

    grm = GRM(verdict_head=False)  # the base model: every fold trains its own head
    grm.load()
    dialogues = crosswriter.grm_dialogues(task1, task3)
    states, margins = cached_answer_states(
        grm, dialogues, cache or default_state_cache(), progress=progress
    )
    penalty = DEFAULT_L2 if l2 is None else l2
    result = crosswriter.run_grm(task1, task3, states, margins, l2=penalty, resamples=resamples)
    return result, f"{grm.base_version}+verdict-head l2={penalty:g}"


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _ci(pair: list[float], percent: bool = True) -> str:
    low, high = pair
    return f"{100 * low:.1f}-{100 * high:.1f}" if percent else f"{low:.3f}-{high:.3f}"


def _show(full: dict[str, Any]) -> None:
    console = Console()
    if not console.is_terminal:
        console = Console(width=120)  # logs and pipes: room for every column
    part = full["task1"]
    table = Table(title=f"{full['scorer']} · leave-one-writer-out · Task 1 ({full['version']})")
    for column in ("writer", "n", "AUROC", "95% CI", "Good", "Bad", "Avg", "95% CI", "ECE"):
        table.add_column(column, justify="left" if column == "writer" else "right")

    def row(name: str, f: dict[str, Any]) -> None:
        table.add_row(
            name,
            str(f["n"]),
            f"{f['auroc']:.3f}",
            _ci(f["auroc_ci"], percent=False),
            _pct(f["good_acc"]),
            _pct(f["bad_acc"]),
            _pct(f["avg_acc"]),
            _ci(f["avg_acc_ci"]),
            f"{f['ece']:.3f}",
        )

    for writer, figures in part["scorer"]["per_writer"].items():
        row(writer, figures)
    row("pooled", part["scorer"]["pooled"])
    row("length only", part["length_only"]["pooled"])
    row("majority", part["majority"]["pooled"])
    console.print(table)
    console.print(
        f"contrastive pairs ranked right: {_pct(part['pair_accuracy'])} % of {part['pairs']}"
    )
    if "task3" in full:
        t3 = full["task3"]
        v = t3["verdicts"]["pooled"]
        console.print(
            f"recovery (Task 3, {t3['contexts']} contexts): fixing attempt scored above the "
            f"non-fixing one in {_pct(t3['pair_accuracy'])} % (zero-shot "
            f"{_pct(t3['zero_shot_pair_accuracy'])} %); verdict Avg-Acc {_pct(v['avg_acc'])} "
            f"(Good {_pct(v['good_acc'])}, Bad {_pct(v['bad_acc'])}), AUROC {v['auroc']:.3f}"
        )
