from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmark.adapters import DISLIKED, LIKED, task1_item
from benchmark.uxbench import load_task1
from stream.commands.labels import write
from stream.conversation import (
    Bounds,
    ConversationState,
    Position,
    ReactionSeen,
    Signal,
    Tracking,
    apply_event,
)
from stream.events import Event, FeedbackEvent, TurnEvent
from stream.labels import Labelled, Source, label_id, label_record, select
from stream.reactions import Patterns, Reaction

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
ON = Tracking(Patterns.load(), labels=True)
OFF = Tracking(Patterns.load())


def turn(tid: str, role: str, text: str, seconds: float, **extra: str) -> TurnEvent:
    return TurnEvent(
        schema_version=1,
        type="turn",
        conversation_id="c1",
        turn_id=tid,
        role=role,  # type: ignore[arg-type]
        text=text,
        ts=T0 + timedelta(seconds=seconds),
        **extra,  # type: ignore[arg-type]
    )


def feedback(tid: str, kind: str, seconds: float) -> FeedbackEvent:
    return FeedbackEvent(
        schema_version=1,
        type="feedback",
        conversation_id="c1",
        turn_id=tid,
        kind=kind,  # type: ignore[arg-type]
        ts=T0 + timedelta(seconds=seconds),
    )


def signals(
    events: list[Event], tracking: Tracking = ON, bounds: Bounds | None = None
) -> list[Signal]:
    state, out = ConversationState(), []
    for offset, event in enumerate(events):
        applied = apply_event(
            state,
            event,
            Position("t", 0, offset),
            now_s=0,
            bounds=bounds or Bounds(),
            tracking=tracking,
        )
        state = applied.state
        out += applied.signals
    return out


def labels(events: list[Event], **kwargs: object) -> list[Labelled]:
    return [s for s in signals(events, **kwargs) if isinstance(s, Labelled)]  # type: ignore[arg-type]


REPLY = dict(scenario="Other", assistant_id="bot", model_version="m-7")
EXCHANGE: list[Event] = [
    turn("u1", "user", "你好", 0),
    turn("a1", "assistant", "你好！有什么可以帮你？", 2),
    turn("u2", "user", "帮我写一句生日祝福", 10),
    turn("a2", "assistant", "祝你生日快乐，万事如意！", 13, **REPLY),
]


def test_a_thumb_labels_the_turn_it_is_about_with_the_turn_as_the_scorers_saw_it() -> None:
    (label,) = labels([*EXCHANGE, feedback("a2", "thumbs_down", 20)])
    assert (label.turn_id, label.source, label.kind, label.label) == (
        "a2",
        Source.EXPLICIT,
        "thumbs_down",
        DISLIKED,
    )
    assert label.dialogue.user_message == "帮我写一句生日祝福"
    assert label.dialogue.reply == "祝你生日快乐，万事如意！"
    assert [t.text for t in label.dialogue.history] == ["你好", "你好！有什么可以帮你？"]
    assert (label.scenario, label.assistant_id, label.model_version) == ("Other", "bot", "m-7")
    assert label.ts == T0 + timedelta(seconds=20)


def test_each_labelling_signal_on_one_turn_is_its_own_label() -> None:
    found = labels([*EXCHANGE, feedback("a2", "copy", 16), feedback("a2", "thumbs_up", 17)])
    assert [(x.kind, x.label) for x in found] == [("copy", LIKED), ("thumbs_up", LIKED)]


def test_a_complaint_and_a_satisfied_follow_up_label_implicitly_and_other_reactions_do_not() -> (
    None
):
    complained = [*EXCHANGE, turn("u3", "user", "不对，我要的是英文的", 30)]
    thanked = [*EXCHANGE, turn("u3", "user", "谢谢，很好", 30)]
    reactions = {
        s.reaction for s in signals(complained) + signals(thanked) if isinstance(s, ReactionSeen)
    }
    assert {Reaction.COMPLAINT, Reaction.SATISFIED} <= reactions
    (bad,) = labels(complained)
    (good,) = labels(thanked)
    assert (bad.source, bad.kind, bad.label, bad.turn_id) == (
        Source.IMPLICIT,
        "complaint",
        DISLIKED,
        "a2",
    )
    assert (good.kind, good.label) == ("satisfied", LIKED)
    assert bad.dialogue.reply == "祝你生日快乐，万事如意！"  # the reply, not the complaint
    dismissed = [*EXCHANGE, turn("u3", "user", "算了", 30)]
    reacted = {s.turn_id: s.reaction for s in signals(dismissed) if isinstance(s, ReactionSeen)}
    assert reacted["a2"] is Reaction.DISMISS
    assert labels(dismissed) == []
    assert labels([*EXCHANGE, feedback("a2", "stop", 14)]) == []


def test_an_older_turn_still_in_history_is_labelled_and_a_forgotten_one_is_not() -> None:
    later = [*EXCHANGE, turn("u3", "user", "再来一句", 30), turn("a3", "assistant", "好的", 31)]
    (older,) = [x for x in labels([*later, feedback("a1", "thumbs_up", 40)]) if x.turn_id == "a1"]
    assert (older.turn_id, older.dialogue.reply, older.dialogue.user_message) == (
        "a1",
        "你好！有什么可以帮你？",
        "你好",
    )
    assert older.model_version is None  # only the awaiting reply keeps its ids
    forgotten = labels([*later, feedback("a1", "thumbs_up", 40)], bounds=Bounds(history_turns=2))
    assert [x for x in forgotten if x.turn_id == "a1"] == []


