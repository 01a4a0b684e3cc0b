"""The `uxmon` command, run as a user runs it (a child process): mistakes end in one line
and an exit code, never a traceback; help lists every setting; `config` shows the settings
in effect; options have one spelling; the docs name what the code has."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from pydantic import Field, SecretStr

from benchmark.tasks import known_tasks
from stream import cli
from stream.commands.config import MASK, as_json, as_text, effective, is_secret, spelled
from stream.commands.options import resolve_batch
from stream.settings import OTHER_VARIABLES, Settings
from tests.support.cli import uxmon

REPO = Path(__file__).resolve().parents[2]


def test_version() -> None:
    done = uxmon("--version")
    assert done.returncode == 0 and done.stdout.startswith("uxmon ")


@pytest.mark.parametrize(
    ("args", "env", "code", "says"),
    [
        (["serve"], {"UXMON_SCORERS": "nope"}, 2, "unknown scorer 'nope'; known scorers:"),
        (["serve"], {"UXMON_GRM": "nope"}, 2, "unknown scorer 'nope'"),
        (["serve", "--broker", "x"], {}, 2, "broker (command line): "),
        (["dashboards", "render", "--out", "/proc/uxmon/x"], {}, 1, "'/proc/uxmon'"),
        (  # before any scoring: a long run must not fail at its very end
            [
                "bench",
                "--task",
                "task1",
                "--data",
                "tests/data/uxbench",
                "--scorer",
                "ux_judge",
                "--out",
                "/nope/r.json",
            ],
            {},
            2,
            "--out: /nope is not a directory",
        ),
    ],
)
def test_a_mistake_is_one_line_and_an_exit_code(
    args: list[str], env: dict[str, str], code: int, says: str
) -> None:
    done = uxmon(*args, **env)
    assert done.returncode == code
    assert says in done.stderr
    assert "Traceback" not in done.stderr and "╭" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_a_mistyped_variable_is_warned_about_with_the_likely_one() -> None:
    done = uxmon("serve", "--broker", "x", UXMON_BATCHMAX="5")
    assert "UXMON_BATCHMAX is not a uxmon setting and is ignored (did you mean " in done.stderr
    assert "UXMON_BATCH_MAX?)" in done.stderr


def test_an_unreachable_broker_is_named_within_seconds(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text('{"conversation_id": "c"}\n')
    for args, env in (
        (["replay", str(events)], {"UXMON_BROKER": "127.0.0.1:1"}),  # replay reads settings
        (["serve", "--broker", "127.0.0.1:1"], {}),  # checked before any model loads
    ):
        done = uxmon(*args, **env)
        assert done.returncode == 1, done.stderr
        assert "no Kafka broker answers at 127.0.0.1:1" in done.stderr
        assert "Traceback" not in done.stderr


# --- every setting in `serve --help`, at full width ---


def _line_of(text: str, variable: str) -> str:
    """The settings panel's line of `variable` (it starts the line)."""
    lines = [line for line in text.splitlines() if re.match(rf"\W*{variable}\s", line)]
    assert lines, f"{variable} is not in the help"
    return lines[0]


def test_serve_help_lists_every_setting_with_its_default_and_description() -> None:
    done = uxmon("serve", "--help")
    assert done.returncode == 0, done.stderr
    for name, field in Settings.model_fields.items():
        line = _line_of(done.stdout, f"UXMON_{name.upper()}")
        default = spelled(field.get_default(call_default_factory=True))
        assert default.split()[0] in line, f"{name}: default {default!r} not beside it"
        assert (field.description or "").split()[0] in line, f"{name}: no description"
    assert "(unset)" in _line_of(done.stdout, "UXMON_VALIDATION_DATA")
    assert "1048576" in _line_of(done.stdout, "UXMON_MAX_EVENT_BYTES")
    for other in OTHER_VARIABLES:  # read outside Settings, but named
        assert other in done.stdout


def test_help_is_not_cut_at_80_columns() -> None:
    done = uxmon("serve", "--help")
    widths = [len(line) for line in done.stdout.splitlines()]
    assert max(widths) > 100
    line = _line_of(done.stdout, "UXMON_INCLUDE_TEXT")  # description and default on one line
    assert "false" in line and "Copy turn text into scored records" in line
    narrow = uxmon("serve", "--help", COLUMNS="80")  # a width the user asks for is kept
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80


# --- uxmon config ---


def _config_lines(stdout: str) -> dict[str, tuple[str, str]]:
    """variable -> (source, value) from config's lines `VARIABLE  SOURCE  VALUE`."""
    rows = {}
    for line in stdout.splitlines():
        found = re.fullmatch(r"(UXMON_\w+) +(default|env|command line) +(.*)", line)
        assert found, f"not a config line: {line!r}"
        rows[found[1]] = (found[2], found[3])
    return rows


def test_config_prints_each_setting_with_its_value_and_source() -> None:
    done = uxmon("config", "--broker", "k:9", UXMON_BATCH_MAX="64", UXMON_LOG_LEVEL="debug")
    assert done.returncode == 0, done.stderr
    rows = _config_lines(done.stdout)
    assert set(rows) == {f"UXMON_{name.upper()}" for name in Settings.model_fields}
    assert rows["UXMON_BROKER"] == ("command line", "k:9")
    assert rows["UXMON_BATCH_MAX"] == ("env", "64")
    assert rows["UXMON_LOG_LEVEL"] == ("env", "DEBUG")  # the effective value, not the raw one
    assert rows["UXMON_APP_ID"] == ("default", "uxmon")
    assert rows["UXMON_MODEL_CACHE"] == ("default", "(unset)")


