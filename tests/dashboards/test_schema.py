"""Every committed dashboard parses with Grafana's own typed models (grafana-foundation-sdk)
without losing or mistyping anything, and matches what the code renders now."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.cog.runtime import panelcfg_config
from grafana_foundation_sdk.models import dashboard as models
from grafana_foundation_sdk.models import prometheus

from dashboards.render import BUILDERS, DEFAULT_DIR, rendered

register_default_plugins()  # panel and query types known to the sdk's decoders

COMMITTED = sorted(DEFAULT_DIR.glob("*.json"))


def schema_problems(data: dict[str, Any]) -> list[str]:
    """What the sdk's typed models do not accept: fields they drop or change on a round
    trip, panel types without a typed config, targets that are not Prometheus queries."""
    problems = []
    parsed = models.Dashboard.from_json(data)
    again = json.loads(json.dumps(parsed, cls=JSONEncoder))
    if again != data:
        problems.append(f"not preserved by the typed model: {_first_difference(data, again)}")
    for panel in parsed.panels or []:
        if isinstance(panel, models.RowPanel):
            continue
        if panelcfg_config(panel.type_val) is None:
            problems.append(f"panel {panel.id_val}: unknown panel type {panel.type_val!r}")
        elif isinstance(panel.options, dict):
            problems.append(f"panel {panel.id_val}: options not parsed into a typed model")
        for target in panel.targets or []:
            if not isinstance(target, prometheus.Dataquery):
                problems.append(f"panel {panel.id_val}: target is not a Prometheus query")
    return problems


def _first_difference(expected: Any, got: Any, path: str = "$") -> str:
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got)):
            if expected.get(key, "<missing>") != got.get(key, "<missing>"):
                return _first_difference(expected.get(key), got.get(key), f"{path}.{key}")
    if isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for index, (a, b) in enumerate(zip(expected, got, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{index}]")
    return f"{path}: {expected!r} became {got!r}"


def test_every_dashboard_is_committed() -> None:
    assert [p.name for p in COMMITTED] == sorted(f"{uid}.json" for uid in BUILDERS)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_committed_json_is_current(path: Path) -> None:
    assert path.read_text(encoding="utf-8") == rendered()[path.name], (
        f"{path.name} is stale: run `uxmon dashboards render` and commit dashboards/json/"
    )


def test_rendering_is_deterministic() -> None:
    assert rendered() == rendered()


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_parses_with_grafana_typed_models(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert schema_problems(data) == []


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.name)
def test_layout_is_sound(path: Path) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    ids = [panel["id"] for panel in data["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    for panel in data["panels"]:
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, f"panel {panel['id']} overflows the grid"
        if panel["type"] != "row":
            assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
            assert panel.get("description"), f"panel {panel['title']!r} has no description"
    assert data["uid"] == path.stem and len(data["uid"]) <= 40


def test_schema_check_rejects_unknown_fields_and_types() -> None:
    data = json.loads(COMMITTED[0].read_text(encoding="utf-8"))
    unknown_field = copy.deepcopy(data)
    unknown_field["panels"][1]["targetz"] = []
    unknown_type = copy.deepcopy(data)
    unknown_type["panels"][1]["type"] = "not-a-panel"
    wrong_shape = copy.deepcopy(data)
    wrong_shape["templating"]["list"][0]["nmae"] = "x"

    assert any("targetz" in p for p in schema_problems(unknown_field))
    assert any("unknown panel type" in p for p in schema_problems(unknown_type))
    assert any("nmae" in p for p in schema_problems(wrong_shape))
