"""The inspection report over hand-made scores-topic records: no broker, no worker."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from stream.inspection import InspectionError, Query, build_report, parse_when

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def at(minutes: float) -> str:
    return (T0 + timedelta(minutes=minutes)).isoformat()


def score(
    cid: str,
    tid: str,
    minutes: float,
    p: float,
    *,
    model: str | None = "m1",
    scenario: str | None = "Other",
    assistant: str | None = "web",
    scorer: str = "ux_judge",
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "type": "score",
        "conversation_id": cid,
        "turn_id": tid,
        "assistant_id": assistant,
        "model_version": model,
        "scenario": scenario,
        "locale": "en-US",
        "event_ts": at(minutes),
        "scored_at": at(minutes),
        "recovery": False,
        "scores": [
            {
                "scorer": scorer,
                "version": "v1",
                "p_satisfied": p,
                "verdict": "good" if p >= 0.5 else "bad",
                "latency_s": 0.01,
            }
        ],
    }


def reaction(cid: str, tid: str, minutes: float, kind: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "type": "reaction",
        "conversation_id": cid,
        "turn_id": tid,
        "reaction": kind,
        "dissatisfied": kind not in ("satisfied", "no_follow_up"),
        "ts": at(minutes),
    }


def episode(
    cid: str, eid: str, closed: float, outcome: str, *, scenario: str | None = "Other", **extra: Any
) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "type": "episode",
        "conversation_id": cid,
        "episode_id": eid,
        "scenario": scenario,
        "assistant_id": "web",
        "trigger": "reaction",
        "outcome": outcome,
        "cause": "verdict",
        "attempts": 1,
        "last_attempt": None,
        "opened_ts": at(closed - 1),
        "closed_ts": at(closed),
        "seconds": 60.0,
        **extra,
    }


def ids(section: dict[str, Any], *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(item[k] for k in keys) for item in section["items"]]


def test_worst_turns_rank_by_the_chosen_scorer_lowest_first() -> None:
    records = [
        score("c1", "t1", 0, 0.9),
        score("c2", "t1", 1, 0.1),
        score("c3", "t1", 2, 0.4),
        score("c4", "t1", 3, 0.05, scorer="grm"),
    ]
    report = build_report(records, Query(limit=2)).to_json()
    assert ids(report["worst_turns"], "conversation_id", "p_satisfied") == [
        ("c2", 0.1),
        ("c3", 0.4),
    ]
    assert report["worst_turns"]["total"] == 3
    assert report["scorers_seen"] == ["grm", "ux_judge"]
    grm = build_report(records, Query(scorer="grm")).to_json()
    assert ids(grm["worst_turns"], "conversation_id") == [("c4",)]


def test_only_failed_and_gave_up_episodes_newest_first() -> None:
    records = [
        episode("c1", "t2", 10, "failed"),
        episode("c2", "t2", 12, "recovered"),
        episode("c3", "t4", 14, "gave_up"),
    ]
    report = build_report(records, Query()).to_json()
    assert ids(report["episodes"], "conversation_id", "outcome") == [
        ("c3", "gave_up"),
        ("c1", "failed"),
    ]


def test_a_redelivered_record_counts_once() -> None:
    records = [episode("c1", "t2", 10, "failed")] * 2 + [score("c1", "t2", 9, 0.2)] * 2
    report = build_report(records, Query()).to_json()
    assert report["episodes"]["total"] == 1 and report["worst_turns"]["total"] == 1


def test_the_window_reads_event_times() -> None:
    records = [
        score("c1", "t1", 0, 0.1),
        score("c2", "t1", 30, 0.2),
        episode("c1", "t2", 5, "failed"),
        episode("c2", "t2", 35, "failed"),
    ]
    query = Query(since=T0 + timedelta(minutes=20), until=T0 + timedelta(minutes=40))
    report = build_report(records, query).to_json()
    assert ids(report["worst_turns"], "conversation_id") == [("c2",)]
    assert ids(report["episodes"], "conversation_id") == [("c2",)]
    assert report["query"]["since"] == (T0 + timedelta(minutes=20)).isoformat()


def test_filters_join_episodes_and_streaks_to_their_turns_score_records() -> None:
    records = [
        score("c1", "t2", 0, 0.1, model="m1"),
        score("c2", "t2", 0, 0.1, model="m2"),
        episode("c1", "t2", 5, "failed"),
        episode("c2", "t2", 5, "failed"),
        episode("c3", "t2", 5, "failed"),  # no score record read: its model is unknown
        reaction("c2", "t2", 1, "complaint"),
        reaction("c2", "t4", 2, "complaint"),
    ]
    m2 = build_report(records, Query(model_version="m2")).to_json()
    assert ids(m2["episodes"], "conversation_id", "model_version") == [("c2", "m2")]
    assert ids(m2["complaint_streaks"], "conversation_id") == [("c2",)]
    assert (
        build_report(records, Query(model_version="m1")).to_json()["complaint_streaks"]["total"]
        == 0
    )
    # Unfiltered, the unknown model is shown as null, not guessed.
    everything = build_report(records, Query()).to_json()
    assert ("c3", None) in ids(everything["episodes"], "conversation_id", "model_version")


def test_an_episodes_own_scenario_wins_and_a_missing_one_is_excluded_by_the_filter() -> None:
    records = [
        score("c1", "t2", 0, 0.1, scenario="Other"),
        episode("c1", "t2", 5, "failed", scenario="Casual Chat & Companionship"),
        episode("c2", "t2", 5, "failed", scenario=None),
    ]
    report = build_report(records, Query(scenario="Casual Chat & Companionship")).to_json()
    assert ids(report["episodes"], "conversation_id") == [("c1",)]
    assert build_report(records, Query(scenario="Other")).to_json()["episodes"]["total"] == 0


def test_an_episode_falls_back_to_its_last_attempts_labels() -> None:
    records = [
        score("c1", "t4", 2, 0.1, model="m9"),
        episode("c1", "t2", 5, "gave_up", last_attempt="t4"),
    ]
    report = build_report(records, Query(model_version="m9")).to_json()
    assert ids(report["episodes"], "episode_id", "last_attempt") == [("t2", "t4")]


def test_complaint_streaks_need_consecutive_complaints() -> None:
    records = [
        # c1: complaint, complaint, satisfied, complaint -> one streak of 2
        reaction("c1", "t2", 1, "complaint"),
        reaction("c1", "t4", 2, "complaint"),
        reaction("c1", "t6", 3, "satisfied"),
        reaction("c1", "t8", 4, "complaint"),
        # c2: complaint, repeat (dissatisfied but not a complaint), complaint -> none
        reaction("c2", "t2", 1, "complaint"),
        reaction("c2", "t4", 2, "repeat"),
        reaction("c2", "t6", 3, "complaint"),
        # c3: three in a row, published out of event-time order
        reaction("c3", "t6", 3, "complaint"),
        reaction("c3", "t2", 1, "complaint"),
        reaction("c3", "t4", 2, "complaint"),
    ]
    report = build_report(records, Query()).to_json()
    streaks = report["complaint_streaks"]["items"]
    assert [(s["conversation_id"], s["complaints"], s["turn_ids"]) for s in streaks] == [
        ("c3", 3, ["t2", "t4", "t6"]),
        ("c1", 2, ["t2", "t4"]),
    ]
    assert streaks[0]["first_ts"] == at(1) and streaks[0]["last_ts"] == at(3)
    three = build_report(records, Query(streak=3)).to_json()
    assert ids(three["complaint_streaks"], "conversation_id") == [("c3",)]


def test_a_streak_is_listed_when_it_overlaps_the_window() -> None:
    records = [reaction("c1", "t2", 1, "complaint"), reaction("c1", "t4", 10, "complaint")]
    inside = Query(since=T0 + timedelta(minutes=5), until=T0 + timedelta(minutes=20))
    after = Query(since=T0 + timedelta(minutes=11))
    assert build_report(records, inside).to_json()["complaint_streaks"]["total"] == 1
    assert build_report(records, after).to_json()["complaint_streaks"]["total"] == 0


def test_unreadable_records_are_skipped_and_counted() -> None:
    records: list[Any] = [
        None,
        [1, 2],
        {"type": "score", "conversation_id": "c1"},
        {"type": "score", "conversation_id": "c1", "turn_id": "t1", "event_ts": "yesterday"},
        {"type": "mystery", "conversation_id": "c1", "turn_id": "t1"},
        score("c1", "t2", 0, 0.3),
    ]
    report = build_report(records, Query()).to_json()
    assert (report["records"], report["skipped"]) == (6, 5)
    assert report["worst_turns"]["total"] == 1


def test_no_text_comes_out_even_when_the_records_carry_it() -> None:
    record = score("c1", "t2", 0, 0.3) | {"user_message": "SECRET-U", "reply": "SECRET-R"}
    out = json.dumps(build_report([record], Query()).to_json())
    assert "SECRET" not in out


def test_the_json_keys_are_stable() -> None:
    report = build_report([score("c1", "t1", 0, 0.2)], Query()).to_json()
    assert list(report) == [
        "query",
        "records",
        "skipped",
        "scorers_seen",
        "worst_turns",
        "episodes",
        "complaint_streaks",
    ]
    assert set(report["worst_turns"]["items"][0]) == {
        "conversation_id",
        "turn_id",
        "event_ts",
        "p_satisfied",
        "verdict",
        "scorer_version",
        "recovery",
        "scenario",
        "assistant_id",
        "model_version",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30m", T0 - timedelta(minutes=30)),
        ("1h", T0 - timedelta(hours=1)),
        ("1h30m", T0 - timedelta(minutes=90)),
        ("2d", T0 - timedelta(days=2)),
        ("45s", T0 - timedelta(seconds=45)),
        ("2026-11-20T08:00:00+00:00", T0 - timedelta(hours=1)),
        ("2026-11-20T08:00:00Z", T0 - timedelta(hours=1)),
        ("2026-11-20T08:00:00", T0 - timedelta(hours=1)),  # no offset: UTC
        ("2026-11-20T16:00:00+08:00", T0 - timedelta(hours=1)),
    ],
)
def test_window_bounds_are_durations_or_iso_times(text: str, expected: datetime) -> None:
    assert parse_when(text, T0) == expected


@pytest.mark.parametrize("text", ["", "1x", "soon", "h1", "-1h"])
def test_a_bad_window_bound_says_what_was_expected(text: str) -> None:
    with pytest.raises(InspectionError, match="expected a duration"):
        parse_when(text, T0)


def test_an_empty_window_or_a_bad_limit_is_refused() -> None:
    with pytest.raises(InspectionError, match="window is empty"):
        Query(since=T0, until=T0 - timedelta(seconds=1))
    with pytest.raises(InspectionError, match="limit"):
        Query(limit=0)
