"""`uxmon judge train` then `uxmon judge eval` through typer, with the real bundled encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream.commands import judge

SEED = (
    Path(__file__).resolve().parents[2] / "benchmark" / "data" / "writers" / "task1" / "w01.jsonl"
)
runner = CliRunner()


def _labelled_file(tmp_path: Path, per_label: int) -> Path:
    """The first `per_label` liked and disliked records of one corpus writer, in one file."""
    counts = {1: 0, -1: 0}
    lines = []
    for line in SEED.read_text(encoding="utf-8").splitlines():
        label = json.loads(line)["ground_truth"]
        if counts[label] < per_label:
            counts[label] += 1
            lines.append(line)
    out = tmp_path / "labelled.jsonl"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.models
def test_train_writes_an_ensemble_head_that_eval_then_scores(tmp_path: Path) -> None:
    head = tmp_path / "head"
    data = str(_labelled_file(tmp_path, 40))
    trained = runner.invoke(
        judge.app, ["train", "--data", data, "--out", str(head), "--folds", "3", "--l2", "0.5"]
    )
    assert trained.exit_code == 0, trained.stderr
    report = json.loads(trained.stdout)
    assert report["folds"] == 3
    assert report["n_examples"] == 80
    assert set(report["oof_metrics"]) >= {"good_acc", "bad_acc", "avg_acc", "auroc", "ece"}

    scored = runner.invoke(judge.app, ["eval", "--data", data, "--head", str(head)])
    assert scored.exit_code == 0, scored.stderr
    result = json.loads(scored.stdout)
    assert result["n"] == 80
    assert result["version"].endswith(f"+head-{report['version'][:8]}")
    assert 0.0 <= result["metrics"]["ece"] <= 1.0


def test_too_few_examples_per_fold_is_a_clear_error(tmp_path: Path) -> None:
    data = str(_labelled_file(tmp_path, 4))
    result = runner.invoke(judge.app, ["train", "--data", data, "--out", str(tmp_path / "h")])
    assert result.exit_code == 2
    assert "expected at least 5 liked and 5 disliked examples (5 folds)" in result.stderr


def test_a_record_without_a_label_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    record = json.loads(SEED.read_text(encoding="utf-8").splitlines()[0])
    del record["ground_truth"]
    data = tmp_path / "unlabelled.jsonl"
    data.write_text(json.dumps(record) + "\n", encoding="utf-8")
    result = runner.invoke(judge.app, ["train", "--data", str(data), "--out", str(tmp_path / "h")])
    assert result.exit_code == 2
    assert "field 'ground_truth': missing" in result.stderr
