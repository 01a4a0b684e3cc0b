"""Task declarations: registry, preparing cases from the fixtures, and task metrics
against values computed by hand."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest

from benchmark import metrics, tasks
from benchmark.errors import BenchmarkError
from benchmark.responses import ResponsesError, load_responses
from benchmark.result import ItemResult, Status
from benchmark.tasks import TaskInputError, UnknownTaskError, get_task, wilson

DATA = Path(__file__).resolve().parents[1] / "data" / "uxbench"


def _cids(config: str) -> list[str]:
    path = DATA / config / "test.jsonl"
    return [json.loads(line)["cid"] for line in path.read_text(encoding="utf-8").splitlines()]


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- registry ---


def test_registry_knows_four_versioned_tasks() -> None:
    assert tasks.known_tasks() == ["task1", "task2", "task3", "task3_judge"]
    for name in tasks.known_tasks():
        task = get_task(name)
        assert task.name == name and task.version
    assert [get_task(n).headline for n in tasks.known_tasks()] == [
        "avg_acc",
        "good_pct",
        "recovery_rate",
        "avg_acc",
    ]


def test_unknown_task_lists_the_known_ones() -> None:
    with pytest.raises(UnknownTaskError) as caught:
        get_task("task4")
    assert isinstance(caught.value, BenchmarkError)
    assert str(caught.value) == (
        "unknown task 'task4'; known tasks: task1, task2, task3, task3_judge"
    )


# --- preparing cases ---


def test_task1_prepares_cases_with_labels_groups_and_digests() -> None:
    prepared = get_task("task1").prepare(str(DATA))
    cases = prepared.cases
    assert len(cases) == 260 and sum(c.label or 0 for c in cases) == 130
    assert all(c.dialogue is not None and c.dialogue.reply for c in cases)
    assert set(cases[0].groups) == {"scenario", "dimension", "difficulty"}
    files = prepared.source.files
    assert [Path(f.path).parent.name for f in files] == ["task1_judge_bad", "task1_judge_good"]
    for f in files:
        assert f.sha256 == hashlib.sha256(Path(f.path).read_bytes()).hexdigest()
    again = get_task("task1").prepare(str(DATA))
    assert again.source.items_sha256 == prepared.source.items_sha256
    limited = get_task("task1").prepare(str(DATA), limit=5)
    assert len(limited.cases) == 10 and "first 5 records" in limited.source.description
    assert limited.source.items_sha256 != prepared.source.items_sha256


def test_task1_takes_no_responses(tmp_path: Path) -> None:
    responses = _write_jsonl(tmp_path / "r.jsonl", [])
    with pytest.raises(TaskInputError, match="expected no responses file"):
        get_task("task1").prepare(str(DATA), responses=str(responses))


def test_task2_needs_responses_and_reports_missing_ones(tmp_path: Path) -> None:
    with pytest.raises(TaskInputError, match="generated_response"):
        get_task("task2").prepare(str(DATA))
    cids = _cids("task2_eval")
    agentic = json.dumps({"content": [{"msg": "Hello "}, {"tool": "x"}, {"msg": "there"}]})
    rows: list[dict[str, object]] = [
        {"cid": cids[0], "generated_response": agentic},
        {"cid": cids[1], "generated_response": "plain reply"},
        {"cid": cids[2], "generated_response": None},  # generation failed: stays missing
        {"cid": "not-an-item", "generated_response": "orphan"},
    ]
    responses = _write_jsonl(tmp_path / "r.jsonl", rows)
    prepared = get_task("task2").prepare(str(DATA), responses=str(responses))
    by_cid = {c.cid: c for c in prepared.cases}
    assert len(by_cid) == len(cids)
    first, second = by_cid[cids[0]].dialogue, by_cid[cids[1]].dialogue
    assert first is not None and first.reply == "Hello there"
    assert second is not None and second.reply == "plain reply"
    assert sum(c.dialogue is None for c in prepared.cases) == len(cids) - 2
    assert prepared.source.unmatched_responses == 1
    assert prepared.source.responses is not None
    assert prepared.source.responses.sha256 == hashlib.sha256(responses.read_bytes()).hexdigest()


def test_task3_cases_are_in_recovery_mode(tmp_path: Path) -> None:
    cids = _cids("task3_recovery")
    responses = _write_jsonl(
        tmp_path / "r.jsonl", [{"cid": c, "recovery_response": "fixed"} for c in cids]
    )
    prepared = get_task("task3").prepare(str(DATA), responses=str(responses))
    dialogue = prepared.cases[0].dialogue
    assert dialogue is not None and dialogue.is_recovery and dialogue.reply == "fixed"
    assert prepared.source.unmatched_responses == 0


@pytest.mark.parametrize(
    ("line", "match"),
    [
        ("not json", "line 2: expected a JSON object"),
        ("[1, 2]", "line 2: expected a JSON object, got list"),
        ('{"generated_response": "x"}', "line 2: field 'cid'"),
        ('{"cid": "a", "reply": "secret text"}', "expected field 'generated_response'"),
        ('{"cid": "a", "generated_response": "again"}', "cid 'a' already had a reply"),
        ('{"cid": "b", "generated_response": 7}', "line 2: .*expected a string"),
    ],
)
def test_responses_errors_name_line_and_field_never_text(
    tmp_path: Path, line: str, match: str
) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text('{"cid": "a", "generated_response": "first"}\n' + line + "\n")
    with pytest.raises(ResponsesError, match=match) as caught:
        load_responses(path, "generated_response")
    assert "secret text" not in str(caught.value) and "again" not in str(caught.value)


# --- metrics by hand ---


def _result(
    label: int | None, status: Status, verdict: str | None, score: float | None, **groups: str
) -> ItemResult:
    task = get_task("task1") if label is not None else get_task("task2")
    return ItemResult(
        f"c{id(groups)}-{label}-{status}-{verdict}-{score}",
        label,
        score,
        verdict,
        status,
        task.outcome(label, status, verdict),
        groups,
    )


def test_task1_summary_by_hand() -> None:
    # liked: right, wrong, unparseable; disliked: right, wrong
    results = [
        _result(1, "scored", "good", 0.9, scenario="A", dimension="Accurate Answering"),
        _result(1, "scored", "bad", 0.3, scenario="A", dimension="Accurate Answering"),
        _result(1, "unparseable", None, None, scenario="B", dimension="Task Completion"),
        _result(0, "scored", "bad", 0.2, scenario="B", dimension="Factual Error"),
        _result(0, "scored", "good", 0.6, scenario="B"),
    ]
    s = get_task("task1").summarise(results)
    assert s.metrics["good_acc"] == pytest.approx(1 / 3)
    assert s.metrics["bad_acc"] == pytest.approx(1 / 2)
    assert s.metrics["avg_acc"] == pytest.approx(5 / 12)
    assert s.metrics["n_unparseable"] == 1 and s.metrics["n_scored"] == 4
    # AUROC over the 4 scored: liked {0.9, 0.3} vs disliked {0.2, 0.6}: pairs won 3 of 4
    assert s.metrics["auroc"] == pytest.approx(3 / 4)
    # ECE, 10 bins: one item per bin: |0.9-1|,|0.3-1|,|0.2-0|,|0.6-0| averaged
    assert s.metrics["ece"] == pytest.approx((0.1 + 0.7 + 0.2 + 0.6) / 4)
    assert s.confusion == metrics.Confusion(1, 1, 1, 1, 1, 0)
    scenario = {r["group"]: r for r in s.breakdowns["scenario"]}
    assert [r["group"] for r in s.breakdowns["scenario"]] == ["B", "A"]  # larger first
    assert scenario["A"]["rate"] == pytest.approx(1 / 2)
    assert scenario["B"]["rate"] == pytest.approx(1 / 3)
    assert scenario["B"]["good_acc"] == 0.0 and scenario["B"]["bad_acc"] == pytest.approx(1 / 2)
    dims = {r["group"]: r for r in s.breakdowns["dimension"]}
    assert dims["(none)"]["n"] == 1 and math.isnan(dims["Factual Error"]["good_acc"])
    assert [b.count for b in s.reliability] == [0, 0, 1, 1, 0, 0, 1, 0, 0, 1]


def test_task1_intervals_are_the_seeded_stratified_bootstrap() -> None:
    labels = [1] * 20 + [0] * 20
    verdicts = ["good"] * 15 + ["bad"] * 5 + ["bad"] * 10 + ["good"] * 10
    results = [_result(y, "scored", v, 0.5) for y, v in zip(labels, verdicts, strict=True)]
    s = get_task("task1").summarise(results)
    preds = [1 if v == "good" else 0 for v in verdicts]
    expected = metrics.bootstrap_ci(metrics.avg_acc, labels, preds, n_resamples=1000, seed=0)
    assert s.intervals["avg_acc"] == expected
    assert s.intervals["avg_acc"].estimate == pytest.approx((15 / 20 + 10 / 20) / 2)
    assert s.intervals["avg_acc"].low < 0.625 < s.intervals["avg_acc"].high
    perfect = get_task("task1").summarise([_result(1, "scored", "good", 1.0)] * 3)
    assert (perfect.intervals["good_acc"].low, perfect.intervals["good_acc"].high) == (1.0, 1.0)


def test_wilson_by_hand() -> None:
    w = wilson(5, 10)
    assert (w.estimate, round(w.low, 4), round(w.high, 4)) == (0.5, 0.2366, 0.7634)
    zero = wilson(0, 10)
    z2 = 1.959963984540054**2
    assert zero.low == 0.0 and zero.high == pytest.approx(z2 / (10 + z2))
    assert math.isnan(wilson(0, 0).estimate)


def test_task2_good_pct_excludes_missing_and_counts_failed_judgments_as_not_good() -> None:
    results = [
        _result(None, "scored", "good", 0.8, scenario="A"),
        _result(None, "scored", "bad", 0.3, scenario="A"),
        _result(None, "unparseable", None, None, scenario="A"),
        _result(None, "missing", None, None, scenario="B"),
    ]
    s = get_task("task2").summarise(results)
    assert s.metrics["good_pct"] == pytest.approx(1 / 3)
    assert s.metrics["good_pct_valid"] == pytest.approx(1 / 2)
    assert (s.metrics["n_missing"], s.metrics["n_with_reply"], s.metrics["n_valid"]) == (1, 3, 2)
    assert s.intervals["good_pct"] == wilson(1, 3)
    rows = {r["group"]: r for r in s.breakdowns["scenario"]}
    assert rows["A"]["rate"] == pytest.approx(1 / 3) and math.isnan(rows["B"]["rate"])
    assert [r.outcome for r in results] == [1, 0, 0, None]


def test_task3_reports_both_denominators() -> None:
    task = get_task("task3")

    def item(status: Status, verdict: str | None) -> ItemResult:
        return ItemResult("x", None, None, verdict, status, task.outcome(None, status, verdict))

    results = [
        item("scored", "good"),
        item("scored", "bad"),
        item("scored", "bad"),
        item("unparseable", None),
        item("missing", None),
    ]
    s = task.summarise(results)
    assert s.metrics["recovery_rate"] == pytest.approx(1 / 5)  # all items
    assert s.metrics["recovery_rate_valid"] == pytest.approx(1 / 3)  # valid judgments
    assert s.intervals["recovery_rate"] == wilson(1, 5)
    assert [r.outcome for r in results] == [1, 0, 0, 0, 0]


def test_labelled_recovery_attempts_in_both_shapes_become_recovery_cases(tmp_path: Path) -> None:
    context = {
        "history": [{"role": "user", "content": "240公里，60公里每小时，要多久？"}],
        "failed_response": "平均每分钟1公里。",
        "user_complaint": "我问的是要多久",
        "failure_dimension": "Intent Misunderstanding",
        "scenario": "Learning & Educational Support",
    }
    data = _write_jsonl(
        tmp_path / "t3.jsonl",
        [
            {"cid": "c1", **context, "fixing_reply": "4小时。", "non_fixing_reply": "很快的。"},
            {"cid": "c2", **context, "candidate_reply": "要4个小时。", "label": 1, "pair": "p"},
            {"cid": "c3", **context, "candidate_reply": "看路况。", "label": -1, "pair": "p"},
        ],
    )
    prepared = get_task("task3_judge").prepare(str(data))
    assert [(c.cid, c.label, c.groups["pair"]) for c in prepared.cases] == [
        ("c1#fix", 1, "c1"),
        ("c1#nofix", 0, "c1"),
        ("c2", 1, "p"),
        ("c3", 0, "p"),
    ]
    first = prepared.cases[0].dialogue
    assert first is not None and first.is_recovery and first.reply == "4小时。"
    assert first.failed_reply == "平均每分钟1公里。" and first.complaint == "我问的是要多久"


def test_a_record_without_candidates_names_the_field(tmp_path: Path) -> None:
    data = _write_jsonl(
        tmp_path / "t3.jsonl",
        [{"cid": "c1", "failed_response": "x", "user_complaint": "不对", "history": []}],
    )
    with pytest.raises(BenchmarkError, match="candidate_reply"):
        get_task("task3_judge").prepare(str(data))


def test_pair_accuracy_by_hand() -> None:
    task = get_task("task3_judge")

    def item(cid: str, label: int, score: float, pair: str) -> ItemResult:
        verdict = "good" if score >= 0.5 else "bad"
        return ItemResult(
            cid, label, score, verdict, "scored", task.outcome(label, "scored", verdict),
            {"pair": pair},
        )  # fmt: skip

    results = [
        item("a#fix", 1, 0.9, "a"),
        item("a#nofix", 0, 0.2, "a"),  # ranked right
        item("b#fix", 1, 0.3, "b"),
        item("b#nofix", 0, 0.6, "b"),  # ranked wrong
        item("c#fix", 1, 0.5, "c"),
        item("c#nofix", 0, 0.5, "c"),  # a tie: half
        item("d#fix", 1, 0.8, "d"),  # no partner: not a pair
    ]
    summary = task.summarise(results)
    assert summary.metrics["pair_accuracy"] == pytest.approx(1.5 / 3)
    assert summary.metrics["good_acc"] == pytest.approx(3 / 4)
