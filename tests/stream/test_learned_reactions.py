"""The learned reaction layer in the batch step: the pre-pass (which texts are embedded, in
fold order, from stored state and the batch), the fold asking the model, and every way it
falls back to the rules. Fake vectors and fake models: no encoder here."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stream import pipeline as pipeline_module
from stream.conversation import (
    Bounds,
    ConversationState,
    Learned,
    Position,
    ReactionSeen,
    Tracking,
    apply_event,
)
from stream.events import FeedbackEvent, Limits, Parsed, Rejected, TurnEvent
from stream.pipeline import follow_up_texts, parse_records, plan_batch
from stream.reaction_layer import FollowUpTexts, ReactionLayer
from stream.reaction_model import (
    META_FILE,
    WEIGHTS_FILE,
    ArtefactMismatchError,
    FollowUp,
    ReactionModelError,
    default_dir,
)
from stream.reactions import Patterns, Reaction
from stream.records import Record
from tests.support.traffic import turn_event

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
T0 = NOW - timedelta(seconds=300)
BOUNDS = Bounds(8, 64)
PATTERNS = Patterns.load()
TRACKING = Tracking(PATTERNS)


class FakeModel:
    """Answers `answer` and remembers what it was asked."""

    def __init__(self, answer: Reaction = Reaction.REPEAT) -> None:
        self.answer = answer
        self.asked: list[FollowUp] = []

    def predict(self, follow_up: FollowUp) -> tuple[Reaction, float]:
        self.asked.append(follow_up)
        return self.answer, 0.9


class Broken:
    def predict(self, follow_up: FollowUp) -> tuple[Reaction, float]:
        raise ValueError("bug")


def vec(i: int) -> np.ndarray:
    v = np.zeros(4, dtype=np.float32)
    v[i % 4] = 1.0
    return v


def vectors(*texts: str) -> dict[str, np.ndarray]:
    return {t: vec(i) for i, t in enumerate(texts)}


def embedded(model: Any, *texts: str) -> Learned:
    """The layer's output with every text embedded as a message and as a reply."""
    both = vectors(*texts)
    return Learned(model, both, both)


def turn(tid: str, role: str, text: str, seconds: float, cid: str = "c") -> TurnEvent:
    return TurnEvent(
        schema_version=1,
        type="turn",
        conversation_id=cid,
        turn_id=tid,
        role=role,  # type: ignore[arg-type]
        text=text,
        ts=T0 + timedelta(seconds=seconds),
    )


def record(offset: int, cid: str, tid: str, role: str, text: str, seconds: float) -> Record:
    value = json.dumps(turn_event(cid, tid, role, T0 + timedelta(seconds=seconds), text)).encode()
    return Record(cid.encode(), value, Position("turns", 0, offset))


def fold(
    events: list[Any], learned: Learned | None, tracking: Tracking = TRACKING
) -> list[Reaction]:
    state, seen = ConversationState(), []
    for offset, event in enumerate(events):
        applied = apply_event(
            state,
            event,
            Position("t", 0, offset),
            now_s=0,
            bounds=BOUNDS,
            tracking=tracking,
            learned=learned,
        )
        state = applied.state
        seen += [s.reaction for s in applied.signals if isinstance(s, ReactionSeen)]
    return seen


# "Thanks" read by the rules is satisfied; the fake model says repeat: who decided shows.
EXCHANGE = [
    turn("u1", "user", "How do I reset my router?", 0),
    turn("a1", "assistant", "Hold the reset button for ten seconds.", 5),
    turn("u2", "user", "thanks, that worked", 60),
]
TEXTS = (
    "thanks, that worked",
    "How do I reset my router?",
    "Hold the reset button for ten seconds.",
)


# ---------------------------------------------------------------- the fold


def test_the_fold_asks_the_model_with_the_follow_up_it_was_trained_on() -> None:
    model = FakeModel(Reaction.REPEAT)
    assert fold(EXCHANGE, None) == [Reaction.SATISFIED]  # the rules
    assert fold(EXCHANGE, embedded(model, *TEXTS)) == [Reaction.REPEAT]
    (asked,) = model.asked
    assert asked.message == "thanks, that worked" and asked.previous == TEXTS[1]
    assert asked.reply == TEXTS[2] and asked.gap_s == 55.0
    assert asked.rule == Reaction.SATISFIED and asked.feedback == ()
    assert np.array_equal(asked.message_vec, vec(0)) and np.array_equal(asked.reply_vec, vec(2))
    assert asked.previous_vec is not None and np.array_equal(asked.previous_vec, vec(1))


