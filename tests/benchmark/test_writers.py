"""The bundled multi-writer corpus: what must hold for it to be evidence, and the loader."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark import writers
from benchmark.errors import SourceError


@pytest.fixture(scope="module")
def task1() -> list[writers.Written1]:
    return writers.load_task1()


def test_the_bundled_corpus_meets_every_requirement(task1: list[writers.Written1]) -> None:
    stats = writers.writer_stats(task1)
    assert writers.problems(stats) == []
    assert len(task1) >= 2400
    assert sum(s.zh_share * s.records for s in stats) / len(task1) > 0.6  # mostly Chinese
    assert len(writers.load_task3()) >= 300


def test_every_dimension_and_scenario_is_covered(task1: list[writers.Written1]) -> None:
    from benchmark.taxonomy import FAILURE_DIMENSIONS, SCENARIOS, SUCCESS_DIMENSIONS

    disliked = {r.item.dimension for r in task1 if r.item.label == 0}
    liked = {r.item.dimension for r in task1 if r.item.label == 1}
    assert set(FAILURE_DIMENSIONS) <= disliked
    assert set(SUCCESS_DIMENSIONS) <= liked
    assert set(SCENARIOS) - {"Other"} <= {r.item.scenario for r in task1}


def test_cids_are_unique(task1: list[writers.Written1]) -> None:
    cids = [r.item.cid for r in task1]
    assert len(cids) == len(set(cids))


def test_length_alone_is_flagged() -> None:
    stats = [
        writers.WriterStats("x", 100, 0.5, 1.0, 0.9, 0.3, 0.4, 0),
        writers.WriterStats("y", 100, 0.8, 1.0, 0.5, 0.1, 0.1, 2),
    ]
    found = writers.problems(stats, writers.Requirements(min_writers=2))
    assert any("x: reply length alone gives AUROC 0.90" in f for f in found)
    assert any("y: liked share 0.80" in f for f in found)
    assert any("y: 10% of queries paired" in f for f in found)
    assert any("y: 2 disliked replies hold giveaway words" in f for f in found)
    assert not any(f.startswith("x: liked") for f in found)


def test_giveaways_are_found_case_blind() -> None:
    assert writers.giveaways("This answer is WRONG, sorry") == ["this answer is wrong"]
    assert writers.giveaways("一个普通的回答") == []


def _write(root: Path, task: str, writer: str, records: list[dict]) -> None:
    (root / task).mkdir(parents=True, exist_ok=True)
    (root / task / f"{writer}.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n"
    )


def test_a_record_filed_under_another_writer_is_refused(tmp_path: Path) -> None:
    record = {
        "cid": "a-1",
        "writer": "b",
        "ground_truth": 1,
        "source_query": "q",
        "agent_response_full": "r",
    }
    _write(tmp_path, "task1", "a", [record])
    with pytest.raises(SourceError, match=r"a\.jsonl:1: writer 'b' in the file of 'a'"):
        writers.load_task1(tmp_path)


def test_a_bad_record_names_file_line_and_field(tmp_path: Path) -> None:
    _write(tmp_path, "task1", "a", [{"cid": "a-1", "writer": "a", "ground_truth": 1}])
    with pytest.raises(SourceError, match=r"a.jsonl:1: .*source_query"):
        writers.load_task1(tmp_path)
    with pytest.raises(SourceError, match=r"no task3/<writer>\.jsonl"):
        writers.load_task3(tmp_path)


def test_contrastive_pairs_pair_a_liked_and_a_disliked_record() -> None:
    from benchmark.crosswriter import _contrastive_pairs

    corpus = writers.load_task1()
    pairs = _contrastive_pairs(corpus)
    assert len(pairs) >= 500
    for liked, disliked in pairs[:50]:
        a, b = corpus[liked], corpus[disliked]
        assert (a.item.label, b.item.label) == (1, 0) and a.pair == b.pair
        assert a.item.dialogue.user_message == b.item.dialogue.user_message
