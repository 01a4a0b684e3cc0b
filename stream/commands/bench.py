"""`uxmon bench` and `uxmon gate`: validate a scorer on UXBench-format data, and gate a
scorer update against a baseline report.

Exit codes: 0 success (gate passed), 1 the gate failed, 2 bad input (unknown task or
scorer, unreadable data or report, wrong options). Heavy imports happen inside the
commands so that `uxmon --help` stays instant.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Annotated

import typer

from stream.commands.options import BatchSize, Task


def _check_writable(folder: Path) -> None:
    if not folder.is_dir():
        raise _fail(f"--out: {folder} is not a directory")
    if not os.access(folder, os.W_OK):
        raise _fail(f"--out: {folder} is not writable")


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def bench(
    task: Task,
    data: Annotated[
        str,
        typer.Option(
            "--data",
            help="'hub' (mengze-hong/UXBench), a .jsonl/.json/.parquet file, or a "
            "directory laid out like the hub (<dir>/<config>/test.jsonl).",
        ),
    ],
    scorer: Annotated[str, typer.Option("--scorer", help="ux_judge | grm | module.path:Factory.")],
    out: Annotated[
        Path,
        typer.Option("--out", help="report.json to write; report.md and report.html go beside it."),
    ],
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="Read only the first N records of each config (task1: N + N)."),
    ] = None,
    responses: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="JSONL replies to judge: {cid, generated_response} (task2) or "
            "{cid, recovery_response} (task3).",
        ),
    ] = None,
    batch_size: BatchSize = 32,
    progress: Annotated[bool, typer.Option(help="Show a progress bar on stderr.")] = True,
    show_text: Annotated[
        bool,
        typer.Option(
            "--show-text",
            help="Put the misjudged items' message and reply start into report.md and "
            "report.html (they carry ids only by default; report.json never has text).",
        ),
    ] = False,
) -> None:
    """Score a task's items with a scorer and write report.json, report.md and report.html."""
    from benchmark.errors import BenchmarkError
    from benchmark.report import write_report
    from benchmark.runner import run
    from benchmark.tasks import get_task
    from scorer.errors import ScorerError
    from scorer.registry import create
    from stream.commands.serve import load_settings

    if out.suffix.lower() != ".json":
        raise _fail(f"expected --out to end in .json, got {out.name!r}")
    _check_writable(out.parent)  # before a long run, not after
    try:
        chosen = get_task(str(task))
        built = create(scorer, **load_settings().scorer_options(scorer))
        prepared = chosen.prepare(
            data, limit=limit, responses=None if responses is None else str(responses)
        )
        typer.echo(
            f"{len(prepared.cases)} {chosen.name} items from {prepared.source.description}",
            err=True,
        )
        built.load()
        report = run(
            chosen,
            prepared.cases,
            built,
            batch_size=batch_size,
            progress=progress,
            source=prepared.source,
        )
        texts = (
            {
                c.cid: (c.dialogue.user_message, c.dialogue.reply)
                for c in prepared.cases
                if c.dialogue
            }
            if show_text
            else None
        )
        paths = write_report(report, out, texts)
    except (BenchmarkError, ScorerError) as exc:
        raise _fail(str(exc)) from None
    ci = report.intervals.get(report.headline)
    value = report.metrics.get(report.headline)
    shown = "n/a" if value is None or math.isnan(float(value)) else f"{float(value) * 100:.1f}%"
    interval = (
        ""
        if ci is None or math.isnan(ci.low)
        else (f" (95% CI {ci.low * 100:.1f}–{ci.high * 100:.1f}%)")
    )
    typer.echo(
        f"{report.task} · {report.scorer} {report.scorer_version} · n={report.n} · "
        f"{report.headline} {shown}{interval}"
    )
    typer.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


def gate(
    baseline: Annotated[
        Path, typer.Option(exists=True, dir_okay=False, help="Baseline report.json.")
    ],
    candidate: Annotated[
        Path, typer.Option(exists=True, dir_okay=False, help="Candidate report.json.")
    ],
    tolerance: Annotated[
        float,
        typer.Option(min=0.0, help="Largest drop of the headline metric accepted (0.02 = 2 pp)."),
    ] = 0.02,
    alpha: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Significance level (McNemar, CI at 1 - alpha).")
    ] = 0.05,
) -> None:
    """Fail (exit 1) when the candidate is worse than the baseline by more than --tolerance,
    significantly; see benchmark/gate.py for the exact rule."""
    from rich.console import Console

    from benchmark.errors import BenchmarkError
    from benchmark.gate import compare, table
    from benchmark.result import load_report

    try:
        result = compare(load_report(baseline), load_report(candidate), tolerance, alpha)
    except BenchmarkError as exc:
        raise _fail(str(exc)) from None
    Console().print(table(result))
    if not result.passed:
        raise typer.Exit(1)
