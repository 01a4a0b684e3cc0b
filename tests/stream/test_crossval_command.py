"""`uxmon crossval` and `uxmon grm train` refuse bad input with a message, before any model
loads; the full runs are CI's gates (tests/benchmark/test_baselines.py)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from stream.cli import app

runner = CliRunner()


def test_a_corpus_without_records_is_named(tmp_path: Path) -> None:
    result = runner.invoke(app, ["crossval", "--corpus", str(tmp_path)])
    assert result.exit_code == 2
    assert "no task1/<writer>.jsonl files under" in result.stderr


def test_one_writer_cannot_be_left_out(tmp_path: Path) -> None:
    result = runner.invoke(app, ["crossval", "--writers", "w01"])
    assert result.exit_code == 2 and "at least 2 writers" in result.stderr


def test_an_unwritable_report_path_fails_before_the_work(tmp_path: Path) -> None:
    result = runner.invoke(app, ["crossval", "--out", str(tmp_path / "no" / "report.json")])
    assert result.exit_code == 2 and "is not a directory" in result.stderr


def test_grm_training_names_a_missing_corpus(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["grm", "train", "--out", str(tmp_path / "h"), "--corpus", str(tmp_path)]
    )
    assert result.exit_code == 2 and "no task1/<writer>.jsonl files" in result.stderr
