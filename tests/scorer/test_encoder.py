"""E5Encoder on the real bundled model: prefixes, pooling, batching, truncation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from scorer.encoder import PASSAGE, QUERY, E5Encoder, EncoderError
from scorer.runtime import Runtime

pytestmark = pytest.mark.models

TEXTS = [
    "怎么煮米饭才不会粘锅？",
    "How do I reverse a list in Python?",
    "谢谢，太棒了 👍",
    "一个非常非常长的句子" * 40,
    "",
    "mixed 中英文 text",
]


def test_use_before_load_is_a_clear_error() -> None:
    with pytest.raises(EncoderError, match="load"):
        E5Encoder(runtime=Runtime(threads=1)).encode(["x"])


def test_embeddings_are_unit_vectors_in_input_order(e5_encoder: E5Encoder) -> None:
    out = e5_encoder.encode(TEXTS)
    assert out.shape == (len(TEXTS), e5_encoder.dim) == (len(TEXTS), 384)
    assert out.dtype == np.float32
    assert np.allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    # Bucketing reorders work by length; results must come back in the caller's order.
    one_by_one = np.stack([e5_encoder.encode([t])[0] for t in TEXTS])
    assert np.min((out * one_by_one).sum(axis=1)) > 0.999


def test_prefix_changes_the_embedding(e5_encoder: E5Encoder) -> None:
    q = e5_encoder.encode(["北京明天会下雨吗"], QUERY)[0]
    p = e5_encoder.encode(["北京明天会下雨吗"], PASSAGE)[0]
    assert 0.8 < float(q @ p) < 0.9999


def test_relevance_ranks_the_answer_first(e5_encoder: E5Encoder) -> None:
    q = e5_encoder.encode(["怎么煮米饭才不会粘锅？"], QUERY)[0]
    answers = e5_encoder.encode(
        ["米和水按1:1.2的比例，大火烧开后转小火焖15分钟。", "The stock market rose today."],
        PASSAGE,
    )
    assert float(answers[0] @ q) > float(answers[1] @ q)


def test_same_input_same_bytes(e5_encoder: E5Encoder) -> None:
    assert e5_encoder.encode(TEXTS).tobytes() == e5_encoder.encode(TEXTS).tobytes()


def test_truncation_keeps_head_or_tail(e5_encoder: E5Encoder) -> None:
    limit = e5_encoder.max_content_tokens
    assert limit == 510
    long = "开头 " + "中间的内容 " * 2000 + "结尾"
    head, tail = e5_encoder.tokenize([long], "head")[0], e5_encoder.tokenize([long], "tail")[0]
    assert len(head) == len(tail) == limit
    assert head[:3] == e5_encoder.tokenize(["开头"])[0][:3]
    end = e5_encoder.tokenize(["中间的内容 结尾"])[0]
    assert tail[-2:] == end[-2:]


def test_huge_input_is_bounded(e5_encoder: E5Encoder) -> None:
    out = e5_encoder.encode(["x" * 2_000_000, "😀" * 50_000])
    assert out.shape == (2, 384)
    assert np.isfinite(out).all()


def test_empty_batch(e5_encoder: E5Encoder) -> None:
    assert e5_encoder.encode([]).shape == (0, 384)


def test_fingerprint_is_stable_and_names_the_conversion(e5_encoder: E5Encoder) -> None:
    assert len(e5_encoder.fingerprint) == 64
    again = E5Encoder(e5_encoder._path, runtime=Runtime(threads=2, dtype="float32"))
    again.load()  # another dtype, same weights: same identity
    assert again.fingerprint == e5_encoder.fingerprint


def test_token_states_are_unit_rows_per_content_token(e5_encoder: E5Encoder) -> None:
    ids = e5_encoder.tokenize(["query: 你好 world", "passage: 一二三"])
    pooled, states = e5_encoder.embed_with_tokens(ids, layer=6)
    assert pooled.shape == (2, 384)
    assert [s.shape for s in states] == [(len(ids[0]), 384), (len(ids[1]), 384)]
    assert np.allclose(np.linalg.norm(states[0], axis=1), 1.0, atol=1e-4)
    assert np.allclose(pooled, e5_encoder.embed_ids(ids), atol=1e-6)
    with pytest.raises(EncoderError, match="layer"):
        e5_encoder.embed_with_tokens(ids, layer=13)


@pytest.fixture
def cached(
    e5_encoder: E5Encoder, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[E5Encoder, list[int]]]:
    """The shared encoder with a 3-entry cache, and the batch sizes its forward ran."""
    forwards: list[int] = []
    real = e5_encoder._forward

    def counting(rows: list[list[int]], layer: int | None) -> Any:
        forwards.append(len(rows))
        return real(rows, layer)

    monkeypatch.setattr(e5_encoder, "_forward", counting)
    e5_encoder.cache_size = 3
    yield e5_encoder, forwards
    e5_encoder.cache_size = 0
    e5_encoder.clear_cache()


def test_an_input_embedded_before_is_a_lookup(cached: tuple[E5Encoder, list[int]]) -> None:
    encoder, forwards = cached
    first = encoder.encode(TEXTS[:2])
    assert forwards == [1, 1] or forwards == [2]
    forwards.clear()
    again = encoder.encode([TEXTS[1], TEXTS[0], TEXTS[1]])
    assert forwards == []
    assert again.tobytes() == np.stack([first[1], first[0], first[1]]).tobytes()


def test_the_cache_keeps_the_most_recent_inputs_and_embeds_a_repeat_once(
    cached: tuple[E5Encoder, list[int]],
) -> None:
    encoder, forwards = cached
    fresh = encoder.encode([TEXTS[2], TEXTS[2]])  # one text twice: one row computed
    assert sum(forwards) == 1 and fresh[0].tobytes() == fresh[1].tobytes()
    encoder.encode(TEXTS[:3])  # 2 is a hit; 0 and 1 are newer entries
    encoder.encode([TEXTS[5]])  # over 3 entries: the least recently used, 2, goes
    forwards.clear()
    encoder.encode(TEXTS[:2])
    assert forwards == []
    encoder.encode([TEXTS[2]])
    assert forwards == [1]


def test_a_cached_embedding_is_what_the_forward_gives(cached: tuple[E5Encoder, list[int]]) -> None:
    encoder, _ = cached
    looked_up = encoder.encode(TEXTS)
    looked_up = encoder.encode(TEXTS)
    encoder.cache_size = 0
    computed = encoder.encode(TEXTS)
    assert np.min((looked_up * computed).sum(axis=1)) > 0.9999
