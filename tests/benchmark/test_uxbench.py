"""Loading UXBench-format data through `datasets` offline, and adapting every shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from benchmark import uxbench
from benchmark.adapters import response_text, task1_item, task2_item, task3_item
from benchmark.errors import BenchmarkError, RecordError, SourceError
from scorer.types import Turn

DATA = Path(__file__).resolve().parents[1] / "data"
HUB_LIKE = DATA / "uxbench"
MALFORMED = DATA / "uxbench_malformed.jsonl"


def _raw(config: str) -> list[dict[str, Any]]:
    path = HUB_LIKE / config / "test.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- the fixtures load through datasets, as on the hub ---


def test_fixtures_load_with_plain_datasets() -> None:
    for config in uxbench.CONFIGS:
        files = str(HUB_LIKE / config / "test.jsonl")
        ds = datasets.load_dataset("json", data_files={"test": files}, split="test")
        assert len(ds) >= 120


def test_load_records_from_directory_file_and_limit() -> None:
    by_dir = uxbench.load_records(HUB_LIKE, "task2_eval")
    by_file = uxbench.load_records(str(HUB_LIKE / "task2_eval" / "test.jsonl"))
    assert len(by_dir) == len(by_file) >= 120
    assert [r["cid"] for r in by_dir] == [r["cid"] for r in by_file]
    assert len(uxbench.load_records(HUB_LIKE, "task3_recovery", limit=5)) == 5


def test_load_task1_from_hub_like_directory_takes_both_configs() -> None:
    items = uxbench.load_task1(HUB_LIKE)
    raw_bad, raw_good = _raw("task1_judge_bad"), _raw("task1_judge_good")
    assert len(items) == len(raw_bad) + len(raw_good)
    assert sum(i.label for i in items) == len(raw_good)
    # records without ground_truth take the label their config gives them
    assert any("ground_truth" not in r for r in raw_good)
    assert all(i.label == 1 for i in items if i.cid in {r["cid"] for r in raw_good})
    for item in items:
        assert item.dialogue.user_message and item.dialogue.reply
        assert item.dialogue.id == item.cid
        assert not item.dialogue.reply.lstrip().startswith('{"agent"')
        assert all(isinstance(t, Turn) for t in item.dialogue.history)
    per_config = uxbench.load_task1(HUB_LIKE, limit=4)
    assert len(per_config) == 8 and sum(i.label for i in per_config) == 4


def test_fixtures_hold_every_shape_variant() -> None:
    raw = _raw("task1_judge_bad") + _raw("task1_judge_good")
    assert {type(r["source_query"]) for r in raw} == {str, dict}
    assert {type(r.get("selected_history")) for r in raw} >= {str, list, type(None)}
    keys = {
        k
        for r in raw
        if isinstance(r.get("selected_history"), list)
        for turn in r["selected_history"]
        for k in turn
    }
    assert {"message", "content"} <= keys
    assert any(str(r["agent_response_full"]).startswith('{"agent"') for r in raw)
    assert any("difficulty" not in r for r in raw)


def test_agentic_replies_are_unwrapped_to_their_text() -> None:
    raw = [r for r in _raw("task1_judge_bad") if str(r["agent_response_full"]).startswith("{")]
    items = {i.cid: i for i in uxbench.load_task1(HUB_LIKE / "task1_judge_bad" / "test.jsonl")}
    for r in raw:
        parsed = json.loads(r["agent_response_full"])
        expected = "".join(e["msg"] for e in parsed["content"] if "msg" in e)
        assert items[r["cid"]].dialogue.reply == expected


def test_load_task2_and_task3() -> None:
    t2 = uxbench.load_task2(HUB_LIKE)
    assert len(t2) >= 120
    for item in t2:
        assert item.dialogue.reply == ""
        assert (
            not item.dialogue.history
            or item.dialogue.history[-1].text != item.dialogue.user_message
        )
    assert any(item.extras.get("scene_l1") for item in t2)
    assert t2[0].with_reply("ok").dialogue.reply == "ok"
    t3 = uxbench.load_task3(HUB_LIKE)
    assert len(t3) >= 120
    for recovery in t3:
        d = recovery.dialogue
        assert d.is_recovery and d.failed_reply and d.complaint == d.user_message and d.reply == ""
    assert t3[0].with_reply("抱歉，重新回答：").dialogue.reply == "抱歉，重新回答："


# --- adapters on hand-written records, one shape at a time ---

BASE: dict[str, Any] = {
    "cid": "c1",
    "ground_truth": -1,
    "source_query": {"turn_index": 2, "message": "那第二步呢？"},
    "selected_history": [
        {"turn_index": 0, "role": "user", "message": "怎么冻结表头"},
        {"turn_index": 1, "role": "assistant", "content": "点「视图」-「冻结窗格」。"},
    ],
    "agent_response_full": "选「冻结首行」。",
    "scenario": "Productivity & Office Efficiency",
    "failure_dimension": "Task Incompleteness",
    "difficulty": "medium",
}


def test_task1_item_accepts_every_shape() -> None:
    item = task1_item(BASE)
    assert item.label == 0 and item.dimension == "Task Incompleteness"
    assert [t.role for t in item.dialogue.history] == ["user", "assistant"]
    assert item.dialogue.history[1].text == "点「视图」-「冻结窗格」。"
    as_string = task1_item(
        BASE
        | {
            "source_query": "那第二步呢？",
            "selected_history": json.dumps(BASE["selected_history"], ensure_ascii=False),
        }
    )
    assert as_string.dialogue == item.dialogue
    agentic = json.dumps(
        {"content": [{"type": "search", "docs": []}, {"msg": "选「冻结"}, {"msg": "首行」。"}]}
    )
    assert task1_item(BASE | {"agent_response_full": agentic}).dialogue.reply == "选「冻结首行」。"
    assert (
        task1_item(BASE | {"agent_response_full": json.loads(agentic)}).dialogue.reply
        == "选「冻结首行」。"
    )
    minimal = {
        "cid": 7,
        "ground_truth": "1",
        "source_query": 42,
        "agent_response_full": "{not agentic",
    }
    m = task1_item(minimal)
    assert (m.cid, m.label, m.dialogue.user_message, m.dialogue.reply) == (
        "7",
        1,
        "42",
        "{not agentic",
    )
    assert (m.scenario, m.dimension, m.difficulty, m.dialogue.history) == ("", "", "", ())
    with_system = BASE | {
        "selected_history": [{"role": "system", "content": "be nice"}, *BASE["selected_history"]]
    }
    assert len(task1_item(with_system).dialogue.history) == 2
    assert (
        task1_item({k: v for k, v in BASE.items() if k != "ground_truth"}, default_label=1).label
        == 1
    )


def test_response_text_keeps_json_that_is_not_agentic() -> None:
    assert response_text('{"name": "x"}', "c", "agent_response_full") == '{"name": "x"}'
    with pytest.raises(RecordError):
        response_text(["a"], "c", "agent_response_full")


def test_task2_item_drops_the_query_and_system_turns_from_messages() -> None:
    record = {
        "cid": "t2",
        "query": "再简短点",
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "什么是熵？"},
            {"role": "assistant", "content": "熵是……"},
            {"role": "user", "content": "再简短点"},
        ],
        "scene_l1": "学习",
        "signal_type": "dislike",
    }
    item = task2_item(record)
    assert [t.text for t in item.dialogue.history] == ["什么是熵？", "熵是……"]
    assert item.extras == {"scene_l1": "学习"} and item.signal_type == "dislike"
    history_shape = task2_item(
        {"cid": "t2", "query": "q", "history": [{"role": "user", "message": "a"}]}
    )
    assert history_shape.dialogue.history == (Turn("user", "a"),)


def test_task3_item_is_in_recovery_mode() -> None:
    item = task3_item(
        {
            "cid": "t3",
            "history": [
                {"role": "user", "content": "珠峰多高？"},
                {"role": "assistant", "content": "8844米。"},
            ],
            "failed_response": "8844米。",
            "user_complaint": "不对吧",
            "scenario": "x",
            "failure_dimension": "Factual Error",
        }
    )
    d = item.dialogue
    assert d.history == (Turn("user", "珠峰多高？"),)  # the repeated failed reply is not history
    assert (d.failed_reply, d.complaint, d.user_message, d.reply) == (
        "8844米。",
        "不对吧",
        "不对吧",
        "",
    )
    assert item.dimension == "Factual Error"


# --- malformed records ---

EXPECTED_ERRORS = {
    "bad-missing-reply": "agent_response_full",
    "bad-query-type": "source_query",
    "bad-role": "selected_history[0].role",
    "bad-label": "ground_truth",
    "bad-history-json": "selected_history",
    "bad-turn-text": "selected_history[0].message",
    "bad-query-missing-message": "source_query.message",
    None: "cid",
}


def test_malformed_record_raises_naming_cid_and_field_not_text() -> None:
    with pytest.raises(RecordError) as info:
        uxbench.load_task1(MALFORMED)
    err = info.value
    assert isinstance(err, BenchmarkError)
    assert err.cid == "bad-missing-reply" and err.field == "agent_response_full"
    assert "bad-missing-reply" in str(err) and "agent_response_full" in str(err)


@pytest.mark.parametrize("record", [json.loads(x) for x in MALFORMED.read_text().splitlines()])
def test_each_malformed_record(record: dict[str, Any]) -> None:
    cid = record.get("cid")
    if cid is not None and cid.startswith("ok-"):
        assert task1_item(record).cid == cid
        return
    with pytest.raises(RecordError) as info:
        task1_item(record)
    assert (info.value.cid, info.value.field) == (cid, EXPECTED_ERRORS[cid])
    for text in ("珠峰", "8848", "robot" if cid != "bad-role" else "\0", "hello", "not json"):
        assert text not in str(info.value)


def test_skip_mode_counts_and_reports(caplog: pytest.LogCaptureFixture) -> None:
    skipped: list[RecordError] = []
    items = uxbench.load_task1(MALFORMED, on_error="skip", skipped=skipped)
    assert [i.cid for i in items] == ["ok-0", "ok-1", "ok-2"]
    assert {(e.cid, e.field) for e in skipped} == set(EXPECTED_ERRORS.items())
    assert "skipped 8 malformed Task-1 records" in caplog.text
    with pytest.raises(ValueError, match="on_error"):
        uxbench.load_task1(MALFORMED, on_error="ignore")  # type: ignore[arg-type]


# --- sources ---


def test_parquet_and_flat_directory(tmp_path: Path) -> None:
    rows = [
        {"cid": f"p{i}", "ground_truth": 1, "source_query": "hi", "agent_response_full": "hello"}
        for i in range(3)
    ]
    datasets.Dataset.from_list(rows).to_parquet(str(tmp_path / "task1_judge_good.parquet"))
    assert len(uxbench.load_records(tmp_path / "task1_judge_good.parquet")) == 3
    flat = uxbench.load_task1(tmp_path)  # <dir>/<config>.parquet counts as the config
    assert [i.label for i in flat] == [1, 1, 1]
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "mine.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows), encoding="utf-8"
    )
    assert len(uxbench.load_records(tmp_path / "plain")) == 3


def test_source_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="does not exist"):
        uxbench.load_records(tmp_path / "nope.jsonl")
    with pytest.raises(SourceError, match="task2_eval"):
        uxbench.load_records(HUB_LIKE, "task9")
    with pytest.raises(SourceError, match="needs a config"):
        uxbench.load_records("hub")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(SourceError, match=r"\.csv"):
        uxbench.load_records(tmp_path / "x.csv")


def test_hub_source_calls_datasets_with_the_hub_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str | None, str]] = []
    good = {"cid": "h", "source_query": "q", "agent_response_full": "r"}

    def fake_load_dataset(path: str, name: str | None = None, split: str = "") -> datasets.Dataset:
        calls.append((path, name, split))
        return datasets.Dataset.from_list([good])

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    items = uxbench.load_task1("hub", limit=1)
    assert calls == [
        (uxbench.HUB_REPO, "task1_judge_bad", "test[:1]"),
        (uxbench.HUB_REPO, "task1_judge_good", "test[:1]"),
    ]
    assert [i.label for i in items] == [0, 1]  # no ground_truth: the config decides
    uxbench.load_records("mengze-hong/UXBench", "task2_eval")
    assert calls[-1] == (uxbench.HUB_REPO, "task2_eval", "test")
