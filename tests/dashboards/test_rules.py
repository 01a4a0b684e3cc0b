"""The rules rendered for another cluster: the defaults give the shipped files back, a custom
job, scorer names and runbook base reach every rule, and the same promtool tests pass on
the rendered rules; a bad config names its field."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from dashboards.rules import DEFAULT_SOURCE, RulesConfig, RulesConfigError, render, write
from stream.cli import app
from tests.support.cli import uxmon

CUSTOM = RulesConfig(
    job="ux-prod",
    scorer="team_judge",
    grm="team_grm",
    runbook_base="https://runbooks.example.com/uxmon/alerts",
)
TESTS = sorted(p.name for p in (DEFAULT_SOURCE / "tests").glob("*.yml"))


def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.skip("promtool is not installed; `make services` installs it (Debian packages)")
    return path


def test_the_defaults_render_the_shipped_files_byte_for_byte() -> None:
    rendered = render(RulesConfig())
    assert {k.split("/")[0] for k in rendered} == {"rules", "tests"}
    for relative, text in rendered.items():
        assert text == (DEFAULT_SOURCE / relative).read_text(encoding="utf-8"), relative


def test_a_custom_config_reaches_every_selector_and_runbook() -> None:
    rendered = render(CUSTOM)
    for relative, text in rendered.items():
        for default in ('job="uxmon"', 'scorer="ux_judge"', 'scorer="grm"', '"docs/alerts.md#'):
            assert default not in text, (relative, default)
        assert "scorer: ux_judge\n" not in text and "job: uxmon\n" not in text
    alerts = yaml.safe_load(rendered["rules/alerts.yml"])
    annotations = [r["annotations"] for g in alerts["groups"] for r in g["rules"]]
    assert annotations and all(
        a["runbook_url"].startswith(CUSTOM.runbook_base + "#") for a in annotations
    )
    exprs = " ".join(r["expr"] for g in alerts["groups"] for r in g["rules"])
    assert 'up{job="ux-prod"}' in exprs and 'scorer="team_grm"' in exprs
    recording = rendered["rules/recording.yml"]
    assert recording.count('scorer="team_judge"') == 25


def test_swapped_names_do_not_chain() -> None:
    swapped = render(RulesConfig(scorer="grm", grm="ux_judge"))["rules/alerts.yml"]
    original = (DEFAULT_SOURCE / "rules" / "alerts.yml").read_text(encoding="utf-8")
    assert swapped.count('scorer="grm"') == original.count('scorer="ux_judge"')
    assert swapped.count('scorer="ux_judge"') == original.count('scorer="grm"')


@pytest.fixture(scope="module")
def rendered_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rules")
    write(CUSTOM, out)
    return out


def test_the_rendered_rules_pass_promtool_check(rendered_dir: Path) -> None:
    files = sorted(str(p) for p in (rendered_dir / "rules").glob("*.yml"))
    result = subprocess.run(
        [promtool(), "check", "rules", *files], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("test_file", TESTS)
def test_the_same_promtool_tests_pass_on_the_rendered_rules(
    rendered_dir: Path, test_file: str
) -> None:
    result = subprocess.run(
        [promtool(), "test", "rules", str(rendered_dir / "tests" / test_file)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_live_correction_reads_thumbs_where_each_class_has_enough(tmp_path: Path) -> None:
    """correction_test.yml's traffic on the rules rendered with `correction: live`: with a
    week of enough thumbs the corrected rate uses them, (0.375 + 0.75 - 1) / (0.75 + 0.75 - 1);
    with too few disliked ones it falls back to the benchmark's 0.5, as shipped."""
    write(RulesConfig(correction="live"), tmp_path)
    suite = yaml.safe_load((DEFAULT_SOURCE / "tests" / "correction_test.yml").read_text())
    corrected = "uxmon:dissatisfaction_rate_corrected:ratio_rate1h"
    for group, value in zip(suite["tests"], [0.25, 0.5], strict=True):
        [check] = [c for c in group["promql_expr_test"] if c["expr"] == corrected]
        check["exp_samples"][0]["value"] = value
    live = tmp_path / "tests" / "correction_live_test.yml"
    live.write_text(yaml.safe_dump(suite, allow_unicode=True))
    result = subprocess.run(
        [promtool(), "test", "rules", str(live)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("job", 'a"b'),
        ("scorer", ""),
        ("grm", "x y"),
        ("scorer", "@me"),
        ("runbook_base", "https://x/a#b"),
        ("correction", "thumbs"),
    ],
)
def test_a_bad_value_names_its_field(field: str, value: str) -> None:
    with pytest.raises(RulesConfigError, match=f"^{field}: "):
        RulesConfig(**{field: value})


def test_the_command_writes_the_rules_and_a_bad_config_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "rules.yml"
    config.write_text("job: ux-prod\nrunbook_base: https://runbooks.example.com/a\n")
    out = tmp_path / "out"
    runner = CliRunner()
    result = runner.invoke(
        app, ["rules", "render", "--config", str(config), "--scorer", "mine", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    alerts = (out / "rules" / "alerts.yml").read_text(encoding="utf-8")
    assert 'job="ux-prod"' in alerts and 'scorer="mine"' in alerts
    assert '"https://runbooks.example.com/a#' in alerts

    config.write_text("jobb: ux-prod\n")
    done = uxmon("rules", "render", "--config", str(config), "--out", str(out))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"uxmon: error: {config}: unknown key 'jobb'; expected any of correction, grm, job, "
        "runbook_base, scorer"
    ]
