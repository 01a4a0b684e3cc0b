"""Links between the dashboards, exemplar requests on the panels that show dissatisfaction,
recovery outcomes and scores, and the exemplar link template (dashboards.exemplars)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.testing import CliRunner

from dashboards import recovery, ux_overview
from dashboards.exemplars import ConversationUrlError, destinations
from dashboards.render import as_dicts, dashboard_url
from stream.cli import app
from stream.metrics import EPISODES_CLOSED, REACTIONS, SCORE, TURN_VERDICTS, TURNS_SCORED

#: Series the worker exports with exemplars (conversation_id, turn_id).
WITH_EXEMPLARS = (TURN_VERDICTS, TURNS_SCORED, REACTIONS, EPISODES_CLOSED, f"{SCORE}_bucket")
EXEMPLAR_DASHBOARDS = (ux_overview.UID, recovery.UID)
TEMPLATE = "https://chat-admin.example.com/c/{conversation_id}"


def _targets(dashboard: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [
        (panel, target)
        for panel in dashboard["panels"]
        if panel["type"] != "row"
        for target in panel.get("targets", [])
    ]


def _reads_exemplar_series(expr: str) -> bool:
    return any(re.search(rf"\b{re.escape(name)}\b", expr) for name in WITH_EXEMPLARS)


def test_every_dashboard_links_to_every_other_keeping_time_and_variables() -> None:
    dashboards = as_dicts()
    for uid, dashboard in dashboards.items():
        links = dashboard["links"]
        urls = [link["url"] for link in links]
        assert sorted(urls) == sorted(dashboard_url(u) for u in dashboards if u != uid)
        for link in links:
            assert link["type"] == "link" and link["keepTime"] and link["includeVars"]
            target = link["url"].removeprefix("/d/")
            assert target in dashboards, f"{uid} links to unknown dashboard {target}"
            assert dashboards[target]["title"].endswith(link["title"])


@pytest.mark.parametrize("uid", EXEMPLAR_DASHBOARDS)
def test_range_targets_on_exemplar_series_request_exemplars(uid: str) -> None:
    """Range queries only: Prometheus returns exemplars over a range, stats read an instant."""
    requested = 0
    for panel, target in _targets(as_dicts()[uid]):
        graphed = panel["type"] in ("timeseries", "heatmap")
        wanted = graphed and _reads_exemplar_series(target["expr"])
        assert bool(target.get("exemplar")) == wanted, (panel["title"], target["expr"])
        assert not (target.get("exemplar") and target.get("instant")), panel["title"]
        requested += wanted
    assert requested


def test_the_panels_the_issue_names_request_exemplars() -> None:
    titles = {
        panel["title"]
        for uid in EXEMPLAR_DASHBOARDS
        for panel, target in _targets(as_dicts()[uid])
        if target.get("exemplar")
    }
    assert {
        "Dissatisfaction rate: raw vs corrected",
        "Reactions by kind",
        "Score quantiles by scorer",
        "Score distribution ($scorer)",
        "Outcomes over time",
    } <= titles


def test_other_dashboards_request_no_exemplars() -> None:
    for uid, dashboard in as_dicts().items():
        if uid not in EXEMPLAR_DASHBOARDS:
            assert not any(t.get("exemplar") for _, t in _targets(dashboard)), uid


# --- the link template --------------------------------------------------------------------


def test_template_becomes_a_grafana_exemplar_destination() -> None:
    assert destinations(TEMPLATE) == [
        {
            "name": "conversation_id",
            "url": "https://chat-admin.example.com/c/${__value.raw}",
            "urlDisplayLabel": "Open conversation",
        }
    ]
    [turn] = destinations("https://admin.example.com/turns/{turn_id}?tab=score")
    assert turn["name"] == "turn_id"
    assert turn["url"] == "https://admin.example.com/turns/${__value.raw}?tab=score"


def test_unset_template_means_no_link() -> None:
    assert destinations(None) == [] and destinations("") == []


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("https://x.example.com/c/{conversation}", "unknown placeholder {conversation}"),
        ("https://x.example.com/c/{user_id}/{turn_id}", "unknown placeholder {user_id}"),
        ("https://x.example.com/c/", "exactly one placeholder"),
        ("https://x.example.com/{conversation_id}/{turn_id}", "exactly one placeholder"),
        ("https://x.example.com/c/{conversation_id}}", "unbalanced brace"),
        ("chat-admin/c/{conversation_id}", "http(s) URL"),
    ],
)
def test_malformed_templates_are_refused(template: str, message: str) -> None:
    with pytest.raises(ConversationUrlError, match=re.escape(message)):
        destinations(template)


def test_malformed_template_is_a_one_line_error_exit_2(tmp_path: Any) -> None:
    runner = CliRunner()
    for command in (
        ["dashboards", "render", "--out", str(tmp_path), "--datasource-file", str(tmp_path / "d")],
        ["dashboards", "push", "--url", "http://127.0.0.1:9"],
    ):
        result = runner.invoke(
            app, command, env={"UXMON_CONVERSATION_URL": "https://x.example.com/{user_id}"}
        )
        assert result.exit_code == 2, result.output
        assert result.output.strip().splitlines() == [
            "error: UXMON_CONVERSATION_URL: unknown placeholder {user_id}; "
            "expected one of {conversation_id}, {turn_id}"
        ]
        assert "Traceback" not in result.output
    assert not (tmp_path / "d").exists()
