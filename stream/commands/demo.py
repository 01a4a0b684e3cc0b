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

import httpx
import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

from stream.broker import EmbeddedBroker, port_free
from stream.commands.replay import produce, read_events
from stream.local import LocalWorker, Samples, scrape, total
from stream.metrics import EVENTS_CONSUMED


def sample_traffic() -> Path:
    path = Path(str(resources.files("stream") / "data" / "sample_traffic.jsonl"))
    if not path.is_file():
        raise typer.BadParameter(f"bundled sample traffic missing at {path}; reinstall uxmon")
    return path


JUDGE = "ux_judge"  # the demo runs the default scorers
TURNS_TOPIC = "uxmon.turns"

# A batch waits for its GRM verdicts (stream/pipeline.score_batch), and the sample traffic
# is complaint-heavy: every recovery reply wants one, outside the token bucket. On two CPU
# cores a verdict costs 0.3-1.3 s of both, so with the defaults (4 per batch, 5 s deadline)
# the GRM set the pace and events waited a minute and more. One verdict per batch and a
# one-second wait keep it off the critical path; the recovery replies past that bound are
# judged by the UX-Judge alone and counted as skipped (queue_full, deadline, busy).
DEMO_GRM_SETTINGS = {"grm_max_per_batch": "1", "grm_deadline_s": "2"}

# The replay stays at most this many events ahead of what the worker has applied. Events in
# flight divided by events per second is the mean wait (Little's law), so on a slow or busy
# machine the replay slows down instead of the queue growing without end.
AHEAD = 24
CHUNK = 8  # events produced between two looks at the worker's progress


class Replay:
    """Sends the sample traffic at up to `rate` events/s, paced to what the worker sustains."""

    def __init__(
        self, traffic: list[tuple[bytes | None, bytes]], broker: str, worker: LocalWorker
    ) -> None:
        self.traffic = traffic
        self.broker = broker
        self.worker = worker
        self.sent = 0

    @property
    def done(self) -> bool:
        return self.sent >= len(self.traffic)

    def applied(self) -> float:
        """Events the worker has read and applied (its counter moves once per batch)."""
        try:
            return total(scrape(self.worker.url), EVENTS_CONSUMED)
        except httpx.HTTPError:
            return 0.0

    def run(self, rate: float) -> None:
        for start in range(0, len(self.traffic), CHUNK):
            while self.sent - self.applied() >= AHEAD:
                if not self.worker.alive():
                    return
                time.sleep(0.2)
            chunk = self.traffic[start : start + CHUNK]
            produce(chunk, self.broker, TURNS_TOPIC, rate, False, True)
            self.sent += len(chunk)


def summary(m: Samples) -> dict[str, float]:
    closed = "uxmon_recovery_episodes_closed_total"
    return {
        "consumed": total(m, EVENTS_CONSUMED),
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


def mean_lag(s: dict[str, float]) -> str:
    return f"{s['lag_s'] / s['lag_n']:.2f}s" if s["lag_n"] else "-"


def render(m: Samples, url: str, replay: Replay) -> Table:
    s = summary(m)
    table = Table(title=f"uxmon demo · {url}", show_header=False)
    sent = f"{replay.sent} of {len(replay.traffic)}" + (" (all sent)" if replay.done else "")
    table.add_row("events replayed", sent)
    table.add_row("events consumed", f"{s['consumed']:.0f}")
    table.add_row("  waiting for the worker", f"{max(replay.sent - s['consumed'], 0):.0f}")
    table.add_row("mean event→score", mean_lag(s))
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
    by_scenario: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for labels, value in m.get("uxmon_turns_scored_total", []):
        if labels["scorer"] != JUDGE:
            continue
        by_scenario[labels["scenario"]][labels["verdict"] == "bad"] += value
    for scenario, (good, bad) in sorted(by_scenario.items()):
        table.add_row(f"  {scenario}", f"{bad / (good + bad):.0%} dissatisfied of {good + bad:.0f}")
    return table


def line(m: Samples, replay: Replay) -> str:
    s = summary(m)
    return (
        f"sent={replay.sent} consumed={s['consumed']:.0f} scored={s['scored']:.0f} "
        f"dissatisfied={s['bad']:.0f} grm={s['grm']:.0f} "
        f"reactions={s['reactions']:.0f} episodes={s['opened']:.0f} "
        f"recovered={s['recovered']:.0f} dead_lettered={s['dead']:.0f} "
        f"mean_event_to_score={mean_lag(s)}"
    )


def demo(
    duration: Annotated[
        float, typer.Option(help="Seconds to run once the worker is ready (0 = until Ctrl-C)")
    ] = 0,
    rate: Annotated[
        float, typer.Option(help="Most sample events per second (slower if the worker lags)")
    ] = 40,
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
            **DEMO_GRM_SETTINGS,
        ).start()
        try:
            console.print(f"broker {broker.address} · logs in {workdir}")
            with console.status("loading models and joining the consumer group…"):
                worker.wait_ready()
            console.print(f"worker ready · metrics at [bold]{worker.url}[/bold]")
            console.print(
                "dashboards: `uxmon dashboards render` (or `push --url GRAFANA`), "
                "for a Prometheus scraping that URL; the conversations behind a number: "
                f"`uxmon inspect` on broker {broker.address} while this runs"
            )
            replay = Replay(traffic, broker.address, worker)
            threading.Thread(target=replay.run, args=(rate,), daemon=True).start()
            console.print(
                f"replaying {len(traffic)} sample events at up to {rate:g}/s, "
                f"at most {AHEAD} ahead of the worker (Ctrl-C stops)"
            )
            _show(worker, replay, duration, headless, console)
            final = worker.samples()
            console.print(f"final: {line(final, replay)}", soft_wrap=True)
            if total(final, "uxmon_turns_scored_total") == 0:
                console.print("[red]no turns were scored[/red]")
                raise typer.Exit(1)
        finally:
            worker.stop()


def _show(
    worker: LocalWorker, replay: Replay, duration: float, headless: bool, console: Console
) -> None:
    end = time.monotonic() + duration if duration else float("inf")
    try:
        if headless:
            while time.monotonic() < end and worker.alive():
                time.sleep(2)
                console.print(line(worker.samples(), replay), soft_wrap=True)  # one per line
            return
        with Live(render(worker.samples(), worker.url, replay), console=console) as live:
            while time.monotonic() < end and worker.alive():
                time.sleep(1)
                live.update(render(worker.samples(), worker.url, replay))
    except KeyboardInterrupt:
        pass