@pytest.mark.parametrize("missing", TEXTS)
def test_a_text_not_embedded_leaves_the_follow_up_to_the_rules(missing: str) -> None:
    model = FakeModel(Reaction.REPEAT)
    some = {t: v for t, v in vectors(*TEXTS).items() if t != missing}
    assert fold(EXCHANGE, Learned(model, some, some)) == [Reaction.SATISFIED]
    assert model.asked == []


def test_a_reply_the_assistant_opened_with_needs_no_previous_message() -> None:
    model = FakeModel(Reaction.ABANDON)
    events = [turn("a1", "assistant", "Hi! How can I help?", 0), turn("u1", "user", "hello", 9)]
    learned = embedded(model, "hello", "Hi! How can I help?")
    assert fold(events, learned) == [Reaction.ABANDON]
    assert model.asked[0].previous is None and model.asked[0].previous_vec is None


def test_a_failing_model_costs_nothing_but_its_verdict() -> None:
    assert fold(EXCHANGE, embedded(Broken(), *TEXTS)) == [Reaction.SATISFIED]


def test_feedback_before_the_next_message_reaches_the_model_and_survives_the_changelog() -> None:
    model = FakeModel()
    thumbs = FeedbackEvent(
        schema_version=1,
        type="feedback",
        conversation_id="c",
        turn_id="a1",
        kind="thumbs_down",
        ts=T0 + timedelta(seconds=20),
    )
    state = ConversationState()
    copy = thumbs.model_copy(update={"kind": "copy"})
    for offset, event in enumerate([*EXCHANGE[:2], thumbs, copy]):
        state = apply_event(
            state, event, Position("t", 0, offset), now_s=0, bounds=BOUNDS, tracking=TRACKING
        ).state
    state = ConversationState.from_json(json.loads(json.dumps(state.to_json())))
    assert state.awaiting is not None and state.awaiting.feedback == ("thumbs_down", "copy")
    apply_event(
        state,
        EXCHANGE[2],
        Position("t", 0, 9),
        now_s=0,
        bounds=BOUNDS,
        tracking=TRACKING,
        learned=embedded(model, *TEXTS),
    )
    assert model.asked[0].feedback == ("thumbs_down", "copy")


def own_dir(tmp_path: Path, extra: str) -> Path:
    """The bundled pattern files plus one line a team wrote."""
    folder = tmp_path / "patterns"
    shutil.copytree(Path(__file__).parents[2] / "stream" / "patterns", folder)
    with (folder / "continuation.en.txt").open("a", encoding="utf-8") as f:
        f.write(f"\n{extra}\n")
    return folder


def test_own_patterns_are_the_lines_the_bundled_sets_lack(tmp_path: Path) -> None:
    assert Patterns.own(None) is None
    own = Patterns.own(own_dir(tmp_path, "worked like a charm"))
    assert own is not None
    assert (len(own.complaint), len(own.dismiss), len(own.rephrase)) == (0, 0, 0)
    assert len(own.continuation) == 1
    assert own.fires("Worked like a charm, and for the modem?")
    assert not own.fires("thanks, that worked")  # a bundled line is not the team's own


def test_where_a_teams_own_pattern_fires_the_rules_decide(tmp_path: Path) -> None:
    folder = own_dir(tmp_path, "that worked")
    tracking = Tracking(Patterns.load(folder), own_patterns=Patterns.own(folder))
    model = FakeModel(Reaction.REPEAT)
    assert fold(EXCHANGE, embedded(model, *TEXTS), tracking) == [Reaction.SATISFIED]
    assert model.asked == []
    # a message no own pattern touches is the model's again
    other = [*EXCHANGE[:2], turn("u2", "user", "and the modem?", 60)]
    learned = embedded(model, "and the modem?", *TEXTS[1:])
    assert fold(other, learned, tracking) == [Reaction.REPEAT]


# ---------------------------------------------------------------- the pre-pass