def test_with_labels_off_no_signal_carries_text() -> None:
    events = [*EXCHANGE, feedback("a2", "thumbs_down", 20), turn("u3", "user", "不对", 30)]
    assert labels(events, tracking=OFF) == []
    on, off = signals(events), signals(events, tracking=OFF)
    assert [s for s in on if not isinstance(s, Labelled)] == off


def test_the_record_loads_as_a_uxbench_task1_item_unchanged() -> None:
    (label,) = labels([*EXCHANGE, feedback("a2", "thumbs_down", 20)])
    at = T0 + timedelta(seconds=21)
    record = label_record("c1", label, weight=1.0, at=at)
    item = task1_item(record)
    assert item.label == DISLIKED and record["ground_truth"] == -1
    assert item.dialogue.reply == label.dialogue.reply
    assert item.dialogue.user_message == label.dialogue.user_message
    assert [t.text for t in item.dialogue.history] == ["你好", "你好！有什么可以帮你？"]
    assert item.scenario == "Other"
    assert record["cid"] == "c1/a2"
    assert (record["label_source"], record["label_kind"], record["weight"]) == (
        "explicit",
        "thumbs_down",
        1.0,
    )
    assert (record["assistant_id"], record["model_version"]) == ("bot", "m-7")
    assert None not in record.values()


def test_a_label_id_names_one_turn_and_signal() -> None:
    one = label_id("c1", "a2", Source.EXPLICIT, "thumbs_down")
    assert one == label_id("c1", "a2", Source.EXPLICIT, "thumbs_down")
    others = {
        label_id("c1", "a2", Source.EXPLICIT, "thumbs_up"),
        label_id("c1", "a3", Source.EXPLICIT, "thumbs_down"),
        label_id("c2", "a2", Source.EXPLICIT, "thumbs_down"),
        label_id("c1", "a2", Source.IMPLICIT, "thumbs_down"),
        label_id("c1a", "2", Source.EXPLICIT, "thumbs_down"),  # no ambiguity at the joins
    }
    assert one not in others and len(others) == 5


def label(cid: str, kind: str, seconds: float, source: Source = Source.EXPLICIT) -> dict:
    truth = LIKED if kind in ("thumbs_up", "copy", "satisfied") else DISLIKED
    dialogue = labels([*EXCHANGE, feedback("a2", "thumbs_up", 20)])[0].dialogue
    labelled = Labelled("a2", source, kind, truth, T0 + timedelta(seconds=seconds), dialogue)
    return label_record(cid, labelled, weight=1.0, at=T0)


def test_the_export_keeps_one_record_per_turn_and_folds_replays() -> None:
    first = label("c1", "thumbs_up", 10)
    records = [
        first,
        dict(first, published_at="later"),  # the replay after a kill
        label("c1", "complaint", 11, Source.IMPLICIT),  # overruled: a thumb was given
        label("c2", "satisfied", 12, Source.IMPLICIT),
        label("c3", "thumbs_up", 13),
        label("c3", "thumbs_down", 14),  # the user changed their mind: the newer wins
        {"type": "score", "conversation_id": "c9"},
        None,
    ]
    out = select(records)
    assert [(r["cid"], r["label_kind"]) for r in out.train] == [
        ("c1/a2", "thumbs_up"),
        ("c2/a2", "satisfied"),
        ("c3/a2", "thumbs_down"),
    ]
    assert (out.read, out.not_labels, out.repeats, out.overruled, out.outside) == (8, 2, 1, 2, 0)
    assert out.holdout == []


def test_the_export_window_source_holdout_and_balance() -> None:
    records = [label(f"c{i}", "thumbs_up" if i % 4 else "thumbs_down", i) for i in range(12)]
    records.append(label("c99", "satisfied", 5, Source.IMPLICIT))

    def at(seconds: float) -> datetime:
        return T0 + timedelta(seconds=seconds)

    windowed = select(records, since=at(3), until=at(9), source=Source.EXPLICIT)
    assert [r["cid"] for r in windowed.train] == [f"c{i}/a2" for i in range(3, 9)]
    assert windowed.outside == 7
    held = select(records, holdout_from=at(10))
    assert [r["cid"] for r in held.holdout] == ["c10/a2", "c11/a2"]
    assert len(held.train) == 11
    balanced = select(records, holdout_from=at(10), balance=True, seed=3)
    truths = [r["ground_truth"] for r in balanced.train]
    assert truths.count(1) == truths.count(-1) == 3  # c0, c4, c8 are the disliked ones
    assert balanced.dropped_to_balance == 11 - 6
    assert balanced.holdout == held.holdout  # evaluation keeps the traffic's balance


def test_an_export_in_either_format_loads_as_task1(tmp_path: Path) -> None:
    records = [label("c1", "thumbs_up", 1), label("c2", "complaint", 2, Source.IMPLICIT)]
    records[0]["scenario"] = "Other"  # fields differ from record to record
    for name in ("labels.jsonl", "labels.parquet"):
        write(records, tmp_path / name)
        items = load_task1(tmp_path / name)
        assert [(i.cid, i.label) for i in items] == [("c1/a2", LIKED), ("c2/a2", DISLIKED)]
        assert (
            items[1].dialogue.history
            == labels([*EXCHANGE, feedback("a2", "copy", 15)])[0].dialogue.history
        )
