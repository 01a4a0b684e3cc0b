"""The learned reaction layer: deterministic features, the committed artefact, clear errors,
and obvious cases (those with the real encoder are marked `models`)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from benchmark.sessions import writer_folders
from stream.reaction_model import (
    CLASSES,
    EMBEDDING_PREFIX,
    HAND_FEATURES,
    META_FILE,
    WEIGHTS_FILE,
    ArtefactMismatchError,
    FollowUp,
    ReactionModel,
    ReactionModelError,
    default_dir,
    feature_dim,
    features,
    hand_features,
)
from stream.reactions import Patterns, Reaction, classify

DIM = 384


@pytest.fixture(scope="module")
def patterns() -> Patterns:
    return Patterns.load()


@pytest.fixture(scope="module")
def fingerprint() -> str:
    meta = json.loads((default_dir() / META_FILE).read_text(encoding="utf-8"))
    return str(meta["encoder"]["fingerprint"])


@pytest.fixture(scope="module")
def model(fingerprint: str, patterns: Patterns) -> ReactionModel:
    return ReactionModel.load(encoder_fingerprint=fingerprint, patterns=patterns)


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def follow_up(
    patterns: Patterns,
    previous: str,
    reply: str,
    message: str,
    gap_s: float,
    vecs: tuple[np.ndarray, np.ndarray, np.ndarray],
    feedback: tuple[str, ...] = (),
) -> FollowUp:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    rule = classify(previous, reply, start, message, start + timedelta(seconds=gap_s), patterns)
    q, a, m = vecs
    return FollowUp(
        message=message,
        message_vec=m,
        reply=reply,
        reply_vec=a,
        previous=previous,
        previous_vec=q,
        gap_s=gap_s,
        rule=rule,
        feedback=feedback,
    )


def test_features_are_deterministic_and_sized(patterns: Patterns) -> None:
    vecs = (unit(1), unit(2), unit(3))
    item = follow_up(patterns, "怎么煮米饭", "米和水1:1.2，焖15分钟。", "谢谢", 20.0, vecs)
    first, second = features(item, patterns), features(item, patterns)
    assert first.shape == (feature_dim(DIM),)
    assert np.array_equal(first, second)
    assert np.isfinite(first).all()


def test_hand_features_read_the_inputs(patterns: Patterns) -> None:
    q, a = unit(1), unit(2)
    question = "bash 判断字符串是否以 abc 开头"
    repeat = follow_up(patterns, question, "用 [[ ]] 判断。", question, 15.0, (q, a, q))
    other = follow_up(patterns, question, "用 [[ ]] 判断。", "谢谢 好用", 15.0, (q, a, unit(3)))
    h_repeat = dict(zip(HAND_FEATURES, hand_features(repeat, patterns), strict=True))
    h_other = dict(zip(HAND_FEATURES, hand_features(other, patterns), strict=True))
    assert h_repeat["same_pattern_form"] == 1.0 and h_other["same_pattern_form"] == 0.0
    assert h_repeat["cos_message_previous"] == pytest.approx(1.0, abs=1e-5)
    assert h_repeat["rule_repeat"] == 1.0 and h_repeat["rule_satisfied"] == 0.0
    slow = follow_up(patterns, question, "用 [[ ]] 判断。", question, 150.0, (q, a, q))
    h_slow = dict(zip(HAND_FEATURES, hand_features(slow, patterns), strict=True))
    assert h_slow["log_gap_over_reading"] > h_repeat["log_gap_over_reading"]
    liked = follow_up(patterns, question, "x", "ok", 5.0, (q, a, q), feedback=("thumbs_up",))
    h_liked = dict(zip(HAND_FEATURES, hand_features(liked, patterns), strict=True))
    assert h_liked["feedback_thumbs_up"] == 1.0 and h_liked["feedback_thumbs_down"] == 0.0


def test_no_previous_message_is_allowed(model: ReactionModel, patterns: Patterns) -> None:
    item = FollowUp(
        message="hello",
        message_vec=unit(4),
        reply="Hi! How can I help?",
        reply_vec=unit(5),
        previous=None,
        previous_vec=None,
        gap_s=3.0,
        rule=Reaction.SATISFIED,
    )
    reaction, p = model.predict(item)
    assert reaction in CLASSES and 0.0 < p <= 1.0


def test_committed_artefact_loads_and_names_its_training(model: ReactionModel) -> None:
    assert model.embedding_dim == DIM
    # Every writer's sessions (as bench/reactions_model.py pools them), none held back.
    writers = sorted(p.stem for folder in writer_folders() for p in folder.glob("r*.jsonl"))
    assert model.meta["training_writers"] == writers == [f"r{i:02d}" for i in range(1, 20)]
    assert model.meta["feature_spec"]["embedding_prefix"] == EMBEDDING_PREFIX
    assert len(model.version) == 12


def test_probabilities_are_a_distribution(model: ReactionModel, patterns: Patterns) -> None:
    items = [
        follow_up(patterns, "q", "reply", "msg", 10.0, (unit(i), unit(i + 1), unit(i + 2)))
        for i in range(5)
    ]
    probs = model.probabilities(items)
    assert probs.shape == (5, len(CLASSES))
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert model.probabilities([]).shape == (0, len(CLASSES))


def typical(model: ReactionModel, block: int, seed: int) -> np.ndarray:
    """A plausible embedding without the encoder: the training mean of an embedding block
    (0 message, 1 reply; stored in the artefact) plus a little noise, re-normalised."""
    start = len(HAND_FEATURES) + block * DIM
    v = model.mean[start : start + DIM] + 0.01 * unit(seed)
    return (v / np.linalg.norm(v)).astype(np.float32)


@pytest.mark.parametrize(
    "question",
    ["帮我写个战队招人的公告 50字以内", "How do I undo the last git commit but keep my changes?"],
)
def test_exact_repeat_is_repeat(model: ReactionModel, patterns: Patterns, question: str) -> None:
    # The same text has the same embedding, whatever the encoder: no encoder needed here.
    q, a = typical(model, 0, 7), typical(model, 1, 8)
    item = follow_up(patterns, question, "Here is one way to do it." * 3, question, 12.0, (q, a, q))
    reaction, p = model.predict(item)
    assert reaction is Reaction.REPEAT
    assert p > 0.5


def test_long_reply_answered_in_seconds_is_skip_read(
    model: ReactionModel, patterns: Patterns
) -> None:
    q, a, m = typical(model, 0, 1), typical(model, 1, 2), typical(model, 0, 3)
    reply = "Step one: open the settings page and find the section on accounts. " * 20
    item = follow_up(patterns, "how do I delete my account", reply, "tldr?", 3.0, (q, a, m))
    assert model.predict(item)[0] is Reaction.SKIP_READ


def test_missing_artefact_is_a_clear_error(tmp_path: Path, fingerprint: str) -> None:
    with pytest.raises(ReactionModelError, match=r"missing.*bench/reactions_model.py --save"):
        ReactionModel.load(tmp_path, encoder_fingerprint=fingerprint)


def test_other_encoder_is_refused(fingerprint: str) -> None:
    with pytest.raises(ArtefactMismatchError, match="trained on encoder"):
        ReactionModel.load(encoder_fingerprint="0" * 64)


def test_other_feature_spec_is_refused(tmp_path: Path, fingerprint: str) -> None:
    shutil.copy(default_dir() / WEIGHTS_FILE, tmp_path / WEIGHTS_FILE)
    meta = json.loads((default_dir() / META_FILE).read_text(encoding="utf-8"))
    meta["feature_spec"]["name"] = "reaction-lr-v0"
    (tmp_path / META_FILE).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ArtefactMismatchError, match="expects features 'reaction-lr-v0'"):
        ReactionModel.load(tmp_path, encoder_fingerprint=fingerprint)


def test_wrong_embedding_size_is_refused(model: ReactionModel, patterns: Patterns) -> None:
    small = np.ones(8, dtype=np.float32) / np.sqrt(8)
    item = follow_up(patterns, "q", "reply", "msg", 10.0, (small, small, small))
    with pytest.raises(ArtefactMismatchError, match=r"expected a \[384\] embedding"):
        model.predict(item)


def test_save_then_load_round_trips(
    tmp_path: Path, model: ReactionModel, fingerprint: str, patterns: Patterns
) -> None:
    model.save(tmp_path, {k: v for k, v in model.meta.items() if k != "feature_spec"})
    again = ReactionModel.load(tmp_path, encoder_fingerprint=fingerprint, patterns=patterns)
    item = follow_up(patterns, "q", "reply", "msg", 10.0, (unit(1), unit(2), unit(3)))
    assert np.allclose(model.probabilities([item]), again.probabilities([item]), atol=1e-6)


# ---------------------------------------------------------------- with the real encoder


@pytest.fixture(scope="module")
def encoder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    from scorer.encoder import E5Encoder
    from scorer.runtime import Runtime

    configured = os.environ.get("UXMON_MODEL_CACHE")
    cache = Path(configured) if configured else tmp_path_factory.mktemp("models")
    e5 = E5Encoder(cache_dir=cache, runtime=Runtime(threads=2))
    e5.load()
    yield e5


CASES = [
    # previous, reply, message, gap_s, expected
    (
        "How do I reverse a list in Python?",
        "Use my_list.reverse() in place, or my_list[::-1] for a reversed copy.",
        "How do I reverse a list in Python?",
        15.0,
        Reaction.REPEAT,
    ),
    (
        "怎么煮米饭才不会粘锅？",
        "先把米淘洗两遍，米和水按1:1.2的比例，大火烧开后转小火焖15分钟即可。",
        "好的 谢谢 明白了",
        40.0,
        Reaction.SATISFIED,
    ),
    (
        "What is the capital of Australia?",
        "The capital of Australia is Sydney.",
        "That's wrong, it's Canberra. Did you even check?",
        12.0,
        Reaction.COMPLAINT,
    ),
    (
        "给我推荐一部电影",
        "可以看看《肖申克的救赎》，讲的是希望与自由。",
        "算了",
        20.0,
        Reaction.DISMISS,
    ),
]


@pytest.mark.models
@pytest.mark.parametrize(("previous", "reply", "message", "gap", "expected"), CASES)
def test_obvious_cases_with_the_real_encoder(
    encoder: object,
    patterns: Patterns,
    previous: str,
    reply: str,
    message: str,
    gap: float,
    expected: Reaction,
) -> None:
    from scorer.encoder import E5Encoder
    from scorer.ux_judge import reply_input_ids

    assert isinstance(encoder, E5Encoder)
    model = ReactionModel.load(encoder_fingerprint=encoder.fingerprint, patterns=patterns)
    q, m = encoder.encode([previous, message], EMBEDDING_PREFIX)
    (a,) = encoder.embed_ids(reply_input_ids([reply], encoder))  # the judge's embedding
    item = follow_up(patterns, previous, reply, message, gap, (q, a, m))
    assert model.predict(item)[0] is expected
