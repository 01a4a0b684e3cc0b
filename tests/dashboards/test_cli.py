"""`uxmon dashboards render` and `uxmon dashboards push` through the real command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from dashboards.render import rendered
from stream.broker import free_port
from stream.cli import app
from tests.dashboards.grafana_contract import GrafanaContract

runner = CliRunner()
TOKEN = "glsa_cli_secret"


def test_render_writes_every_dashboard(tmp_path: Path) -> None:
    out = tmp_path / "json"
    result = runner.invoke(app, ["dashboards", "render", "--out", str(out)])
    assert result.exit_code == 0, result.output
    expected = rendered()
    assert sorted(p.name for p in out.iterdir()) == sorted(expected)
    for name, text in expected.items():
        assert (out / name).read_text(encoding="utf-8") == text


def test_push_to_unreachable_url_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXMON_GRAFANA_TOKEN", TOKEN)
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    result = runner.invoke(app, ["dashboards", "push", "--url", url, "--timeout", "2"])
    assert result.exit_code == 1
    assert f"cannot reach Grafana at {url}" in result.output
    assert TOKEN not in result.output
    assert "Traceback" not in result.output


def test_push_with_a_bad_url_is_bad_input() -> None:
    result = runner.invoke(app, ["dashboards", "push", "--url", "grafana:3000"])
    assert result.exit_code == 2
    assert "expected a Grafana URL" in result.output


def test_push_reports_each_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXMON_GRAFANA_TOKEN", TOKEN)
    monkeypatch.delenv("UXMON_GRAFANA_USER", raising=False)
    with GrafanaContract(authorization=f"Bearer {TOKEN}") as grafana:
        args = [
            "dashboards",
            "push",
            "--url",
            grafana.url,
            "--folder",
            "uxmon",
            "--datasource-url",
            "http://prometheus:9090",
        ]
        first = runner.invoke(app, args)
        second = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "datasource uxmon-prometheus: created" in first.output
    assert first.output.count(": created") == 2 + len(rendered())
    assert second.exit_code == 0, second.output
    assert second.output.count(": unchanged") == 2 + len(rendered())
    assert TOKEN not in first.output + second.output


def test_push_with_wrong_credentials_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXMON_GRAFANA_TOKEN", "not-the-token")
    with GrafanaContract(authorization=f"Bearer {TOKEN}") as grafana:
        result = runner.invoke(app, ["dashboards", "push", "--url", grafana.url])
    assert result.exit_code == 1
    assert "refused the credentials (401)" in result.output
    assert "not-the-token" not in result.output
