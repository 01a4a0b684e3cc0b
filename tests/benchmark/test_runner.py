"""The runner: a failing scorer never crashes a run; its failing items count as wrong."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pytest

from benchmark.result import Report, load_report
from benchmark.runner import RunError, run
from benchmark.tasks import Case, Prepared, get_task
from scorer.types import Dialogue, Score, Verdict
from tests.support.scorers import Keyword

DATA = Path(__file__).resolve().parents[1] / "data" / "uxbench"


@pytest.fixture(scope="module")
def task1() -> Prepared:
    return get_task("task1").prepare(str(DATA))


def _score(p: float, verdict: str = "") -> Score:
    v = Verdict(verdict) if verdict else (Verdict.GOOD if p >= 0.5 else Verdict.BAD)
    return Score(p, v, "fake", "1", 0.0)


class AlwaysGood:
    name, version = "always-good", "1"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def load(self) -> None: ...

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        self.calls.append(len(batch))
        return [_score(0.9) for _ in batch]


class Flaky:
    """Raises on any batch holding a cid in `poison`; drops the last score of a batch
    holding a cid in `short`; returns an invalid score for a cid in `invalid`."""

    name, version = "flaky", "1"

    def __init__(self, poison: set[str], short: set[str], invalid: set[str]) -> None:
        self.poison, self.short, self.invalid = poison, short, invalid
        self.calls = 0

    def load(self) -> None: ...

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        self.calls += 1
        if any(d.id in self.poison for d in batch):
            raise RuntimeError("model exploded")
        out = [_score(math.nan) if d.id in self.invalid else _score(0.9) for d in batch]
        if any(d.id in self.short for d in batch):
            out = out[:-1]
        return out


class Broken:
    name, version = "broken", "0"

    def load(self) -> None: ...

    def score(self, batch: Sequence[Dialogue]) -> list[Score]:
        raise ValueError("always")


def test_keyword_on_the_fixtures(task1: Prepared) -> None:
    report = run(get_task("task1"), task1.cases, Keyword(), batch_size=16, source=task1.source)
    assert (report.task, report.task_version, report.headline) == ("task1", "1", "avg_acc")
    assert (report.scorer, report.scorer_version, report.n) == ("keyword", "test-1", 260)
    c = report.confusion
    assert c is not None and c.liked_as_liked + c.liked_as_disliked == 130
    assert report.metrics["good_acc"] == pytest.approx(c.liked_as_liked / 130)
    assert report.metrics["bad_acc"] == pytest.approx(c.disliked_as_disliked / 130)
    assert report.source is task1.source and report.errors == {}
    item = report.items[0]
    assert item.cid == task1.cases[0].cid and item.status == "scored"
    assert item.verdict in ("good", "bad") and item.score in (0.2, 0.8)
    assert item.outcome == int((item.verdict == "good") == (item.label == 1))
    assert report.intervals["avg_acc"].low <= report.metrics["avg_acc"]  # type: ignore[operator]


def test_scorer_failures_are_unparseable_items_not_crashes(task1: Prepared) -> None:
    cases = task1.cases[:20] + task1.cases[-20:]  # 20 disliked, then 20 liked
    liked = [c.cid for c in cases if c.label == 1]
    poison, short, invalid = {liked[0]}, {liked[5]}, {liked[14]}  # in batches 3, 4, 5
    report = run(get_task("task1"), cases, Flaky(poison, short, invalid), batch_size=8)
    unparseable = {i.cid for i in report.items if i.status == "unparseable"}
    assert unparseable == poison | short | invalid
    assert report.errors == {
        "batch_raised": 1,  # the poisoned batch; its items were then retried one by one
        "item_raised": 1,  # the poisoned item on its own
        "exception:RuntimeError": 2,
        "batch_wrong_length": 1,  # the short batch, retried one by one
        "item_no_score": 1,  # the item the scorer kept dropping
        "invalid_score": 1,  # NaN probability
    }
    # unparseable counts as wrong: Flaky gets every other liked item right
    assert report.metrics["good_acc"] == pytest.approx(17 / 20)
    assert report.metrics["n_unparseable"] == 3
    assert report.confusion is not None and report.confusion.liked_unparsed == 3
    assert "model exploded" not in report.to_json()


def test_a_scorer_that_always_raises_scores_zero(task1: Prepared) -> None:
    report = run(get_task("task1"), task1.cases[:5] + task1.cases[-5:], Broken(), batch_size=4)
    assert all(i.status == "unparseable" and i.outcome == 0 for i in report.items)
    assert report.metrics["avg_acc"] == 0.0
    assert math.isnan(report.metrics["auroc"])  # type: ignore[arg-type]


def test_missing_replies_are_not_sent_to_the_scorer(tmp_path: Path) -> None:
    cids = [json.loads(line)["cid"] for line in (DATA / "task3_recovery" / "test.jsonl").open()]
    responses = tmp_path / "r.jsonl"
    responses.write_text(
        "".join(json.dumps({"cid": c, "recovery_response": "ok"}) + "\n" for c in cids[:7])
    )
    prepared = get_task("task3").prepare(str(DATA), responses=str(responses))
    scorer = AlwaysGood()
    report = run(get_task("task3"), prepared.cases, scorer, batch_size=3)
    assert scorer.calls == [3, 3, 1]
    assert report.metrics["n_missing"] == len(cids) - 7
    assert report.metrics["recovery_rate"] == pytest.approx(7 / len(cids))
    assert report.metrics["recovery_rate_valid"] == 1.0


def test_bad_inputs_are_errors(task1: Prepared) -> None:
    task = get_task("task1")
    with pytest.raises(RunError, match="batch size of at least 1, got 0"):
        run(task, task1.cases, Keyword(), batch_size=0)
    with pytest.raises(RunError, match="at least one case"):
        run(task, [], Keyword())
    with pytest.raises(RunError, match="unique cids"):
        run(task, [task1.cases[0], task1.cases[0]], Keyword())


def test_report_json_round_trips_with_nan_as_null(task1: Prepared, tmp_path: Path) -> None:
    one_class = [c for c in task1.cases if c.label == 1][:5]
    report = run(get_task("task1"), one_class, Keyword())
    text = report.to_json()
    data = json.loads(text)  # strict JSON: NaN would not parse as a number here
    assert data["metrics"]["bad_acc"] is None and "NaN" not in text
    assert set(data["items"][0]) >= {"cid", "score", "verdict", "label"}
    path = tmp_path / "r.json"
    path.write_text(text)
    again = load_report(path)
    assert isinstance(again, Report) and again.to_json() == text


def test_progress_bar_goes_to_stderr(task1: Prepared, capsys: pytest.CaptureFixture[str]) -> None:
    run(get_task("task1"), task1.cases[:6], Keyword(), batch_size=2, progress=True)
    captured = capsys.readouterr()
    assert captured.out == "" and "6/6" in captured.err


def test_cases_passed_directly_get_a_fingerprint() -> None:
    d = Dialogue("q", "a", id="x")
    report = run(get_task("task1"), [Case("x", d, 1, {})], Keyword())
    assert report.source.description == "cases passed in directly"
    assert len(report.source.items_sha256) == 64
