"""Rendering: three files, deterministic, self-contained, escaped, and free of record text."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html import escape
from pathlib import Path

import pytest

from benchmark.report import ReportWriteError, html, markdown, misjudged, write_report
from benchmark.result import Report, load_report
from benchmark.runner import run
from benchmark.tasks import Prepared, get_task
from tests.support.scorers import Keyword

DATA = Path(__file__).resolve().parents[1] / "data" / "uxbench"


@pytest.fixture(scope="module")
def task1() -> Prepared:
    return get_task("task1").prepare(str(DATA))


@pytest.fixture(scope="module")
def report(task1: Prepared) -> Report:
    return run(get_task("task1"), task1.cases, Keyword(), source=task1.source)


def test_writes_json_markdown_and_html_beside_each_other(report: Report, tmp_path: Path) -> None:
    paths = write_report(report, tmp_path / "out" / "report.json")
    assert [p.name for p in paths] == ["report.json", "report.md", "report.html"]
    assert load_report(paths[0]).to_json() == report.to_json()
    md = paths[1].read_text(encoding="utf-8")
    assert md.startswith("# UXBench task1 · keyword test-1")
    assert "| **Avg-Acc** |" in md and "## Confusion matrix" in md and "## By dimension" in md
    assert "## Reliability" in md and report.source.files[0].sha256 in md


def test_output_path_must_be_json(report: Report, tmp_path: Path) -> None:
    with pytest.raises(ReportWriteError, match=r"ending in \.json, got 'report.html'"):
        write_report(report, tmp_path / "report.html")


def test_rendering_is_deterministic(report: Report) -> None:
    again = Report.from_dict(json.loads(report.to_json()))
    assert markdown(again) == markdown(report)
    assert html(again) == html(report)


def test_html_is_self_contained_with_the_three_charts(report: Report) -> None:
    page = html(report)
    assert page.count("<svg") == 5  # reliability, histogram, three breakdowns
    assert "reliability diagram" in page and "score histogram" in page
    assert "Accuracy by dimension" in page
    assert not re.search(r"(src|href)\s*=", page)  # nothing fetched from elsewhere
    assert "<script" not in page


def test_no_record_text_reaches_the_rendered_report(
    report: Report, task1: Prepared, tmp_path: Path
) -> None:
    rendered = markdown(report) + html(report) + report.to_json()
    for case in task1.cases[::13]:
        assert case.dialogue is not None
        for text in (case.dialogue.user_message, case.dialogue.reply):
            if len(text) >= 12:
                assert text not in rendered


def test_taxonomy_labels_are_escaped(report: Report) -> None:
    items = [replace(i, groups={**i.groups, "scenario": "<b>x</b> & y"}) for i in report.items]
    hostile = replace(
        report,
        items=items,
        breakdowns={"scenario": [{"group": "<b>x</b> & y", "n": 1, "rate": 0.5}]},
    )
    page = html(hostile)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt; &amp; y" in page


def test_task2_and_task3_render(tmp_path: Path) -> None:
    cids = [json.loads(line)["cid"] for line in (DATA / "task3_recovery" / "test.jsonl").open()]
    responses = tmp_path / "r.jsonl"
    responses.write_text(
        "".join(
            json.dumps({"cid": c, "recovery_response": "sorry" * (i % 4)}) + "\n"
            for i, c in enumerate(cids[:60])
        )
    )
    prepared = get_task("task3").prepare(str(DATA), responses=str(responses))
    report = run(get_task("task3"), prepared.cases, Keyword(), source=prepared.source)
    md = markdown(report)
    assert "| **Recovery Rate (all items)** |" in md and "Recovery Rate (valid judgments)" in md
    assert "missing reply 70" in md and "responses `" in md
    page = html(report)
    assert page.count("<svg") == 3 and "Recovery (all) by scenario" in page


def test_the_most_confidently_wrong_items_are_listed_by_id(report: Report) -> None:
    wrong = misjudged(report)
    assert wrong and len(wrong) <= 10
    assert all(i.outcome == 0 and i.label is not None for i in wrong)
    distances = [abs((i.score or 0.0) - 0.5) for i in wrong]
    assert distances == sorted(distances, reverse=True)
    every_wrong = [i for i in report.items if i.outcome == 0 and i.score is not None]
    assert max(abs((i.score or 0.0) - 0.5) for i in every_wrong) == distances[0]
    md, page = markdown(report), html(report)
    assert "## Most confidently wrong" in md and "Most confidently wrong" in page
    for item in wrong:
        assert f"| {item.cid} |" in md and escape(item.cid) in page


def test_text_of_misjudged_items_only_when_asked(
    report: Report, task1: Prepared, tmp_path: Path
) -> None:
    texts = {c.cid: (c.dialogue.user_message, c.dialogue.reply) for c in task1.cases if c.dialogue}
    paths = write_report(report, tmp_path / "report.json", texts)
    md, page, raw = (p.read_text(encoding="utf-8") for p in (paths[1], paths[2], paths[0]))
    first = misjudged(report)[0]
    message = " ".join(texts[first.cid][0].split())[:40]
    assert message in md and escape(message) in page
    assert message not in raw  # report.json never holds text
    assert message not in markdown(report) + html(report)  # nor the default renderings


def test_difficulty_is_in_its_natural_order(report: Report) -> None:
    groups = [row["group"] for row in report.breakdowns["difficulty"]]
    natural = [g for g in ("easy", "medium", "hard") if g in groups]
    assert groups[: len(natural)] == natural
