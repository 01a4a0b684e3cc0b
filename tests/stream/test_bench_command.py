"""`uxmon bench` and `uxmon gate` through typer, with the deterministic Keyword scorer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from stream.commands import bench

DATA = Path(__file__).resolve().parents[1] / "data" / "uxbench"
KEYWORD = "tests.support.scorers:Keyword"

app = typer.Typer()
app.command()(bench.bench)
app.command()(bench.gate)
runner = CliRunner()


def _bench(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["bench", "--no-progress", *args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("base") / "report.json"
    code, stdout, stderr = _bench(
        "--task", "task1", "--data", str(DATA), "--scorer", KEYWORD, "--out", str(out)
    )
    assert code == 0, stderr
    assert "task1 · keyword test-1 · n=260 · avg_acc" in stdout
    return out


def test_bench_writes_three_files(baseline: Path) -> None:
    for suffix in (".json", ".md", ".html"):
        assert baseline.with_suffix(suffix).is_file()
    report = json.loads(baseline.read_text())
    assert (report["task"], report["scorer"], report["n"]) == ("task1", "keyword", 260)
    assert len(report["items"]) == 260


def test_gate_passes_an_equal_scorer(baseline: Path, tmp_path: Path) -> None:
    out = tmp_path / "candidate.json"
    code, _, stderr = _bench(
        "--task",
        "task1",
        "--data",
        str(DATA),
        "--scorer",
        KEYWORD,
        "--out",
        str(out),
        "--batch-size",
        "7",
    )
    assert code == 0, stderr
    result = runner.invoke(app, ["gate", "--baseline", str(baseline), "--candidate", str(out)])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.stdout and "260 paired items" in result.stdout


def test_gate_fails_a_degraded_candidate(baseline: Path, tmp_path: Path) -> None:
    report = json.loads(baseline.read_text())
    for item in report["items"]:  # make 30% of the right verdicts wrong
        picked = int(hashlib.sha256(item["cid"].encode()).hexdigest()[:8], 16) % 10 < 3
        if item["outcome"] == 1 and picked:
            item["outcome"] = 0
            item["verdict"] = "bad" if item["verdict"] == "good" else "good"
    report["scorer_version"] = "degraded"
    candidate = tmp_path / "degraded.json"
    candidate.write_text(json.dumps(report))
    args = ["gate", "--baseline", str(baseline), "--candidate", str(candidate)]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.stdout and "keyword@degraded" in result.stdout
    # a tolerance wider than the drop lets it through
    assert runner.invoke(app, [*args, "--tolerance", "0.5"]).exit_code == 0


def test_task3_with_responses(tmp_path: Path) -> None:
    lines = (DATA / "task3_recovery" / "test.jsonl").read_text().splitlines()
    responses = tmp_path / "recovery.jsonl"
    responses.write_text(
        "".join(
            json.dumps({"cid": json.loads(line)["cid"], "recovery_response": "x" * i}) + "\n"
            for i, line in enumerate(lines[:50])
        )
    )
    out = tmp_path / "t3.json"
    code, stdout, stderr = _bench(
        "--task",
        "task3",
        "--data",
        str(DATA),
        "--scorer",
        KEYWORD,
        "--responses",
        str(responses),
        "--out",
        str(out),
        "--limit",
        "80",
    )
    assert code == 0, stderr
    assert "n=80 · recovery_rate" in stdout
    md = out.with_suffix(".md").read_text()
    assert "Recovery Rate (all items)" in md and "missing reply 30" in md


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "task9", "--data", str(DATA), "--scorer", KEYWORD], "is not one of 'task1'"),
        (["--task", "task1", "--data", str(DATA), "--scorer", "nope"], "known scorers"),
        (["--task", "task2", "--data", str(DATA), "--scorer", KEYWORD], "needs a responses file"),
        (["--task", "task1", "--data", "/no/such/dir", "--scorer", KEYWORD], "does not exist"),
    ],
)
def test_bench_bad_input_exits_2(tmp_path: Path, args: list[str], message: str) -> None:
    code, _, stderr = _bench(*args, "--out", str(tmp_path / "r.json"))
    assert code == 2 and message in stderr


def test_bench_output_must_be_json(tmp_path: Path) -> None:
    code, _, stderr = _bench(
        "--task",
        "task1",
        "--data",
        str(DATA),
        "--scorer",
        KEYWORD,
        "--out",
        str(tmp_path / "r.txt"),
    )
    assert code == 2 and "expected --out to end in .json" in stderr


def test_gate_bad_input_exits_2(baseline: Path, tmp_path: Path) -> None:
    not_a_report = tmp_path / "x.json"
    not_a_report.write_text('{"hello": 1}')
    result = runner.invoke(
        app, ["gate", "--baseline", str(baseline), "--candidate", str(not_a_report)]
    )
    assert result.exit_code == 2 and "missing keys" in result.stderr
    missing = runner.invoke(
        app, ["gate", "--baseline", str(baseline), "--candidate", str(tmp_path / "none.json")]
    )
    assert missing.exit_code == 2


def test_task3_judge_reports_pair_accuracy_on_labelled_attempts(tmp_path: Path) -> None:
    # Keyword calls a reply bad when it is shorter than the complaint: a long fixing reply
    # and a terse non-fixing one rank right; the reverse ranks wrong.
    base = {"history": [], "failed_response": "x", "user_complaint": "不对，我要的是全部步骤"}
    rows = [
        {
            "cid": "a",
            **base,
            "fixing_reply": "好的，完整步骤是：第一步……第二步……",
            "non_fixing_reply": "嗯",
        },
        {
            "cid": "b",
            **base,
            "fixing_reply": "好",
            "non_fixing_reply": "抱歉，我再说一遍同样的内容。",
        },
    ]
    data = tmp_path / "t3.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    out = tmp_path / "report.json"
    code, _, stderr = _bench(
        "--task", "task3_judge", "--data", str(data), "--scorer", KEYWORD, "--out", str(out)
    )
    assert code == 0, stderr
    report = json.loads(out.read_text())
    assert report["metrics"]["pair_accuracy"] == 0.5 and report["n"] == 4