def stored_awaiting(cid: str, question: str, reply: str) -> ConversationState:
    """A conversation whose reply waits for its reaction; applied at offsets 0-1."""
    state = ConversationState()
    for offset, event in enumerate(
        [turn("q0", "user", question, 0, cid), turn("r0", "assistant", reply, 5, cid)]
    ):
        state = apply_event(
            state, event, Position("t", 0, offset), now_s=0, bounds=BOUNDS, tracking=TRACKING
        ).state
    return state


def texts_of(records: list[Record], stored: dict[str, ConversationState]) -> FollowUpTexts:
    parsed = parse_records(records, lambda p: -1, Limits(), NOW)
    return follow_up_texts(parsed, lambda c: stored.get(c, ConversationState()), BOUNDS)


def test_the_pre_pass_finds_every_follow_ups_texts_in_fold_order() -> None:
    stored = {"b": stored_awaiting("b", "stored question", "stored reply")}
    records = [
        record(0, "a", "u1", "user", "first question", 0),
        record(1, "b", "u1", "user", "b follows up", 10),  # on the stored reply
        record(2, "a", "a1", "assistant", "first reply", 20),
        record(3, "a", "u2", "user", "a follows up", 30),  # on the batch's reply
        record(4, "a", "u3", "user", "a again", 40),  # nothing awaits: already reacted
        record(5, "b", "a1", "assistant", "second b reply", 50),
        record(6, "b", "u2", "user", "stored question", 60),  # a text seen before: once
    ]
    texts = texts_of(records, stored)
    assert texts.messages == ["b follows up", "stored question", "a follows up", "first question"]
    assert texts.replies == ["stored reply", "first reply", "second b reply"]


def test_the_pre_pass_texts_are_the_ones_the_fold_reads() -> None:
    stored = {"b": stored_awaiting("b", "stored question", "stored reply")}
    records = [
        record(10, "b", "u1", "user", "b follows up", 10),
        record(11, "b", "a1", "assistant", "second b reply", 20),
        record(12, "b", "u2", "user", "and then?", 30),
    ]
    texts = texts_of(records, stored)
    model = FakeModel()
    result = plan_batch(
        records,
        lambda c: stored.get(c, ConversationState()),
        limits=Limits(),
        now=NOW,
        bounds=BOUNDS,
        tracking=TRACKING,
        learned=embedded(model, *texts.messages, *texts.replies),
    )
    reactions = [s for _, s in result.signals if isinstance(s, ReactionSeen)]
    assert [s.reaction for s in reactions] == [Reaction.REPEAT, Reaction.REPEAT]
    assert [(f.message, f.previous, f.reply) for f in model.asked] == [
        ("b follows up", "stored question", "stored reply"),
        ("and then?", "b follows up", "second b reply"),
    ]


def test_records_are_parsed_once_and_replays_not_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    records = [
        record(0, "a", "u1", "user", "old", 0),  # at the handled mark: a replay
        record(1, "a", "u2", "user", "q", 10),
        Record(b"a", b"not json", Position("turns", 0, 2)),
    ]
    parsed = parse_records(records, lambda p: 0, Limits(), NOW)
    assert parsed[0] is None and isinstance(parsed[1], Parsed)
    assert isinstance(parsed[2], Rejected)
    calls: list[bytes | None] = []
    real = pipeline_module.parse_event

    def counting(raw: bytes | None, limits: Limits, now: datetime) -> Parsed:
        calls.append(raw)
        return real(raw, limits, now)

    monkeypatch.setattr(pipeline_module, "parse_event", counting)
    result = plan_batch(
        records,
        lambda c: ConversationState(),
        limits=Limits(),
        now=NOW,
        bounds=BOUNDS,
        tracking=TRACKING,
        handled_before=lambda p: 0,
        pre_parsed=parsed,
    )
    assert calls == []
    assert result.redelivered == 1 and len(result.dead) == 1 and len(result.events) == 1


# ---------------------------------------------------------------- Pipeline.run


class FakeLayer:
    def __init__(self, model: Any, fail: bool = False) -> None:
        self.model = model
        self.fail = fail
        self.batches: list[FollowUpTexts] = []

    def embed(self, texts: FollowUpTexts) -> Learned:
        self.batches.append(texts)
        if self.fail:
            raise RuntimeError("encoder down")
        return Learned(self.model, vectors(*texts.messages), vectors(*texts.replies))


