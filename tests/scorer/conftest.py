"""Fixtures for scorer tests: small hand-written zh/en dialogues and a shared encoder.

The labelled set is synthetic and tiny on purpose: it proves the training pipeline runs
and learns an obvious signal (on-topic answers liked, refusals / off-topic replies
disliked), not that the shipped head is good — the benchmark measures that.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorer.types import Dialogue, Turn

_ASKS = [
    (
        "怎么煮米饭才不会粘锅？",
        "先把米淘洗两遍，米和水按1:1.2的比例，大火烧开后转小火焖15分钟即可。",
    ),
    (
        "推荐几本适合初学者的Python书",
        "可以看《Python编程：从入门到实践》和《流畅的Python》，前者适合零基础。",
    ),
    ("北京今天适合跑步吗？", "今天北京空气质量良，气温18度，傍晚适合慢跑，注意补水。"),
    (
        "帮我把这句话翻译成英文：我明天要去上海开会",
        "I am going to Shanghai for a meeting tomorrow.",
    ),
    ("失眠了怎么办", "睡前一小时别看手机，保持卧室安静黑暗，可以试试深呼吸放松；长期失眠请就医。"),
    ("给我写一句生日祝福", "祝你生日快乐，新的一岁平安喜乐，所愿皆所得！"),
    (
        "How do I reverse a list in Python?",
        "Use my_list.reverse() in place, or my_list[::-1] for a reversed copy.",
    ),
    ("What is the capital of Australia?", "The capital of Australia is Canberra."),
    (
        "Suggest a quick vegetarian dinner",
        "Try a chickpea curry: onions, garlic, chickpeas, tomatoes and curry powder.",
    ),
    (
        "How many minutes should I boil an egg for a soft yolk?",
        "About 6 minutes in boiling water, then cool it in cold water.",
    ),
    (
        "Explain what an API is in one sentence",
        "An API is a defined way for one program to ask another program for data or actions.",
    ),
    ("Can you fix this SQL: SELEC * FROM users", "The keyword is misspelled: SELECT * FROM users;"),
]
_BAD_REPLIES = [
    "抱歉，我无法回答这个问题。",
    "这个问题很复杂，建议您咨询相关专业人士。",
    "I'm sorry, but I can't help with that.",
    "As an AI language model, I do not have personal opinions.",
    "股票市场今天整体上涨，科技板块表现突出。",
    "The weather in Paris is usually mild in spring.",
]


def _labelled() -> list[tuple[Dialogue, int]]:
    out: list[tuple[Dialogue, int]] = []
    for i, (ask, answer) in enumerate(_ASKS):
        history = (
            (Turn("user", "你好"), Turn("assistant", "你好！有什么可以帮你？")) if i % 2 else ()
        )
        out.append((Dialogue(user_message=ask, reply=answer, history=history, id=f"g{i}"), 1))
        for j in range(2):
            bad = _BAD_REPLIES[(i + 3 * j) % len(_BAD_REPLIES)]
            out.append((Dialogue(user_message=ask, reply=bad, history=history, id=f"b{i}-{j}"), 0))
            good = answer if j == 0 else answer + " 希望对你有帮助。"
            if j == 1:
                out.append((Dialogue(user_message=ask, reply=good, id=f"g{i}-{j}"), 1))
    return out


@pytest.fixture(scope="session")
def labelled_dialogues() -> list[tuple[Dialogue, int]]:
    return _labelled()


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the real bundled models are prepared: $UXMON_MODEL_CACHE if set (converted
    once, reused across runs), else a fresh session directory."""
    configured = os.environ.get("UXMON_MODEL_CACHE")
    return Path(configured) if configured else tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def e5_encoder(model_cache: Path) -> Iterator[object]:
    """The bundled multilingual-e5-small, loaded once per session (2 threads, bf16 if able),
    without the embedding cache: these tests are about what the forward computes (the
    cache's own tests turn it on)."""
    from scorer.encoder import E5Encoder
    from scorer.runtime import Runtime

    encoder = E5Encoder(cache_dir=model_cache, runtime=Runtime(threads=2), cache_size=0)
    encoder.load()
    yield encoder


@pytest.fixture(scope="session")
def trained_head(
    e5_encoder: object,
    labelled_dialogues: list[tuple[Dialogue, int]],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """A head trained on the small labelled set with the real encoder (a few seconds)."""
    from scorer.encoder import E5Encoder
    from scorer.training import train_judge

    assert isinstance(e5_encoder, E5Encoder)
    out = tmp_path_factory.mktemp("heads") / "tiny"
    train_judge(labelled_dialogues, out, encoder=e5_encoder, progress=False)
    return out
