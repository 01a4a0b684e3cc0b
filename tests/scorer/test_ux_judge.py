"""UX-Judge: input truncation and head shapes (fast), then the real encoder end to end."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from scorer.errors import InvalidDialogueError, ModelMissingError
from scorer.heads import (
    DEFAULT_HEAD,
    HeadFormatError,
    build_member,
    load_head,
    save_head,
)
from scorer.protocol import Scorer
from scorer.runtime import Runtime
from scorer.types import Dialogue, Turn, Verdict
from scorer.ux_judge import (
    FEATURE_SPEC,
    HeadMismatchError,
    UXJudge,
    context_turns,
    feature_dim,
    represent,
)


class CharEncoder:
    """Tokenizer-only stand-in: one token per character (its code point), a tiny window.

    Lets the truncation rules be checked exactly without loading a model.
    """

    max_content_tokens = 24

    def tokenize(self, texts: Sequence[str], keep: str = "head") -> list[list[int]]:
        n = self.max_content_tokens
        ids = [[ord(c) for c in t] for t in texts]
        return [x[:n] if keep == "head" else x[-n:] for x in ids]


def _text(ids: list[int]) -> str:
    return "".join(map(chr, ids))


def test_reply_keeps_its_beginning_and_context_its_newest_end() -> None:
    enc = CharEncoder()
    d = Dialogue(
        user_message="NEWQ",
        reply="R" * 10 + "x" * 100,
        history=(Turn("user", "old question"), Turn("assistant", "old answer")),
    )
    (got,) = represent([d], enc)  # type: ignore[arg-type]
    assert _text(got.reply_ids) == ("passage:" + "R" * 10 + "x" * 100)[:24]
    assert _text(got.reply_ids[got.reply_start :]).startswith("RRRR")
    context = _text(got.context_ids)
    assert len(got.context_ids) == 24
    assert context == "query:" + "assistant: old answeruser: NEWQ"[-18:]
    assert _text(got.context_ids[got.user_start :]) == "NEWQ"  # survives whole
    assert got.context_truncated and got.reply_truncated


def test_short_dialogue_is_not_truncated() -> None:
    (got,) = represent([Dialogue(user_message="hi", reply="ok")], CharEncoder())  # type: ignore[arg-type]
    assert _text(got.context_ids) == "query:user: hi"
    assert _text(got.context_ids[got.user_start :]) == "hi"
    assert _text(got.reply_ids) == "passage:ok"
    assert not got.context_truncated and not got.reply_truncated


def test_an_over_long_user_message_keeps_its_end() -> None:
    (got,) = represent(
        [Dialogue(user_message="a" * 50 + "END", reply="ok", history=(Turn("user", "zzz"),))],
        CharEncoder(),  # type: ignore[arg-type]
    )
    context = _text(got.context_ids)
    assert context.endswith("END") and "zzz" not in context and len(got.context_ids) == 24
    assert got.user_start == len("query:")


def test_recovery_puts_the_failed_reply_before_the_complaint() -> None:
    d = Dialogue(
        user_message="that's not what I asked",
        reply="sorry, here is the right one",
        history=(Turn("user", "q"),),
        failed_reply="wrong answer",
        complaint="that's not what I asked",
    )
    assert context_turns(d) == [
        ("user", "q"),
        ("assistant", "wrong answer"),
        ("user", "that's not what I asked"),
    ]
    # ...but not twice when the caller already put it in the history.
    d2 = Dialogue("c", "r", history=(Turn("assistant", "wrong"),), failed_reply="wrong")
    assert context_turns(d2) == [("assistant", "wrong"), ("user", "c")]


@pytest.mark.parametrize(
    "bad",
    [
        Dialogue("q", None),  # type: ignore[arg-type]
        Dialogue("q", "r", history=(Turn("system", "x"),)),  # type: ignore[arg-type]
        Dialogue("q", "r", history=("not a turn",)),  # type: ignore[arg-type]
        "not a dialogue",
    ],
)
def test_unscorable_dialogues_raise_without_echoing_text(bad: object) -> None:
    with pytest.raises(InvalidDialogueError) as err:
        represent([bad], CharEncoder())  # type: ignore[list-item, arg-type]
    assert "not a turn" not in str(err.value)


def test_lone_surrogates_are_repaired_not_fatal() -> None:
    (got,) = represent([Dialogue("bad \ud800 text", "ok")], CharEncoder())  # type: ignore[arg-type]
    assert "?" in _text(got.context_ids)


def test_head_shapes_and_round_trip(tmp_path: Path) -> None:
    import torch

    dim = feature_dim(384)
    assert dim == 4 * 384 and FEATURE_SPEC["name"] == "uxj-embed-v4"
    members = [build_member(dim).eval() for _ in range(3)]
    mean, std = torch.zeros(dim), torch.ones(dim)
    version = save_head(
        tmp_path / "h",
        members,
        mean,
        std,
        {"temperature": 1.5, "threshold": 0.4},
        {"encoder": {"fingerprint": "f" * 64}, "feature_spec": FEATURE_SPEC},
    )
    head = load_head(tmp_path / "h")
    assert head.version == version and len(version) == 64
    assert (head.temperature, head.threshold) == (1.5, 0.4)
    assert len(head.members) == 3
    x = torch.randn(5, dim)
    assert head.logits(x).shape == (5,)
    mean_logit = torch.stack([net(x).squeeze(-1) for net in members]).mean(0)
    assert torch.allclose(head.logits(x), mean_logit, atol=1e-6)


def test_a_head_whose_members_are_not_linear_is_refused(tmp_path: Path) -> None:
    # Heads of the v3 design held MLPs; they cannot read v4 features anyway.
    import torch
    from safetensors.torch import save

    from scorer.heads import head_version

    tensors = {
        "member0.0.weight": torch.zeros(8, 4),
        "member0.0.bias": torch.zeros(8),
        "feature_mean": torch.zeros(4),
        "feature_std": torch.ones(4),
    }
    weights = save(tensors, metadata={"format": "pt"})
    calibration = b'{"temperature": 2.0, "threshold": 0.5}'
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "head.safetensors").write_bytes(weights)
    (tmp_path / "h" / "calibration.json").write_bytes(calibration)
    meta = {"version": head_version(weights, calibration), "encoder": {"fingerprint": "0"}}
    (tmp_path / "h" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(HeadFormatError):
        load_head(tmp_path / "h")


def test_a_head_without_members_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HeadFormatError, match="at least one member"):
        save_head(tmp_path / "h", [], None, None, {}, {})  # type: ignore[arg-type]


def test_an_altered_head_is_refused(tmp_path: Path) -> None:
    import torch

    dim = feature_dim(384)
    save_head(
        tmp_path / "h",
        [build_member(dim)],
        torch.zeros(dim),
        torch.ones(dim),
        {"temperature": 1.0, "threshold": 0.5},
        {"encoder": {"fingerprint": "0" * 64}, "feature_spec": FEATURE_SPEC},
    )
    (tmp_path / "h" / "calibration.json").write_text('{"temperature": 1.0, "threshold": 0.1}')
    with pytest.raises(HeadFormatError, match="altered"):
        load_head(tmp_path / "h")


def test_missing_head_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="uxmon judge train"):
        UXJudge(head=str(tmp_path / "nowhere"))


def test_importing_the_scorer_stays_cheap() -> None:
    import subprocess
    import sys

    code = (
        "import sys, scorer.ux_judge; print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# ---------------------------------------------------------------- real encoder

EDGE_CASES = [
    Dialogue("", ""),
    Dialogue("😀😀😀", "🎉👍"),
    Dialogue("写一个很长的故事", "很久很久以前，" * 3000),  # ~21k characters
    Dialogue("give me json", '{"content": [{"msg": "hello"}], "status": {"code": 0}}'),
    Dialogue("mixed 中英文 question?", "Answer 答案: use 列表推导 list comprehension."),
    Dialogue(
        "q",
        "r",
        history=tuple(Turn("user" if i % 2 else "assistant", "旧消息" * 50) for i in range(200)),
    ),
    Dialogue("还是不对", "抱歉，正确答案是42。", failed_reply="答案是41。", complaint="还是不对"),
    Dialogue("\x00\x01控制字符\u200b", "\t\n  \r"),
]

DIALOGUES = [
    Dialogue("怎么煮米饭才不会粘锅？", "米和水按1:1.2，大火烧开转小火焖15分钟。"),
    Dialogue("怎么煮米饭才不会粘锅？", "抱歉，我无法回答这个问题。"),
    Dialogue("What is the capital of Australia?", "The capital of Australia is Canberra."),
    Dialogue(
        "What is the capital of Australia?", "As an AI language model, I can't help with that."
    ),
]


@pytest.fixture(scope="module")
def judge(trained_head: Path, model_cache: Path) -> UXJudge:
    j = UXJudge(head=str(trained_head), cache_dir=model_cache, runtime=Runtime(threads=2))
    j.load()
    return j


@pytest.mark.models
def test_implements_the_protocol(judge: UXJudge) -> None:
    assert isinstance(judge, Scorer)
    assert judge.name == "ux_judge"
    assert judge.version.startswith("e5s-") and "+head-" in judge.version


@pytest.mark.models
def test_scores_zh_en_dialogues(judge: UXJudge) -> None:
    scores = judge.score(DIALOGUES)
    assert [s.scorer for s in scores] == ["ux_judge"] * 4
    p = [s.p_satisfied for s in scores]
    assert all(0.0 <= x <= 1.0 for x in p)
    # The tiny training set teaches "on-topic answer beats refusal"; it should transfer.
    assert p[0] > p[1] and p[2] > p[3]
    for s in scores:
        assert s.verdict == (Verdict.GOOD if s.p_satisfied >= judge.threshold else Verdict.BAD)


@pytest.mark.models
def test_deterministic_and_batch_independent(judge: UXJudge) -> None:
    a = [s.p_satisfied for s in judge.score(DIALOGUES)]
    b = [s.p_satisfied for s in judge.score(DIALOGUES)]
    assert a == b
    alone = [judge.score([d])[0].p_satisfied for d in DIALOGUES]
    assert np.allclose(a, alone, atol=0.02)


@pytest.mark.models
def test_edge_inputs_never_crash(judge: UXJudge) -> None:
    scores = judge.score(EDGE_CASES)
    assert len(scores) == len(EDGE_CASES)
    assert all(np.isfinite(s.p_satisfied) and 0.0 <= s.p_satisfied <= 1.0 for s in scores)
    assert judge.score([]) == []


@pytest.mark.models
def test_head_for_another_encoder_is_refused(trained_head: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    shutil.copytree(trained_head, other)
    meta = json.loads((other / "meta.json").read_text())
    meta["encoder"]["fingerprint"] = "0" * 64
    (other / "meta.json").write_text(json.dumps(meta))
    judge = UXJudge(head=str(other), runtime=Runtime(threads=2))
    with pytest.raises(HeadMismatchError, match="trained on encoder"):
        judge.load()


@pytest.mark.models
@pytest.mark.skipif(
    not (DEFAULT_HEAD / "meta.json").exists(), reason="default head not trained yet"
)
def test_default_head_loads_and_scores(model_cache: Path) -> None:
    judge = UXJudge(cache_dir=model_cache, runtime=Runtime(threads=2))
    judge.load()
    assert len(judge.score(DIALOGUES + EDGE_CASES)) == len(DIALOGUES) + len(EDGE_CASES)
