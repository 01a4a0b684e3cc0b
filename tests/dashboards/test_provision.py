"""`push` against Grafana's HTTP API contract (a real HTTP server, tests/dashboards/
grafana_contract.py): the exact calls, the auth header, and idempotency."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from dashboards.errors import DashboardsError, GrafanaError
from dashboards.grafana import Credentials, Grafana
from dashboards.provision import DATASOURCE_NAME, folder_uid, push
from dashboards.render import as_dicts
from tests.dashboards.grafana_contract import GrafanaContract

TOKEN = "glsa_test_token_value"
BEARER = f"Bearer {TOKEN}"
UIDS = sorted(as_dicts())


def first_push_calls(folder: str) -> list[tuple[str, str]]:
    calls = [
        ("GET", "/api/health"),
        ("GET", f"/api/datasources/name/{DATASOURCE_NAME}"),
        ("POST", "/api/datasources"),
        ("GET", f"/api/folders/{folder}"),
        ("POST", "/api/folders"),
    ]
    for uid in UIDS:
        calls += [("GET", f"/api/dashboards/uid/{uid}"), ("POST", "/api/dashboards/db")]
    return calls


def reads_only(folder: str) -> list[tuple[str, str]]:
    return [
        ("GET", "/api/health"),
        ("GET", f"/api/datasources/name/{DATASOURCE_NAME}"),
        ("GET", f"/api/folders/{folder}"),
        *(("GET", f"/api/dashboards/uid/{uid}") for uid in UIDS),
    ]


@pytest.fixture
def grafana() -> Iterator[GrafanaContract]:
    with GrafanaContract(authorization=BEARER) as server:
        yield server


def run_push(server: GrafanaContract, credentials: Credentials | None, **options: str) -> list[str]:
    client = Grafana(server.url, credentials, timeout_s=5)
    changes = push(
        client,
        as_dicts(),
        folder_title=options.get("folder", "uxmon"),
        prometheus_url=options.get("datasource_url", "http://prometheus:9090"),
        conversation_url=options.get("conversation_url"),
    )
    return [str(change) for change in changes]


def test_first_push_creates_everything_with_exact_calls(grafana: GrafanaContract) -> None:
    changes = run_push(grafana, Credentials(token=TOKEN))

    assert grafana.calls == first_push_calls("uxmon")
    assert {c.authorization for c in grafana.state.calls} == {BEARER}
    assert changes == [
        f"datasource {DATASOURCE_NAME}: created",
        "folder uxmon: created",
        *(f"dashboard {uid}: created" for uid in UIDS),
    ]
    (datasource,) = grafana.state.datasources.values()
    assert datasource["name"] == DATASOURCE_NAME
    assert datasource["uid"] == "uxmon-prometheus"  # what the dashboards' variable selects
    assert datasource["type"] == "prometheus"
    assert datasource["url"] == "http://prometheus:9090"
    assert grafana.state.folders["uxmon"]["title"] == "uxmon"
    rendered = as_dicts()
    for uid in UIDS:
        stored = grafana.state.dashboards[uid]
        assert stored["folderUid"] == "uxmon"
        assert {k: v for k, v in stored["dashboard"].items() if k not in ("id", "version")} == (
            rendered[uid]
        )
    save = next(c for c in grafana.state.calls if c.path == "/api/dashboards/db")
    assert save.body["overwrite"] is True and save.body["folderUid"] == "uxmon"


def test_second_push_writes_nothing(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN))
    before = repr(grafana.state.datasources) + repr(grafana.state.dashboards)
    grafana.state.calls.clear()

    changes = run_push(grafana, Credentials(token=TOKEN))

    assert grafana.calls == reads_only("uxmon")
    assert all(change.endswith(": unchanged") for change in changes)
    assert repr(grafana.state.datasources) + repr(grafana.state.dashboards) == before


def test_new_datasource_url_updates_the_same_datasource(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN))
    (original,) = grafana.state.datasources.values()
    original_id = original["id"]
    grafana.state.calls.clear()

    changes = run_push(
        grafana, Credentials(token=TOKEN), datasource_url="http://prom.monitoring:9090"
    )

    assert grafana.writes() == [("PUT", f"/api/datasources/{original_id}")]
    assert changes[0] == f"datasource {DATASOURCE_NAME}: updated"
    (updated,) = grafana.state.datasources.values()
    assert updated["id"] == original_id and updated["version"] == 2
    assert updated["url"] == "http://prom.monitoring:9090"


def test_admin_settings_on_the_datasource_survive_an_update(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN))
    (datasource,) = grafana.state.datasources.values()
    datasource["jsonData"]["timeInterval"] = "15s"  # set by an admin in the UI

    run_push(grafana, Credentials(token=TOKEN), datasource_url="http://other:9090")

    assert datasource["jsonData"] == {
        "httpMethod": "POST",
        "timeInterval": "15s",
        "exemplarTraceIdDestinations": [],
    }


CONVERSATION_URL = "https://chat-admin.example.com/c/{conversation_id}"
DESTINATION = {
    "name": "conversation_id",
    "url": "https://chat-admin.example.com/c/${__value.raw}",
    "urlDisplayLabel": "Open conversation",
}


def test_the_datasource_request_carries_the_exemplar_link(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN), conversation_url=CONVERSATION_URL)

    create = next(c for c in grafana.state.calls if c.path == "/api/datasources")
    assert create.method == "POST"
    assert create.body["jsonData"]["exemplarTraceIdDestinations"] == [DESTINATION]
    (datasource,) = grafana.state.datasources.values()
    assert datasource["jsonData"]["exemplarTraceIdDestinations"] == [DESTINATION]
    grafana.state.calls.clear()
    run_push(grafana, Credentials(token=TOKEN), conversation_url=CONVERSATION_URL)
    assert grafana.writes() == [], "the same template writes nothing"


def test_unsetting_the_template_removes_the_exemplar_link(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN), conversation_url=CONVERSATION_URL)
    (datasource,) = grafana.state.datasources.values()
    grafana.state.calls.clear()

    changes = run_push(grafana, Credentials(token=TOKEN))

    assert grafana.writes() == [("PUT", f"/api/datasources/{datasource['id']}")]
    assert changes[0] == f"datasource {DATASOURCE_NAME}: updated"
    update = next(c for c in grafana.state.calls if c.method == "PUT")
    assert update.body["jsonData"]["exemplarTraceIdDestinations"] == []


def test_a_malformed_template_fails_before_any_request(grafana: GrafanaContract) -> None:
    with pytest.raises(DashboardsError, match=r"unknown placeholder \{id\}"):
        run_push(grafana, Credentials(token=TOKEN), conversation_url="https://x.example.com/{id}")
    assert grafana.calls == []


def test_a_dashboard_edited_in_grafana_is_put_back(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN))
    edited = UIDS[0]
    grafana.state.dashboards[edited]["dashboard"]["title"] = "edited by hand"
    grafana.state.calls.clear()

    changes = run_push(grafana, Credentials(token=TOKEN))

    assert grafana.writes() == [("POST", "/api/dashboards/db")]
    assert f"dashboard {edited}: updated" in changes
    stored = grafana.state.dashboards[edited]["dashboard"]
    assert stored["title"] == as_dicts()[edited]["title"] and stored["version"] == 2


def test_folder_title_gives_a_stable_uid(grafana: GrafanaContract) -> None:
    run_push(grafana, Credentials(token=TOKEN), folder="UX Monitoring")
    assert folder_uid("UX Monitoring") == "ux-monitoring"
    assert grafana.state.folders["ux-monitoring"]["title"] == "UX Monitoring"
    assert {d["folderUid"] for d in grafana.state.dashboards.values()} == {"ux-monitoring"}


def test_basic_auth_header() -> None:
    expected = "Basic " + base64.b64encode(b"admin:s3cret-pw").decode()
    with GrafanaContract(authorization=expected) as server:
        run_push(server, Credentials(user="admin", password="s3cret-pw"))
        assert {c.authorization for c in server.state.calls[1:]} == {expected}
        assert len(server.state.dashboards) == len(UIDS)


def test_wrong_token_is_a_clear_error_without_the_secret(grafana: GrafanaContract) -> None:
    with pytest.raises(GrafanaError) as raised:
        run_push(grafana, Credentials(token="wrong-token-123"))
    message = str(raised.value)
    assert "401" in message and "UXMON_GRAFANA_TOKEN" in message
    assert "wrong-token-123" not in message
    assert grafana.writes() == []


def test_unhealthy_grafana_stops_before_any_write(grafana: GrafanaContract) -> None:
    grafana.healthy = False
    with pytest.raises(GrafanaError, match="503"):
        run_push(grafana, Credentials(token=TOKEN))
    assert grafana.calls == [("GET", "/api/health")]


def test_credentials_from_env() -> None:
    assert Credentials.from_env({}) is None
    assert Credentials.from_env({"UXMON_GRAFANA_TOKEN": "t"}) == Credentials(token="t")
    basic = Credentials.from_env({"UXMON_GRAFANA_USER": "u", "UXMON_GRAFANA_PASSWORD": "p"})
    assert basic == Credentials(user="u", password="p")
    assert "p" not in repr(basic).replace("password", "").replace("user", "")
    with pytest.raises(GrafanaError, match="both"):
        Credentials.from_env({"UXMON_GRAFANA_USER": "u"})


def test_credentials_in_the_url_are_refused() -> None:
    with pytest.raises(GrafanaError, match="not in the URL") as raised:
        Grafana("http://admin:hunter2@grafana:3000")
    assert "hunter2" not in str(raised.value)
