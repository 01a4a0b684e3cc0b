from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from typer import Exit

from stream.commands.serve import load_settings
from stream.settings import Settings


def test_env_and_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXMON_SCORERS", "ux_judge, my.scorer:Factory")
    monkeypatch.setenv("UXMON_BROKER", "kafka://a:9092,b:9093")
    s = Settings()
    assert s.scorers == ["ux_judge", "my.scorer:Factory"]
    assert s.broker_urls() == ["kafka://a:9092", "kafka://b:9093"]


@pytest.mark.parametrize(
    ("env", "value"),
    [
        ("UXMON_BROKER", "nohostport"),
        ("UXMON_BATCH_MAX", "0"),
        ("UXMON_DTYPE", "fp8"),
        ("UXMON_SCORERS", "[]"),
        ("UXMON_NOT_A_FIELD", "1"),
    ],
)
def test_bad_settings_fail(monkeypatch: pytest.MonkeyPatch, env: str, value: str) -> None:
    monkeypatch.setenv(env, value)
    if env == "UXMON_NOT_A_FIELD":
        Settings()  # unknown env vars are ignored by pydantic-settings; keyword args are not
        with pytest.raises(ValidationError):
            Settings(not_a_field=1)  # type: ignore[call-arg]
        return
    with pytest.raises(ValidationError):
        Settings()


def test_cli_names_the_bad_field(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv("UXMON_BATCH_MAX", "lots")
    with pytest.raises(Exit):
        load_settings()
    assert "UXMON_BATCH_MAX" in capsys.readouterr().err


def test_the_grm_runs_either_on_every_turn_or_in_the_cascade() -> None:
    with pytest.raises(ValidationError, match="UXMON_GRM"):
        Settings(scorers=["ux_judge", "grm"])
    assert Settings(scorers=["ux_judge", "grm"], grm="").grm is None
    assert Settings(grm="  ").grm is None


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"dlq_max_value_bytes": 900_000}, "dlq_max_value_bytes"),
        ({"history_bytes": 2_000_000}, "history_bytes"),
        ({"seen_ids": 5_000}, "seen_ids"),
        ({"context_chars": 50_000}, "context_chars"),
    ],
)
def test_outputs_that_could_outgrow_a_record_fail_at_start(changes: dict, named: str) -> None:
    with pytest.raises(ValidationError, match=named):
        Settings(**changes)


def test_the_defaults_fit_a_one_megabyte_record() -> None:
    Settings()


def test_a_grm_server_is_configured_by_settings_alone(tmp_path: Path) -> None:
    assert Settings().grm_options() == {}  # the bundled model on this machine
    assert Settings(grm_threshold=0.3).grm_options() == {"threshold": 0.3}
    with pytest.raises(ValidationError, match="UXMON_GRM_BASE_URL"):
        Settings(grm_backend="openai", grm_model="judge")
    with pytest.raises(ValidationError, match="UXMON_GRM_MODEL"):
        Settings(grm_backend="openai", grm_base_url="http://vllm:8000/v1")
    key_file = tmp_path / "key"
    key_file.write_text("from-a-file\n")
    served = Settings(
        grm_backend="openai",
        grm_base_url="http://vllm:8000/v1",
        grm_model="judge",
        grm_api_key_file=key_file,
        grm_concurrency=3,
        grm_threshold=0.4,
    )
    assert served.grm_options() == {
        "backend": "openai",
        "base_url": "http://vllm:8000/v1",
        "model_name": "judge",
        "api_key": "from-a-file",
        "timeout_s": 30.0,
        "concurrency": 3,
        "threshold": 0.4,
    }
    with pytest.raises(ValidationError, match="grm_api_key_file"):
        Settings(grm_backend="openai", grm_base_url="u", grm_model="m", grm_api_key_file=tmp_path)


def test_the_grm_api_key_never_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UXMON_GRM_API_KEY", "sk-very-secret")
    s = Settings(grm_backend="openai", grm_base_url="http://vllm:8000/v1", grm_model="judge")
    assert "sk-very-secret" not in repr(s) and "sk-very-secret" not in str(s.model_dump())
    assert s.grm_options()["api_key"] == "sk-very-secret"
