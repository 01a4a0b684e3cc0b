"""The GRM scorer: prompts, fitting into the budget, score arithmetic, thresholds, and (with
the `models` marker) the real bundled Qwen judge."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import scorer.grm as grm_module
from scorer import Scorer, create
from scorer.backends import BackendConfig, VerdictLogprobs
from scorer.backends.openai_http import CharMeter
from scorer.grm import GRM
from scorer.grm_threshold import (
    Threshold,
    ThresholdError,
    calibrate,
    load_threshold,
    save_threshold,
)
from scorer.prompts import LANGUAGES, ChatPrompt, TemplateError, default_template_path
from scorer.runtime import Runtime
from scorer.types import Dialogue, Turn, Verdict
from scorer.verdict_head import DEFAULT_VERDICT_HEAD


class FakeBackend:
    """Counts characters and returns scripted log-probabilities; records the prompts."""

    model_id = "fake@0"
    default_max_prompt = 2000

    def __init__(self) -> None:
        self.prompts: list[ChatPrompt] = []
        self.answers: list[VerdictLogprobs] = []

    def load(self) -> None:
        pass

    def meter(self) -> CharMeter:
        return CharMeter()

    def verdict_logprobs(self, prompts: Sequence[ChatPrompt]) -> list[VerdictLogprobs]:
        self.prompts.extend(prompts)
        answers = self.answers or [VerdictLogprobs(-0.5, -1.5)] * len(prompts)
        return answers[: len(prompts)]

    def health(self) -> dict[str, str | float]:
        return {"state": "fake"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeBackend:
    backend = FakeBackend()

    def build(name: str, config: BackendConfig) -> FakeBackend:
        return backend

    monkeypatch.setattr(grm_module, "create_backend", build)
    return backend


def loaded(**options: object) -> GRM:
    grm = GRM(**options)  # type: ignore[arg-type]
    grm.load()
    return grm


# ---- prompts -------------------------------------------------------------------------


def test_reply_and_recovery_modes_use_their_templates(fake: FakeBackend) -> None:
    grm = loaded(threshold=0.5)
    reply = grm.prompt(Dialogue("北京有什么好玩的？", "故宫和长城。"))
    recovery = grm.prompt(
        Dialogue(
            "不对，我问的是上海",
            "抱歉，上海可以去外滩。",
            failed_reply="故宫和长城。",
            complaint="不对，我问的是上海",
        )
    )
    reply_tmpl = default_template_path("reply", "zh").read_text("utf-8")
    recovery_tmpl = default_template_path("recovery", "zh").read_text("utf-8")
    assert reply.user.splitlines()[0] in reply_tmpl
    assert recovery.user.splitlines()[0] in recovery_tmpl
    assert recovery.user.splitlines()[0] not in reply_tmpl
    # In recovery mode the failed reply is the context and the complaint is the message.
    assert "故宫和长城。" in recovery.user and "不对，我问的是上海" in recovery.user
    assert recovery.user.index("故宫和长城。") < recovery.user.index("抱歉，上海可以去外滩。")
    assert "好" in reply.user and "差" in reply.user


def test_english_prompt_asks_for_good_or_bad(fake: FakeBackend) -> None:
    grm = loaded(language="en", threshold=0.5)
    prompt = grm.prompt(Dialogue("hi", "hello", history=(Turn("user", "x"),)))
    assert "GOOD" in prompt.user and "BAD" in prompt.user and "User: x" in prompt.user


def test_template_override_is_validated(fake: FakeBackend, tmp_path: Path) -> None:
    good = tmp_path / "mine.tmpl"
    good.write_text("[system]\n评审。\n[user]\n$context\n$user_message\n$reply\n答 好 或 差。\n")
    grm = loaded(template=good, threshold=0.5)
    assert grm.prompt(Dialogue("问", "答")).system == "评审。"
    default_version = loaded(threshold=0.5).version
    assert grm.version != default_version  # the template is part of the version

    missing = tmp_path / "missing.tmpl"
    missing.write_text("[user]\n$user_message $reply 好 差\n")
    with pytest.raises(TemplateError, match="context"):
        GRM(template=missing)
    no_verdict = tmp_path / "no_verdict.tmpl"
    no_verdict.write_text("[user]\n$context $user_message $reply answer yes or no\n")
    with pytest.raises(TemplateError, match="verdict"):
        GRM(template=no_verdict)
    with pytest.raises(TemplateError, match="known: en, zh"):
        GRM(language="fr")


def test_long_context_loses_its_oldest_part_never_the_reply(fake: FakeBackend) -> None:
    grm = loaded(threshold=0.5, max_prompt=1200)
    history = tuple(
        Turn("user" if i % 2 == 0 else "assistant", f"第{i}轮" + "话" * 80) for i in range(30)
    )
    reply = "这是完整的回复。" * 40  # 320 chars
    prompt = grm.prompt(Dialogue("最后的问题", reply, history=history))
    assert reply in prompt.user
    assert "第29轮" in prompt.user and "第0轮" not in prompt.user
    assert len(prompt.user) + len(prompt.system) <= 1200


def test_huge_reply_is_cut_in_the_middle_within_budget(fake: FakeBackend) -> None:
    grm = loaded(threshold=0.5, max_prompt=1000)
    reply = "开头" + "字" * 20_000 + "结尾"
    prompt = grm.prompt(Dialogue("问" * 20_000, reply))
    assert "开头" in prompt.user and "结尾" in prompt.user and LANGUAGES["zh"].elided in prompt.user
    assert len(prompt.user) + len(prompt.system) <= 1000


# ---- score arithmetic and thresholds --------------------------------------------------


def test_score_is_the_verdict_ratio_and_threshold_decides(fake: FakeBackend) -> None:
    fake.answers = [VerdictLogprobs(math.log(0.3), math.log(0.6))]
    [s] = loaded(threshold=0.5).score([Dialogue("q", "a")])
    assert s.extras["raw_score"] == pytest.approx(1 / 3)
    assert s.extras["verdict_mass"] == pytest.approx(0.9)
    assert s.verdict is Verdict.BAD and s.scorer == "grm"
    [s] = loaded(threshold=0.3).score([Dialogue("q", "a")])
    assert s.verdict is Verdict.GOOD and s.p_satisfied > 0.5  # p's 0.5 sits on the cut


def test_unparseable_verdict_is_flagged(fake: FakeBackend) -> None:
    fake.answers = [VerdictLogprobs(None, None, -3.0)]
    [s] = loaded(threshold=0.5).score([Dialogue("q", "a")])
    assert s.extras["unparseable"] == 1.0 and math.isnan(s.p_satisfied)


def test_version_tracks_threshold(fake: FakeBackend) -> None:
    assert loaded(threshold=0.4).version != loaded(threshold=0.6).version


def test_calibration_finds_the_balanced_cut(tmp_path: Path) -> None:
    # Margins lean negative (the model says "bad" too often) but rank well.
    liked = [-1.0 + 0.1 * i for i in range(20)]
    disliked = [-3.0 + 0.1 * i for i in range(20)]
    threshold = calibrate(liked + disliked, [1] * 20 + [0] * 20, meta={"data": "synthetic"})
    assert -1.1 < threshold.margin < -1.0 + 1e-9
    assert threshold.meta["train_balanced_accuracy"] == 1.0
    assert threshold.slope > 0
    path = tmp_path / "t.json"
    save_threshold(threshold, path)
    again = load_threshold(path)
    assert again.margin == pytest.approx(threshold.margin)
    assert json.loads(path.read_text())["score"] == pytest.approx(threshold.score)
    with pytest.raises(ThresholdError):
        calibrate([0.1, 0.2], [1, 1])
    with pytest.raises(ThresholdError):
        Threshold.from_score(1.0)


def test_one_long_prompt_does_not_pad_a_batch_of_short_ones() -> None:
    from scorer.backends.local import MAX_BATCH_TOKENS, _token_capped

    lengths = [100, 120, 90, MAX_BATCH_TOKENS - 10]
    buckets = _token_capped([[2, 0, 1, 3]], lengths)
    assert buckets == [[2, 0, 1], [3]]


def test_registry_builds_the_grm(fake: FakeBackend) -> None:
    scorer = create("grm", threshold=0.5)
    assert isinstance(scorer, Scorer) and scorer.name == "grm"


def test_importing_grm_stays_cheap() -> None:
    import subprocess
    import sys

    code = "import sys, scorer.grm; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# ---- the real bundled model -----------------------------------------------------------


@pytest.fixture(scope="module")
def qwen() -> Iterator[GRM]:
    grm = GRM(threshold=0.5, runtime=Runtime(threads=2, dtype="bfloat16"), verdict_head=False)
    grm.load()
    yield grm


DIALOGUES = [
    Dialogue("北京有什么好玩的地方？", "故宫、长城、颐和园和天坛都值得一去，春秋两季最舒服。"),
    Dialogue("帮我把这句话翻译成英文：今天天气很好", "我不知道。"),
    Dialogue(
        "那周末呢？",
        "周末人多，建议提前在网上预约门票。",
        history=(Turn("user", "故宫要门票吗？"), Turn("assistant", "需要，旺季 60 元。")),
    ),
    Dialogue(
        "不对，长城不在上海",
        "抱歉说错了，长城在中国北方，八达岭最有名。",
        failed_reply="长城在上海。",
        complaint="不对，长城不在上海",
    ),
]


@pytest.mark.models
def test_verdicts_are_single_tokens() -> None:
    from transformers import AutoTokenizer

    from scorer.models.qwen import prepare_qwen

    tokenizer = AutoTokenizer.from_pretrained(prepare_qwen())
    for lang in LANGUAGES.values():
        for word in (lang.good, lang.bad):
            assert len(tokenizer(word, add_special_tokens=False)["input_ids"]) == 1, word


@pytest.mark.models
def test_batched_scores_equal_unbatched(qwen: GRM) -> None:
    batched = qwen.score(DIALOGUES)
    for dialogue, together in zip(DIALOGUES, batched, strict=True):
        [alone] = qwen.score([dialogue])
        # bf16 activations differ slightly with padding; a wrong mask or wrong positions
        # would move the margin by whole units.
        assert together.extras["margin"] == pytest.approx(alone.extras["margin"], abs=0.15)
        assert together.extras["verdict_mass"] > 0.5  # the model really answers a verdict


@pytest.mark.models
def test_edge_inputs_never_crash(qwen: GRM) -> None:
    agentic = json.dumps(
        {"content": [{"type": "text", "msg": '结果如下：{"a": 1}'}]}, ensure_ascii=False
    )
    edge = [
        Dialogue("你好", ""),
        Dialogue("😀😀😀", "👍🎉✨"),
        Dialogue(
            "总结一下" + "长" * 20_000,
            "好的，" + "很长的回复" * 4_000,
            history=(Turn("user", "上下文" * 7_000),),
        ),
        Dialogue("查一下天气", agentic),
        Dialogue("", "   ", failed_reply="", complaint=""),
    ]
    scores = qwen.score(edge)
    assert len(scores) == len(edge)
    for s in scores:
        assert 0.0 <= s.p_satisfied <= 1.0 and s.extras["unparseable"] == 0.0


@pytest.mark.models
def test_the_served_margin_is_the_trained_heads_margin(qwen: GRM, tmp_path: Path) -> None:
    """Training reads states and base margins; serving adapts the lm_head rows. Both must
    give the same margin, or the calibration would not apply to live scores."""
    import numpy as np

    from scorer.grm_threshold import Threshold
    from scorer.verdict_head import VerdictHead, save_verdict_head

    states, base = qwen.answer_states(DIALOGUES)
    rng = np.random.default_rng(0)
    head = VerdictHead((rng.normal(size=states.shape[1]) * 0.01).astype(np.float32), 0.3)
    save_verdict_head(
        tmp_path / "h", head, Threshold(0.2, 0.5), {"model_id": qwen.base_version.split("+")[0]}
    )
    adapted = GRM(runtime=Runtime(threads=2, dtype="bfloat16"), verdict_head=tmp_path / "h")
    adapted.load()
    assert f"+h{head.version}" in adapted.version and adapted.threshold.margin == 0.2
    served = [s.extras["margin"] for s in adapted.score(DIALOGUES)]
    expected = head.margins(states, base)
    assert np.allclose(served, expected, atol=0.15)
    assert not np.allclose(served, base, atol=0.15)  # the head really moved them


@pytest.mark.models
@pytest.mark.skipif(not DEFAULT_VERDICT_HEAD.is_dir(), reason="no verdict head shipped yet")
def test_the_shipped_verdict_head_loads_fast_and_is_used_by_default() -> None:
    import time

    base = GRM(runtime=Runtime(threads=2), verdict_head=False)
    base.load()
    started = time.perf_counter()
    grm = GRM(runtime=Runtime(threads=2))
    grm.load()
    assert "+h" in grm.version and grm.threshold.meta.get("calibrated_on")
    good, bad = grm.score(DIALOGUES[:2])
    assert good.p_satisfied > bad.p_satisfied  # a sensible answer beats "I don't know"
    assert time.perf_counter() - started < 60
