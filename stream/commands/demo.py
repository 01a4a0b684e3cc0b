"""`uxmon demo`: an embedded broker, a real worker, bundled sample traffic, live numbers."""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from collections import defaultdict
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from stream.broker import EmbeddedBroker, port_free
from stream.commands.replay import produce, read_events
from stream.local import LocalWorker, Samples, total


def sample_traffic() -> Path:
    path = Path(str(resources.files("stream") / "data" / "sample_traffic.jsonl"))
    if not path.is_file():
        raise typer.BadParameter(f"bundled sample traffic missing at {path}; reinstall uxmon")
    return path


JUDGE = "ux_judge"  # the demo runs the default scorers


def summary(m: Samples) -> dict[str, float]:
    closed = "uxmon_recovery_episodes_closed_total"
    return {
        "consumed": total(m, "uxmon_events_consumed_total"),
        "scored": total(m, "uxmon_turns_scored_total", scorer=JUDGE),
        "bad": total(m, "uxmon_turns_scored_total", scorer=JUDGE, verdict="bad"),
        "grm": total(m, "uxmon_grm_verdicts_total"),
        "grm_skipped": total(m, "uxmon_grm_skipped_total"),
        "dead": total(m, "uxmon_events_rejected_total"),
        "thumbs_down": total(m, "uxmon_feedback_total", kind="thumbs_down"),
        "reactions": total(m, "uxmon_reactions_total"),
        "unhappy": total(m, "uxmon_reactions_total")
        - total(m, "uxmon_reactions_total", reaction="satisfied")
        - total(m, "uxmon_reactions_total", reaction="no_follow_up"),
        "opened": total(m, "uxmon_recovery_episodes_opened_total"),
        "closed": total(m, closed),
        "recovered": total(m, closed, outcome="recovered"),
        "lag_n": total(m, "uxmon_event_to_score_seconds_count"),
        "lag_s": total(m, "uxmon_event_to_score_seconds_sum"),
    }


def _share(part: float, whole: float) -> str:
    return f" ({part / whole:.1%})" if whole else ""


def render(m: Samples, url: str) -> Table:
    s = summary(m)
    table = Table(title=f"uxmon demo · {url}", show_header=False)
    table.add_row("events consumed", f"{s['consumed']:.0f}")
    table.add_row("assistant turns scored", f"{s['scored']:.0f}")
    table.add_row("predicted dissatisfied", f"{s['bad']:.0f}{_share(s['bad'], s['scored'])}")
    table.add_row("GRM verdicts / skipped", f"{s['grm']:.0f} / {s['grm_skipped']:.0f}")
    reacted = f"{s['unhappy']:.0f} of {s['reactions']:.0f}{_share(s['unhappy'], s['reactions'])}"
    table.add_row("dissatisfied reactions", reacted)
    table.add_row("thumbs down", f"{s['thumbs_down']:.0f}")
    recovered = f"{s['recovered']:.0f} of {s['closed']:.0f}{_share(s['recovered'], s['closed'])}"
    table.add_row("recovery episodes opened", f"{s['opened']:.0f}")
    table.add_row("recovered (of closed)", recovered)
    table.add_row("dead-lettered", f"{s['dead']:.0f}")
    table.add_row("mean event→score", f"{s['lag_s'] / s['lag_n']:.2f}s" if s["lag_n"] else "-")
    by_scenario: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for labels, value in m.get("uxmon_turns_scored_total", []):
        if labels["scorer"] != JUDGE:
            continue
        by_scenario[labels["scenario"]][labels["verdict"] == "bad"] += value
    for scenario, (good, bad) in sorted(by_scenario.items()):
        table.add_row(f"  {scenario}", f"{bad / (good + bad):.0%} dissatisfied of {good + bad:.0f}")
    return table


def demo(
    duration: Annotated[
        float, typer.Option(help="Seconds to run once the worker is ready (0 = until Ctrl-C)")
    ] = 0,
    rate: Annotated[float, typer.Option(help="Sample events per second")] = 40,
    headless: Annotated[bool, typer.Option(help="Plain lines instead of a live table")] = False,
    metrics_port: Annotated[int, typer.Option(help="Port of the worker's /metrics")] = 9108,
) -> None:
    """Run uxmon end to end on this machine and show what it sees."""
    console = Console()
    workdir = Path(tempfile.mkdtemp(prefix="uxmon-demo-"))
    traffic = read_events(sample_traffic())
    with EmbeddedBroker(log_path=workdir / "broker.log") as broker:
        worker = LocalWorker(
            broker.address,
            f"uxmon-demo-{uuid.uuid4().hex[:6]}",
            workdir,
            metrics_port=metrics_port if port_free(metrics_port) else 0,
        ).start()
        try:
            console.print(f"broker {broker.address} · logs in {workdir}")
            with console.status("loading models and joining the consumer group…"):
                worker.wait_ready()
            console.print(f"worker ready · metrics at [bold]{worker.url}[/bold]")
            threading.Thread(
                target=produce,
                args=(traffic, broker.address, "uxmon.turns", rate, False, True),
                daemon=True,
            ).start()
            console.print(f"replaying {len(traffic)} sample events at {rate:g}/s (Ctrl-C stops)")
            _show(worker, duration, headless, console)
            if total(worker.samples(), "uxmon_turns_scored_total") == 0:
                console.print("[red]no turns were scored[/red]")
                raise typer.Exit(1)
        finally:
            worker.stop()


def _show(worker: LocalWorker, duration: float, headless: bool, console: Console) -> None:
    end = time.monotonic() + duration if duration else float("inf")
    try:
        if headless:
            while time.monotonic() < end and worker.alive():
                time.sleep(2)
                s = summary(worker.samples())
                console.print(
                    f"consumed={s['consumed']:.0f} scored={s['scored']:.0f} "
                    f"dissatisfied={s['bad']:.0f} grm={s['grm']:.0f} "
                    f"reactions={s['reactions']:.0f} episodes={s['opened']:.0f} "
                    f"recovered={s['recovered']:.0f} dead_lettered={s['dead']:.0f}"
                )
            return
        with Live(render(worker.samples(), worker.url), console=console) as live:
            while time.monotonic() < end and worker.alive():
                time.sleep(1)
                live.update(render(worker.samples(), worker.url))
    except KeyboardInterrupt:
        pass
