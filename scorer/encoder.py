"""Sentence embeddings from an XLM-R/BERT-like encoder, the E5 way.

E5 models are trained with a "query: " or "passage: " prefix, mean-pool the last hidden
states over the attention mask and compare L2-normalised vectors. This runs on every live
assistant turn, so inputs are sorted into length buckets (little padding), batched, and
run under `torch.inference_mode` in the dtype `scorer.runtime.Runtime` picks.

Pooled embeddings are kept in a bounded LRU keyed by the input's token ids: the worker
embeds the same text more than once (the UX-Judge embeds a reply when it is scored, the
reaction model reads the same reply's embedding when the user answers it; a user message
is a follow-up once and the previous message once), and the second time is a lookup.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scorer.errors import ModelMissingError, ScorerError
from scorer.models.cache import sha256_file
from scorer.runtime import Runtime, length_buckets

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

QUERY = "query: "
PASSAGE = "passage: "
Keep = Literal["head", "tail"]

# A token rarely spans more than a few characters, so cutting text to this many characters
# per token of budget before tokenizing never changes what survives truncation, but bounds
# the work a pathological (megabyte) message can cause.
_CHARS_PER_TOKEN_CAP = 32
# Pooled embeddings kept (1.5 KB each at dim 384: ~50 MB). A reply is looked up again when
# its follow-up arrives, typically seconds to minutes later; a miss only costs a forward.
DEFAULT_CACHE_SIZE = 32768


class EncoderError(ScorerError):
    """The encoder cannot be loaded or used as configured."""


class E5Encoder:
    """Embeds texts with an E5-style encoder. Call `load()` once, then `encode` any number of times.

    `model` is a local folder or a Hugging Face model id; None means the bundled
    multilingual-e5-small, converted once into `cache_dir` (see scorer.models.e5).
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        cache_dir: Path | None = None,
        runtime: Runtime | None = None,
        max_tokens: int = 512,
        max_batch_tokens: int = 16384,
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        if max_tokens < 8:
            raise ValueError(f"max_tokens must be at least 8; got {max_tokens}")
        self.model_ref = model
        self.cache_dir = cache_dir
        self.runtime = runtime or Runtime()
        self.max_tokens = max_tokens
        self.max_batch_tokens = max_batch_tokens
        self.cache_size = cache_size  # 0: no cache (benchmarks that time the forward)
        self._cache: OrderedDict[bytes, np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()  # scorers may run in worker threads
        self._model: Any = None
        self._tokenizer: Any = None
        self._fast: Any = None  # the tokenizers.Tokenizer behind the transformers wrapper
        self._path: Path | None = None
        self._fingerprint = ""
        self._cls = self._sep = self._pad = 0

    # ------------------------------------------------------------------ lifecycle
    def load(self) -> None:
        if self._model is not None:
            return
        from transformers import AutoModel, AutoTokenizer

        self.runtime.apply()
        ref = self._resolve()
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(ref))
            model = _load_model(AutoModel, str(ref), self.runtime.torch_dtype())
        except OSError as exc:
            raise ModelMissingError(
                f"cannot load encoder {ref!s}: expected a local folder or a reachable "
                f"Hugging Face model id ({type(exc).__name__})"
            ) from exc
        model.eval()
        self._tokenizer = tokenizer
        self._fast = getattr(tokenizer, "backend_tokenizer", None)
        self._cls = _special_id(tokenizer, "cls_token_id", "bos_token_id")
        self._sep = _special_id(tokenizer, "sep_token_id", "eos_token_id")
        self._pad = _special_id(tokenizer, "pad_token_id", "eos_token_id")
        limit = int(getattr(model.config, "max_position_embeddings", self.max_tokens))
        if getattr(model.config, "model_type", "") in {"xlm-roberta", "roberta", "camembert"}:
            limit -= 2  # RoBERTa-style position ids start after the padding index
        self.max_tokens = min(self.max_tokens, limit)
        self._model = model
        self._fingerprint = _fingerprint(ref, model, tokenizer)
        log.info(
            "encoder loaded: %s (%s, %d threads, fingerprint %s)",
            ref,
            str(self.runtime.torch_dtype()).removeprefix("torch."),
            self.runtime.torch_threads(),
            self._fingerprint[:8],
        )

    def _resolve(self) -> str | Path:
        if self.model_ref is None:
            from scorer.models.e5 import prepare_e5

            self._path = prepare_e5(self.cache_dir)
            return self._path
        local = Path(self.model_ref).expanduser()
        if local.exists():
            self._path = local
            return local
        return str(self.model_ref)

    @property
    def loaded(self) -> bool:
        return self._model is not None

    @property
    def fingerprint(self) -> str:
        """sha256 identifying the weights and vocabulary; changes iff embeddings can change."""
        self._require()
        return self._fingerprint

    @property
    def dim(self) -> int:
        self._require()
        return int(self._model.config.hidden_size)

    @property
    def max_content_tokens(self) -> int:
        """Tokens a text may have once the start and end special tokens are added."""
        return self.max_tokens - 2

    def _require(self) -> None:
        if self._model is None:
            raise EncoderError("encoder used before load(); call load() once first")

    # ------------------------------------------------------------------ tokens
    def tokenize(self, texts: Sequence[str], keep: Keep = "head") -> list[list[int]]:
        """Token ids of each text, without special tokens, at most `max_content_tokens` long.

        `keep="tail"` keeps the end of an over-long text (the newest part of a history).
        """
        self._require()
        cap = self.max_content_tokens * _CHARS_PER_TOKEN_CAP
        clipped = [t[:cap] if keep == "head" else t[-cap:] for t in texts]
        if self._fast is not None:
            ids = [e.ids for e in self._fast.encode_batch(clipped, add_special_tokens=False)]
        else:
            ids = self._tokenizer(clipped, add_special_tokens=False)["input_ids"]
        n = self.max_content_tokens
        return [list(x[:n]) if keep == "head" else list(x[-n:]) for x in ids]

    # ------------------------------------------------------------------ embeddings
    def encode(self, texts: Sequence[str], prefix: str = QUERY) -> np.ndarray:
        """L2-normalised embeddings (float32, one row per text) of `prefix + text`.

        Over-long texts keep their beginning.
        """
        return self.embed_ids(self.tokenize([prefix + t for t in texts]))

    def embed_ids(self, token_ids: Sequence[Sequence[int]], progress: bool = False) -> np.ndarray:
        """Embed pre-tokenized inputs (content ids; specials are added here), order kept.

        Inputs embedded before (same ids after truncation) come from the cache."""
        if self.cache_size <= 0:
            return self._run(token_ids, None, progress)[0]
        import numpy as np

        n = self.max_content_tokens
        keys = [np.asarray(list(ids)[:n], dtype=np.int32).tobytes() for ids in token_ids]
        out = np.zeros((len(keys), self.dim), dtype=np.float32)
        todo: dict[bytes, list[int]] = {}
        with self._cache_lock:
            for i, key in enumerate(keys):
                hit = self._cache.get(key)
                if hit is None:
                    todo.setdefault(key, []).append(i)
                else:
                    self._cache.move_to_end(key)
                    out[i] = hit
        if not todo:
            return out
        first = [rows[0] for rows in todo.values()]
        computed = self._run([token_ids[i] for i in first], None, progress)[0]
        with self._cache_lock:
            for (key, rows), vector in zip(todo.items(), computed, strict=True):
                out[rows] = vector
                self._cache[key] = vector.copy()  # not a view pinning the batch
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return out

    def embed_with_tokens(
        self, token_ids: Sequence[Sequence[int]], layer: int
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Like `embed_ids`, plus each input's L2-normalised token states at hidden layer
        `layer` (1..num_layers), one [n_tokens, dim] float32 array per input, specials
        excluded, for token-level comparisons between texts."""
        if not 1 <= layer <= self.num_layers:
            raise EncoderError(f"layer must be in 1..{self.num_layers}; got {layer}")
        pooled, tokens = self._run(token_ids, layer, False)
        return pooled, tokens

    def clear_cache(self) -> None:
        with self._cache_lock:
            self._cache.clear()

    @property
    def num_layers(self) -> int:
        self._require()
        return int(self._model.config.num_hidden_layers)

    def _run(
        self, token_ids: Sequence[Sequence[int]], layer: int | None, progress: bool
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        import numpy as np
        import torch

        self._require()
        n = self.max_content_tokens
        rows = [[self._cls, *list(ids)[:n], self._sep] for ids in token_ids]
        pooled = np.zeros((len(rows), self.dim), dtype=np.float32)
        tokens: list[np.ndarray] = [pooled[:0]] * (len(rows) if layer is not None else 0)
        bar = progress_bar(len(rows), "embedding") if progress else None
        with torch.inference_mode():
            for batch in self._batches([len(r) for r in rows]):
                vectors, states = self._forward([rows[i] for i in batch], layer)
                pooled[batch] = vectors
                if layer is not None:
                    for i, state in zip(batch, states, strict=True):
                        tokens[i] = state
                if bar is not None:
                    bar.update(len(batch))
        if bar is not None:
            bar.close()
        return pooled, tokens

    def _batches(self, lengths: list[int]) -> list[list[int]]:
        """Length buckets of at most `max_batch` rows and about `max_batch_tokens` padded tokens."""
        out: list[list[int]] = []
        for bucket in length_buckets(lengths, self.runtime.max_batch):
            current: list[int] = []
            for i in bucket:  # ascending length: the newest row is the widest
                if current and (len(current) + 1) * lengths[i] > self.max_batch_tokens:
                    out.append(current)
                    current = []
                current.append(i)
            out.append(current)
        return out

    def _forward(
        self, rows: list[list[int]], layer: int | None
    ) -> tuple[np.ndarray, list[np.ndarray]]:
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self._pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
            mask[i, : len(r)] = 1
        out = self._model(
            input_ids=ids, attention_mask=mask, output_hidden_states=layer is not None
        )
        weights = mask.unsqueeze(-1).to(torch.float32)
        summed = (out.last_hidden_state.to(torch.float32) * weights).sum(1)
        pooled = torch.nn.functional.normalize(summed / weights.sum(1).clamp(min=1.0), dim=-1)
        states = []
        if layer is not None:
            hidden = torch.nn.functional.normalize(
                out.hidden_states[layer].to(torch.float32), dim=-1
            )
            states = [hidden[i, 1 : len(r) - 1].numpy().copy() for i, r in enumerate(rows)]
        return pooled.numpy(), states


def _load_model(auto_model: Any, ref: str, dtype: Any) -> Any:
    # The pooler is never used (we mean-pool); skipping it avoids a randomly initialised layer
    # and its warning. Not every architecture takes the argument, hence the fallback.
    try:
        return auto_model.from_pretrained(ref, dtype=dtype, add_pooling_layer=False)
    except TypeError:
        return auto_model.from_pretrained(ref, dtype=dtype)


def _special_id(tokenizer: Any, *names: str) -> int:
    for name in names:
        value = getattr(tokenizer, name, None)
        if value is not None:
            return int(value)
    raise EncoderError(f"encoder tokenizer defines none of {', '.join(names)}")


def _fingerprint(ref: str | Path, model: Any, tokenizer: Any) -> str:
    """sha256 over what decides the embeddings: cheap for folders prepared by uxmon (their
    manifest pins the source bytes and the converter), else the folder's weight, config and
    tokenizer files, else (a hub id) every loaded tensor and the vocabulary."""
    from scorer.models.e5 import MANIFEST, identity, read_manifest

    digest = hashlib.sha256()
    if isinstance(ref, Path) and (ref / MANIFEST).is_file():
        manifest = identity(read_manifest(ref) or {})
        digest.update(b"uxmon-manifest:" + json.dumps(manifest, sort_keys=True).encode())
        return digest.hexdigest()
    if isinstance(ref, Path) and ref.is_dir():
        for path in sorted(ref.iterdir()):
            if path.is_file() and path.suffix in {".json", ".safetensors", ".bin", ".model"}:
                digest.update(path.name.encode())
                digest.update(sha256_file(path).encode())
        return digest.hexdigest()
    import torch

    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().to(torch.float32).contiguous().numpy().tobytes())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    vocab = backend.to_str() if backend is not None else json.dumps(tokenizer.get_vocab())
    digest.update(vocab.encode())
    return digest.hexdigest()


def progress_bar(total: int, what: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=what, unit="text", leave=False)
