"""Every dashboard target that requests exemplars finds them on a real Prometheus
(--enable-feature=exemplar-storage) scraping an OpenMetrics exporter whose series carry
`conversation_id` and `turn_id` exemplars, as the worker's will."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server

from dashboards import render
from stream.broker import free_port
from stream.metrics import EPISODES_CLOSED, REACTIONS, SCORE, TURN_VERDICTS, TURNS_SCORED
from tests.dashboards.test_queries_prometheus import substitute
from tests.support.prometheus import Prometheus

pytestmark = pytest.mark.integration

TRAFFIC = ("Casual Chat & Companionship", "bot-a")


def _feed(registry: CollectorRegistry) -> None:
    def ids(n: int) -> dict[str, str]:
        return {"conversation_id": f"c-{n}", "turn_id": f"t-{n}"}

    turns = Counter(
        TURNS_SCORED.removesuffix("_total"),
        "turns",
        ["scorer", "verdict", "scenario", "assistant"],
        registry=registry,
    )
    verdicts = Counter(
        TURN_VERDICTS.removesuffix("_total"),
        "verdicts",
        ["verdict", "decided_by", "scenario", "assistant"],
        registry=registry,
    )
    reactions = Counter(
        REACTIONS.removesuffix("_total"),
        "reactions",
        ["reaction", "scenario", "assistant"],
        registry=registry,
    )
    closed = Counter(
        EPISODES_CLOSED.removesuffix("_total"),
        "closed",
        ["outcome", "scenario", "assistant"],
        registry=registry,
    )
    score = Histogram(SCORE, "score", ["scorer"], registry=registry, buckets=(0.25, 0.5, 0.75))
    for n in range(12):
        for scorer in ("ux_judge", "grm"):
            for verdict in ("bad", "good"):
                turns.labels(scorer, verdict, *TRAFFIC).inc(exemplar=ids(n))
            score.labels(scorer).observe(0.1 + 0.07 * n, exemplar=ids(n))
        verdicts.labels("bad", "ux_judge", *TRAFFIC).inc(exemplar=ids(n))
        verdicts.labels("good", "grm", *TRAFFIC).inc(exemplar=ids(n))
        reactions.labels("complaint", *TRAFFIC).inc(exemplar=ids(n))
        closed.labels("recovered", *TRAFFIC).inc(exemplar=ids(n))
        time.sleep(0.5)


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prometheus]:
    registry = CollectorRegistry()
    port = free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    try:
        workdir: Path = tmp_path_factory.mktemp("prometheus-exemplars")
        with Prometheus(workdir, [f"127.0.0.1:{port}"], scrape_interval="1s") as running:
            _feed(registry)
            time.sleep(2)
            yield running
    finally:
        server.shutdown()
        thread.join(5)


def exemplar_targets() -> list[tuple[str, str, str]]:
    return [
        (uid, panel["title"], target["expr"])
        for uid, dashboard in render.as_dicts().items()
        for panel in dashboard["panels"]
        for target in panel.get("targets", [])
        if target.get("exemplar")
    ]


@pytest.mark.parametrize(("uid", "title", "expr"), exemplar_targets())
def test_exemplar_target_finds_ids(prometheus: Prometheus, uid: str, title: str, expr: str) -> None:
    found = prometheus.exemplars(substitute(expr, uid))
    assert found, f"{uid} / {title}: no exemplars for {expr}"
    assert all(set(labels) == {"conversation_id", "turn_id"} for labels in found)
