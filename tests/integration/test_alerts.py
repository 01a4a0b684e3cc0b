"""End to end: a real worker -> a real Prometheus with uxmon's rules -> a real Alertmanager
with uxmon's example routing -> a webhook, for the alert on failing recoveries.

The alert rules are a test copy of deploy/prometheus/rules/alerts.yml in which every
`for:` is 0s. `for:` only delays firing until a condition has held that long (15 minutes
for this alert); waiting that out would make the test take a quarter of an hour and prove
nothing more. Windows, thresholds and expressions are kept, so the condition that fires
is the shipped one, evaluated on the worker's real metrics. The Alertmanager runs the
shipped deploy/alertmanager/alertmanager.yml with every receiver pointed at the test's
webhook (one path per receiver) and its grouping waits shortened to a second, so the test
also shows where a warning is routed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from stream.broker import free_port
from stream.local import LocalWorker
from tests.deploy.test_prometheus_rules import ALERTMANAGER_CONFIG, RULES_DIR
from tests.support.prometheus import Alertmanager, Prometheus
from tests.support.services import produce

pytestmark = pytest.mark.integration

Start = Callable[..., LocalWorker]
ALERT = "UxmonRecoveryRateLow"
MIN_EPISODES = 20  # the alert's `uxmon:recovery_episodes_closed:increase1h >= 20`

# A question, an answer that misses, a complaint, a second miss, a second complaint: the
# second complaint is a dissatisfied reaction inside the open episode, which closes failed.
EXCHANGES = [
    (
        "帮我查一下明天北京的天气",
        "北京是中国的首都，有三千多年的建城史。",
        "不对，这不是我问的",
        "抱歉。北京有很多名胜古迹，比如故宫和长城。",
        "还是不对，你没听懂我的问题",
    ),
    (
        "How do I export my contacts to a CSV file?",
        "Contacts are the people you keep in your address book.",
        "That's not what I asked",
        "Sorry! An address book stores names, numbers and emails.",
        "No, that's still not what I asked",
    ),
]
# Seconds after the conversation starts: answers come quickly, complaints after reading.
OFFSETS = (0, 4, 25, 31, 52)


def failing_recovery(cid: str, start: datetime, variant: int) -> list[dict[str, Any]]:
    texts = EXCHANGES[variant % len(EXCHANGES)]
    roles = ("user", "assistant", "user", "assistant", "user")
    return [
        {
            "schema_version": 1,
            "type": "turn",
            "conversation_id": cid,
            "turn_id": f"t{k}",
            "role": role,
            "text": text,
            "ts": (start + timedelta(seconds=offset)).isoformat(),
            "assistant_id": "web",
            "scenario": "Information & Knowledge Seeking",
            "locale": "zh-CN" if variant % 2 == 0 else "en-US",
        }
        for k, (role, text, offset) in enumerate(zip(roles, texts, OFFSETS, strict=True))
    ]


def conversations(prefix: str, count: int, start: datetime) -> list[tuple[bytes, bytes]]:
    records = []
    for i in range(count):
        cid = f"{prefix}-{i:03d}"
        for event in failing_recovery(cid, start + timedelta(seconds=2 * i), i):
            records.append((cid.encode(), json.dumps(event, ensure_ascii=False).encode()))
    return records


class Webhook:
    """An HTTP server that keeps every Alertmanager notification it receives, by path."""

    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        lock = threading.Lock()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    received.append((self.path, body))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *_: Any) -> None:  # keep the test output quiet
                pass

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def alerts(self, path: str, alertname: str) -> list[dict[str, Any]]:
        return [
            alert
            for where, body in list(self.received)
            if where == path
            for alert in body["alerts"]
            if alert["labels"].get("alertname") == alertname and alert["status"] == "firing"
        ]

    def __enter__(self) -> Webhook:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    with Webhook() as running:
        yield running


def alerts_firing_at_once(workdir: Path) -> Path:
    """The shipped alert rules with every `for:` set to 0s (see the module docstring)."""
    rules = yaml.safe_load((RULES_DIR / "alerts.yml").read_text())
    for group in rules["groups"]:
        for rule in group["rules"]:
            rule["for"] = "0s"
    path = workdir / "alerts-for-0s.yml"
    path.write_text(yaml.safe_dump(rules, allow_unicode=True))
    return path


def shipped_routing_to(webhook: Webhook) -> dict[str, Any]:
    """The shipped Alertmanager config, each receiver posting to webhook/<its name>."""
    config: dict[str, Any] = yaml.safe_load(ALERTMANAGER_CONFIG.read_text())
    config["global"] = {"resolve_timeout": "5m"}  # no SMTP: nothing is mailed from a test
    config["receivers"] = [
        {"name": r["name"], "webhook_configs": [{"url": f"{webhook.url}/{r['name']}"}]}
        for r in config["receivers"]
    ]
    config["route"].update(group_wait="1s", group_interval="1s")
    return config


def firing(prometheus: Prometheus, alertname: str) -> list[dict[str, Any]]:
    return prometheus.query(f'ALERTS{{alertname="{alertname}", alertstate="firing"}}')


def wait_for(check: Callable[[], bool], what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} after {timeout_s}s")
        time.sleep(0.5)


def test_failing_recoveries_reach_the_webhook_as_a_warning(
    broker: str, names: dict[str, str], start_worker: Start, workdir: Path, webhook: Webhook
) -> None:
    worker = start_worker()
    target = f"127.0.0.1:{worker.metrics_port}"
    rules = [RULES_DIR / "recording.yml", alerts_firing_at_once(workdir)]
    config = shipped_routing_to(webhook)
    with (
        Alertmanager(workdir / "alertmanager", webhook.url, config=config) as alertmanager,
        Prometheus(
            workdir / "prometheus",
            [target],
            rule_files=rules,
            alertmanager=alertmanager.address,
        ) as prometheus,
    ):
        now = datetime.now(UTC)
        failed = 'uxmon_recovery_episodes_closed_total{outcome="failed", assistant="web"}'

        def close(prefix: str, count: int, total: int) -> None:
            records = conversations(prefix, count, now - timedelta(minutes=3))
            produce(broker, names["turns_topic"], records)
            reached = prometheus.wait_for(f"sum({failed}) >= {total}", timeout_s=120)
            assert reached, worker.log_tail()

        # One episode makes the labelled counter exist: increase() counts from a series'
        # first sample, so episodes closed before it are not seen in any window.
        close("first", 1, 1)
        # Three more failed episodes: a 0% recovery rate, but too few to mean anything.
        close("few", 3, 4)
        rate = prometheus.wait_for('uxmon:recovery_rate:ratio_rate1h{assistant="web"} == 0', 30)
        assert rate, "no recovery rate for three failed episodes"
        time.sleep(3)  # a few more rule evaluations
        assert not firing(prometheus, ALERT)

        close("many", 22, 26)
        wait_for(
            lambda: bool(webhook.alerts("/uxmon-webhook", ALERT)), f"{ALERT} at the webhook", 60
        )
        wait_for(lambda: bool(webhook.alerts("/uxmon-email", ALERT)), f"{ALERT} by email", 10)

    [alert] = webhook.alerts("/uxmon-webhook", ALERT)[:1]
    assert alert["labels"]["assistant"] == "web"
    assert alert["labels"]["severity"] == "warning"
    assert alert["annotations"]["runbook_url"] == "docs/alerts.md#uxmonrecoveryratelow"
    assert (
        "Only 0% of the recovery episodes of assistant web" in alert["annotations"]["description"]
    )
    assert not webhook.alerts("/uxmon-pager", ALERT)  # a warning never pages
    assert worker.total("uxmon_recovery_episodes_closed_total", outcome="recovered") == 0
    assert worker.total("uxmon_recovery_episodes_closed_total", outcome="failed") >= MIN_EPISODES
