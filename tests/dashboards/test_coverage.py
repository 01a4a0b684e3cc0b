"""The dashboards and the metric catalogue agree both ways, and dashboards/ never spells a
metric name (it imports the constants of stream.metrics)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

from dashboards import coverage
from dashboards.render import as_dicts
from stream.metrics import Metrics, all_metric_names

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "docs" / "metrics.md"
RECORDING = ROOT / "deploy" / "prometheus" / "rules" / "recording.yml"


def test_every_queried_recorded_series_is_recorded_by_the_shipped_rules() -> None:
    rules = yaml.safe_load(RECORDING.read_text(encoding="utf-8"))
    recorded = {rule["record"] for group in rules["groups"] for rule in group["rules"]}
    queried = coverage.recorded_series(as_dicts().values())
    assert queried, "the corrected rate reads the correction's recorded accuracy"
    assert queried <= recorded, f"not recorded in {RECORDING}: {sorted(queried - recorded)}"


def test_exported_names_are_what_the_registry_exposes() -> None:
    # all_metric_names() is the catalogue the checks below trust; hold it to the registry.
    exposed = {family.name for family in Metrics().registry.collect()}
    counters_and_infos = {name for name in all_metric_names() if name.endswith(("_total", "_info"))}
    bare = {re.sub(r"_(total|info)$", "", name) for name in counters_and_infos}
    assert exposed == (set(all_metric_names()) - counters_and_infos) | bare


def test_every_queried_metric_is_exported() -> None:
    assert coverage.unknown_metrics(as_dicts().values(), all_metric_names()) == set()


def test_every_exported_metric_is_on_a_dashboard_or_internal() -> None:
    uncovered = coverage.uncovered_metrics(as_dicts().values(), all_metric_names())
    assert uncovered == set(), (
        f"put {sorted(uncovered)} on a dashboard, or in dashboards.coverage.INTERNAL with a "
        "reason (and in docs/metrics.md)"
    )


def test_internal_metrics_are_exported_and_documented() -> None:
    assert set(coverage.INTERNAL) <= set(all_metric_names())
    catalogue = CATALOGUE.read_text(encoding="utf-8")
    assert coverage.undocumented_internal(coverage.INTERNAL, catalogue) == set()


def test_histogram_series_map_to_their_histogram() -> None:
    exported = ["uxmon_score", "uxmon_events_consumed_total"]
    assert coverage.exported_name("uxmon_score_bucket", exported) == "uxmon_score"
    assert coverage.exported_name("uxmon_score_count", exported) == "uxmon_score"
    assert coverage.exported_name("uxmon_events_consumed_total", exported) == (
        "uxmon_events_consumed_total"
    )
    # _sum of something that is not a histogram stays itself (and is then unknown).
    assert coverage.exported_name("uxmon_nothing_sum", exported) == "uxmon_nothing_sum"


def test_checks_catch_drift() -> None:
    board = {
        "panels": [
            {"type": "row", "panels": [{"targets": [{"expr": "rate(uxmon_gone_total[5m])"}]}]},
            {"targets": [{"expr": "histogram_quantile(0.5, rate(uxmon_score_bucket[5m]))"}]},
        ],
        "templating": {"list": [{"type": "query", "query": "label_values(uxmon_x_total, a)"}]},
    }
    exported = ["uxmon_score", "uxmon_new_total", "uxmon_x_total"]
    assert coverage.unknown_metrics([board], exported) == {"uxmon_gone_total"}
    assert coverage.uncovered_metrics([board], exported, internal={}) == {"uxmon_new_total"}
    assert coverage.uncovered_metrics([board], exported, {"uxmon_new_total": "why"}) == set()
    catalogue = "| `uxmon_new_total` | counter |"
    assert coverage.undocumented_internal({"uxmon_new_total": "why"}, catalogue) == set()
    assert coverage.undocumented_internal({"uxmon_other_total": "why"}, catalogue) == {
        "uxmon_other_total"
    }
    assert coverage.undocumented_internal({"uxmon_new_total": " "}, catalogue) == {
        "uxmon_new_total"
    }


def test_dashboards_never_spell_a_metric_name() -> None:
    spelled = []
    for path in sorted((ROOT / "dashboards").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if is_text and re.search(r"\buxmon_[a-z]", node.value):
                spelled.append(f"{path.name}:{node.lineno}: {node.value!r}")
    assert spelled == [], "import metric names from stream.metrics instead"


def test_dashboards_import_only_metric_names_from_the_service() -> None:
    ours = {"stream", "scorer", "benchmark"}
    imported = []
    for path in sorted((ROOT / "dashboards").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.split(".")[0] in ours and node.module != "stream.metrics":
                    imported.append(f"{path.name}: from {node.module}")
                if node.module == "stream.metrics":
                    imported += [
                        f"{path.name}: {a.name}" for a in node.names if not a.name.isupper()
                    ]
            elif isinstance(node, ast.Import):
                imported += [a.name for a in node.names if a.name.split(".")[0] in ours]
    assert imported == []
