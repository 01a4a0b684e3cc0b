"""The Prometheus and Alertmanager configuration in deploy/: valid for the real tools, its
promtool unit tests pass, and it agrees with the metric catalogue and the runbooks.

The PromQL text helpers here are shared with tests/integration/test_promql.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from stream.metrics import all_metric_names

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
RULES_DIR = DEPLOY / "prometheus" / "rules"
RULE_TESTS_DIR = DEPLOY / "prometheus" / "tests"
ALERTMANAGER_CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"
RUNBOOKS = REPO / "docs" / "alerts.md"

SEVERITIES = {"critical", "warning", "info"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")

# --- PromQL text ---------------------------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_COMMENT = re.compile(r"#[^\n]*")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_IDENTIFIER = re.compile(rf"(?<![\w:.])({_NAME})(?![\w:])(?!\s*\()")
# A string literal is matched (and skipped) before it can be read as a name; the strings
# inside a selector's matchers are consumed with the selector.
_SELECTOR_OR_STRING = re.compile(
    rf"{_STRING.pattern}|(?<![\w:.])({_NAME})(?![\w:])\s*(\{{[^}}]*\}})?(?!\s*\()"
)


def is_ours(name: str) -> bool:
    """Series uxmon exports or records, and the scrape health of its job."""
    return name.startswith(("uxmon_", "uxmon:")) or name == "up"


def _without_comments(expr: str) -> str:
    # Comments first would also cut a '#' inside a string; strings hold none here.
    return _COMMENT.sub("", expr)


def series_names(expr: str) -> set[str]:
    """Names of the series an expression reads (metrics and recorded series)."""
    text = _without_comments(expr)
    for pattern in (_STRING, _MATCHERS, _GROUPING, _RANGE):
        text = pattern.sub(" ", text)
    return {name for name in _IDENTIFIER.findall(text) if is_ours(name)}


def selectors(expr: str) -> set[str]:
    """The vector selectors of an expression, as written (`name{matchers}` or `name`)."""
    text = _GROUPING.sub(" ", _without_comments(expr))
    return {
        f"{name}{matchers}" for name, matchers in _SELECTOR_OR_STRING.findall(text) if is_ours(name)
    }


def metric_family(name: str) -> str:
    """The declared metric a sample name belongs to (histograms expose three series)."""
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix) and name.removesuffix(suffix) in all_metric_names():
            return name.removesuffix(suffix)
    return name


# --- Rule files ----------------------------------------------------------------------


def rule_files() -> list[Path]:
    return sorted(RULES_DIR.glob("*.yml"))


def load_rules(path: Path) -> list[dict[str, Any]]:
    document = yaml.safe_load(path.read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def all_rules() -> list[dict[str, Any]]:
    return [rule for path in rule_files() for rule in load_rules(path)]


def alert_rules() -> list[dict[str, Any]]:
    return [rule for rule in all_rules() if "alert" in rule]


def recorded_exprs() -> dict[str, str]:
    return {rule["record"]: rule["expr"] for rule in all_rules() if "record" in rule}


def underlying_metrics(expr: str, recorded: dict[str, str]) -> set[str]:
    """The exported metrics an expression depends on, through recorded series."""
    found: set[str] = set()
    pending = list(series_names(expr))
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in recorded:
            pending.extend(series_names(recorded[name]))
        else:
            found.add(name)
    return found


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for line in markdown.splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(slug.replace(" ", "-"))
    return anchors


# --- The real tools ------------------------------------------------------------------


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed; `make services` installs it (Debian packages)")
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=REPO, timeout=300)


def test_prometheus_config_is_valid_with_its_rule_files() -> None:
    result = _run(_tool("promtool"), "check", "config", str(PROMETHEUS_CONFIG))
    assert result.returncode == 0, result.stdout + result.stderr
    loaded = yaml.safe_load(PROMETHEUS_CONFIG.read_text())["rule_files"]
    resolved = {(PROMETHEUS_CONFIG.parent / entry).resolve() for entry in loaded}
    assert resolved == {path.resolve() for path in rule_files()}


def test_rule_files_are_valid() -> None:
    result = _run(_tool("promtool"), "check", "rules", *map(str, rule_files()))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("unit_test", sorted(RULE_TESTS_DIR.glob("*.yml")), ids=lambda p: p.name)
def test_promtool_unit_tests_pass(unit_test: Path) -> None:
    result = _run(_tool("promtool"), "test", "rules", str(unit_test))
    assert result.returncode == 0, result.stdout + result.stderr


def test_alertmanager_config_is_valid() -> None:
    result = _run(_tool("amtool"), "check-config", str(ALERTMANAGER_CONFIG))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("severity", "receivers"),
    [
        ("critical", "uxmon-pager,uxmon-email,uxmon-webhook"),
        ("warning", "uxmon-email,uxmon-webhook"),
        ("info", "uxmon-webhook"),
    ],
)
def test_alertmanager_routes_by_severity(severity: str, receivers: str) -> None:
    result = _run(
        _tool("amtool"),
        "config",
        "routes",
        "test",
        f"--config.file={ALERTMANAGER_CONFIG}",
        f"severity={severity}",
        "service=uxmon",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == receivers


# --- Agreement with the code and the docs --------------------------------------------


def _expressions() -> Iterator[tuple[str, str]]:
    for rule in all_rules():
        yield rule.get("record") or rule["alert"], rule["expr"]


def test_every_metric_the_rules_read_is_declared() -> None:
    declared = set(all_metric_names())
    unknown = {
        (name, metric_family(metric))
        for name, expr in _expressions()
        for metric in series_names(expr)
        if metric.startswith("uxmon_") and metric_family(metric) not in declared
    }
    assert not unknown, f"rules read metrics stream/metrics.py does not declare: {unknown}"


def test_every_recorded_series_the_rules_read_is_recorded() -> None:
    recorded = set(recorded_exprs())
    unknown = {
        (name, series)
        for name, expr in _expressions()
        for series in series_names(expr)
        if series.startswith("uxmon:") and series not in recorded
    }
    assert not unknown, f"rules read recorded series no rule records: {unknown}"


def test_series_names_are_found_in_promql() -> None:
    expr = """
        # uxmon_in_a_comment is not read
        sum by (scorer, uxmon_label) (rate(uxmon_a_total{reason=~"x|uxmon_b"}[5m]))
        / on (scorer) group_left () uxmon:b:ratio offset 7d
        and absent(up{job="uxmon"}) or label_replace(uxmon_c, "uxmon_d", "1", "", "")
    """
    assert series_names(expr) == {"uxmon_a_total", "uxmon:b:ratio", "up", "uxmon_c"}
    assert selectors(expr) == {
        'uxmon_a_total{reason=~"x|uxmon_b"}',
        "uxmon:b:ratio",
        'up{job="uxmon"}',
        "uxmon_c",
    }
    assert metric_family("uxmon_score_bucket") == "uxmon_score"
    assert metric_family("uxmon_scoring_seconds_count") == "uxmon_scoring_seconds"


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda rule: rule["alert"])
def test_every_alert_has_severity_and_annotations(rule: dict[str, Any]) -> None:
    labels = rule.get("labels", {})
    annotations = rule.get("annotations", {})
    assert labels.get("severity") in SEVERITIES
    assert labels.get("service") == "uxmon"  # the Alertmanager inhibit rule matches on it
    for key in ("summary", "description", "runbook_url"):
        assert annotations.get(key, "").strip(), f"{rule['alert']} has no {key}"


def test_every_runbook_url_points_to_a_section_of_docs_alerts_md() -> None:
    anchors = _anchors(RUNBOOKS.read_text())
    broken = []
    for rule in alert_rules():
        path, _, anchor = rule["annotations"]["runbook_url"].partition("#")
        if path != "docs/alerts.md" or anchor not in anchors:
            broken.append((rule["alert"], rule["annotations"]["runbook_url"]))
    assert not broken, f"runbook links without a section in docs/alerts.md: {broken}"


def test_every_alert_is_unit_tested_firing_and_not_firing() -> None:
    firing: set[str] = set()
    silent: set[str] = set()
    for path in RULE_TESTS_DIR.glob("*.yml"):
        for case in yaml.safe_load(path.read_text())["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check.get("exp_alerts") else silent).add(check["alertname"])
    names = {rule["alert"] for rule in alert_rules()}
    assert names - firing == set(), "alerts never tested firing"
    assert names - silent == set(), "alerts never tested staying silent"