def run_with(layer: Any) -> list[Reaction]:
    from stream.cascade import Budget
    from stream.pipeline import Pipeline
    from tests.support.scorers import Keyword

    pipe = Pipeline(
        judges=[Keyword()],
        grm=None,
        budget=Budget(rate=1, burst=1, max_per_batch=4, uncertain_margin=0.1, sample_rate=0),
        deadline=None,
        limits=Limits(),
        bounds=BOUNDS,
        tracking=TRACKING,
        open_below=None,
        follow_up_s=60.0,
        episode_s=600.0,
        reactions=layer,
    )
    records = [
        record(0, "a", "u1", "user", TEXTS[1], 0),
        record(1, "a", "a1", "assistant", TEXTS[2], 5),
        record(2, "a", "u2", "user", TEXTS[0], 60),
    ]
    outcome = pipe.run(records, lambda c: ConversationState(), lambda p: -1, NOW)
    return [s.reaction for _, s in outcome.signals if isinstance(s, ReactionSeen)]


def test_a_run_embeds_the_batchs_texts_in_one_call_and_the_model_decides() -> None:
    layer = FakeLayer(FakeModel(Reaction.REPEAT))
    assert run_with(layer) == [Reaction.REPEAT]
    assert layer.batches == [FollowUpTexts([TEXTS[0], TEXTS[1]], [TEXTS[2]])]


def test_without_a_loaded_model_or_with_a_failing_encoder_the_rules_decide() -> None:
    assert run_with(None) == [Reaction.SATISFIED]
    unloaded = FakeLayer(None)
    assert run_with(unloaded) == [Reaction.SATISFIED] and unloaded.batches == []
    failing = FakeLayer(FakeModel(Reaction.REPEAT), fail=True)
    assert run_with(failing) == [Reaction.SATISFIED] and len(failing.batches) == 1


# ---------------------------------------------------------------- the layer, the setting


class FakeEncoder:
    def __init__(self, fingerprint: str, dim: int = 384) -> None:
        self.fingerprint, self.dim = fingerprint, dim

    def load(self) -> None:
        pass


def test_a_missing_artefact_fails_at_construction_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ReactionModelError, match="UXMON_REACTION_MODEL"):
        ReactionLayer(tmp_path, FakeEncoder("x"))  # type: ignore[arg-type]


def test_an_artefact_for_another_encoder_fails_at_load(tmp_path: Path) -> None:
    for name in (WEIGHTS_FILE, META_FILE):
        shutil.copy(default_dir() / name, tmp_path / name)
    layer = ReactionLayer(tmp_path, FakeEncoder("0" * 64))  # type: ignore[arg-type]
    with pytest.raises(ArtefactMismatchError, match="trained on encoder"):
        layer.load()
    meta = json.loads((default_dir() / META_FILE).read_text(encoding="utf-8"))
    small = FakeEncoder(meta["encoder"]["fingerprint"], dim=8)
    with pytest.raises(ArtefactMismatchError, match="embeddings"):
        ReactionLayer(tmp_path, small).load()  # type: ignore[arg-type]


def test_the_layer_shares_the_judges_encoder() -> None:
    from scorer.encoder import E5Encoder

    class Judge:
        encoder = E5Encoder()

    class Other:
        pass

    assert ReactionLayer.for_scorers(None, [Other(), Judge()]).encoder is Judge.encoder
    assert isinstance(ReactionLayer.for_scorers(None, [Other()]).encoder, E5Encoder)


def test_the_setting_defaults_to_the_bundled_model_and_empty_means_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from stream.settings import Settings

    monkeypatch.delenv("UXMON_REACTION_MODEL", raising=False)
    assert Settings().reaction_model == "bundled" and Settings().reaction_model_dir() is None
    monkeypatch.setenv("UXMON_REACTION_MODEL", "/srv/model")
    assert Settings().reaction_model_dir() == Path("/srv/model")
    monkeypatch.setenv("UXMON_REACTION_MODEL", "")
    assert Settings().reaction_model is None


def test_serve_with_a_missing_artefact_stops_in_one_line(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "UXMON_REACTION_MODEL": str(tmp_path / "none")}
    env.pop("UXMON_TRACEBACK", None)
    done = subprocess.run(
        [sys.executable, "-m", "stream.cli", "serve", "--broker", "127.0.0.1:1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "reaction model artefact" in done.stderr and "UXMON_REACTION_MODEL" in done.stderr
    assert "Traceback" not in done.stderr