def test_config_json_is_machine_readable() -> None:
    done = uxmon("config", "--json", "--scorer", "ux_judge", UXMON_VALIDATION_NICE="5")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert list(rows) == list(Settings.model_fields)
    assert rows["validation_nice"] == {
        "variable": "UXMON_VALIDATION_NICE",
        "value": 5,
        "source": "env",
    }
    assert rows["scorers"] == {
        "variable": "UXMON_SCORERS",
        "value": ["ux_judge"],
        "source": "command line",
    }
    assert rows["datadir"]["value"] == "/tmp/uxmon" and rows["datadir"]["source"] == "default"
    assert rows["producer_max_batch_size"]["value"] is None


def test_config_never_prints_a_secret() -> None:
    class WithSecrets(Settings):
        api_key: SecretStr | None = Field(None, description="A key.")
        grafana_token: str = Field("", description="A token.")
        broker_password: str | None = Field(None, description="Unset: nothing to hide.")

    settings = WithSecrets(api_key=SecretStr("s3cr3t-key"), grafana_token="s3cr3t-token")
    rows = effective(settings, options={"grafana_token"})
    for shown in (as_text(rows), as_json(rows)):
        assert "s3cr3t" not in shown
    by_name = {r.name: r for r in rows}
    assert by_name["api_key"].value == by_name["grafana_token"].value == MASK
    assert by_name["grafana_token"].source == "command line"
    assert by_name["broker_password"].value is None
    assert by_name["broker"].value == "127.0.0.1:9092"  # not a secret
    assert is_secret("api_key", WithSecrets.model_fields["api_key"])
    assert not is_secret("max_id_chars", Settings.model_fields["max_id_chars"])
    # the Grafana credentials, read outside Settings, never reach config's output either
    done = uxmon("config", "--json", UXMON_GRAFANA_TOKEN="s3cr3t", UXMON_GRAFANA_PASSWORD="pw1")
    assert done.returncode == 0 and "s3cr3t" not in done.stdout + done.stderr
    assert "pw1" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["config"], {"UXMON_BATCH_MAX": "0"}, "setting batch_max (env UXMON_BATCH_MAX): "),
        (["config", "--json", "--broker", "x"], {}, "setting broker (command line): "),
        (["config"], {"UXMON_SCORERS": "ux_judge,grm"}, "setting scorers (env UXMON_SCORERS)"),
    ],
)
def test_a_bad_setting_fails_config_in_one_line(
    args: list[str], env: dict[str, str], says: str
) -> None:
    done = uxmon(*args, **env)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("uxmon: error: invalid ") and says in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


# --- one spelling per option; real choices ---


def _leaves(command: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        return {path: command}
    out: dict[tuple[str, ...], Any] = {}
    for name, sub in subcommands.items():
        out.update(_leaves(sub, (*path, name)))
    return out


COMMANDS = _leaves(typer.main.get_command(cli.app))


def _visible_options(command: Any) -> set[str]:
    return {
        name
        for p in command.params
        if not getattr(p, "hidden", False)
        for name in (*p.opts, *p.secondary_opts)
        if name.startswith("--")
    }


def test_the_batch_size_has_one_spelling() -> None:
    spelled_as = {path: _visible_options(c) for path, c in COMMANDS.items()}
    assert not [path for path, names in spelled_as.items() if "--batch" in names]
    takers = {path for path, names in spelled_as.items() if "--batch-size" in names}
    assert takers == {("bench",), ("judge", "eval"), ("models", "calibrate-grm")}


def test_the_old_batch_spelling_still_parses_with_a_warning(tmp_path: Path) -> None:
    done = uxmon("judge", "eval", "--batch", "8", "--data", str(tmp_path / "none.jsonl"))
    assert done.returncode == 2  # on --data, after --batch was parsed
    assert "'--data'" in done.stderr and "No such option" not in done.stderr
    assert resolve_batch(64, None) == 64
    assert resolve_batch(64, 8) == 8


def test_the_deprecated_batch_warns(capsys: pytest.CaptureFixture[str]) -> None:
    resolve_batch(64, 8)
    assert "--batch is deprecated; use --batch-size" in capsys.readouterr().err


def test_task_takes_only_registered_tasks() -> None:
    help_text = uxmon("bench", "--help").stdout
    for name in known_tasks():
        assert name in help_text
    done = uxmon(
        "bench", "--task", "task9", "--data", "x", "--scorer", "ux_judge", "--out", "r.json"
    )
    assert done.returncode == 2
    assert "task9" in done.stderr and "task3_judge" in done.stderr


# --- the event schema and the README ---


def test_events_schema_prints_the_checked_in_schema(tmp_path: Path) -> None:
    done = uxmon("events", "schema")
    assert done.returncode == 0, done.stderr
    assert done.stdout == (REPO / "docs" / "events.schema.json").read_text(encoding="utf-8")
    out = tmp_path / "schema.json"
    assert uxmon("events", "schema", "--out", str(out)).returncode == 0
    assert json.loads(out.read_text(encoding="utf-8"))["title"] == "uxmon event, schema v1"


def test_the_readme_names_every_command_and_the_settings_defaults_it_shows() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for path in COMMANDS:
        assert f"`uxmon {' '.join(path)}" in readme, f"README lacks uxmon {' '.join(path)}"
    rows = re.findall(r"^\| (`UXMON_[A-Z_]+`(?: / `UXMON_[A-Z_]+`)*) \| (.*?) \|", readme, re.M)
    assert len(rows) > 10
    for names, defaults in rows:
        for name, default in zip(names.split(" / "), defaults.split(" / "), strict=True):
            field = Settings.model_fields[name.strip("`").removeprefix("UXMON_").lower()]
            assert default.strip("`") == spelled(field.get_default(call_default_factory=True))
