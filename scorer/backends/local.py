"""Verdict log-probabilities from a local causal LM with transformers, one forward per batch.

No text is generated: a single forward pass over a left-padded batch yields the next-token
distribution at the first answer position, and only the lm_head row for that position is
computed (`logits_to_keep=1`), which saves the 152k-way projection at every other position.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.backends import BackendConfig, BackendError, VerdictLogprobs
from scorer.prompts import ChatPrompt, Language
from scorer.runtime import Runtime, length_buckets

if TYPE_CHECKING:
    import numpy as np
    import torch

    from scorer.verdict_head import VerdictHead

log = logging.getLogger(__name__)


class TokenizerMeter:
    """Counts and cuts text in real tokens, cutting only at token boundaries."""

    def __init__(self, tokenizer: Any) -> None:
        self._tok = tokenizer

    def _offsets(self, text: str) -> list[tuple[int, int]]:
        enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)
        return [tuple(pair) for pair in enc["offset_mapping"]]

    def count(self, text: str) -> int:
        return len(self._tok(text, add_special_tokens=False)["input_ids"])

    def head(self, text: str, n: int) -> str:
        offsets = self._offsets(text)
        if len(offsets) <= n:
            return text
        return "" if n <= 0 else text[: offsets[n - 1][1]]

    def tail(self, text: str, n: int) -> str:
        offsets = self._offsets(text)
        if len(offsets) <= n:
            return text
        return "" if n <= 0 else text[offsets[-n][0] :]

    def count_prompt(self, prompt: ChatPrompt) -> int:
        return len(self.chat_ids(prompt))

    def chat_ids(self, prompt: ChatPrompt) -> list[int]:
        text = self._tok.apply_chat_template(
            prompt.messages(), tokenize=False, add_generation_prompt=True
        )
        ids: list[int] = self._tok(text, add_special_tokens=False)["input_ids"]
        return ids


class LocalBackend:
    default_max_prompt = 1024  # tokens; a 1k-token forward is ~2.5 s on 2 cores in bf16

    def __init__(
        self,
        language: Language,
        model: str | None = None,
        runtime: Runtime | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self._language = language
        self._model_arg = model
        self._runtime = runtime or Runtime()
        self._cache_dir = cache_dir
        self._model: Any = None
        self._decoder: Any = None
        self._head: Any = None
        self._verdict_rows: Any = None
        self._verdict_bias: Any = None
        self._meter: TokenizerMeter | None = None
        self._good_id = self._bad_id = self._pad_id = -1
        self.model_id = _model_id(model)

    @classmethod
    def from_config(cls, config: BackendConfig) -> LocalBackend:
        return cls(config.language, config.model, config.runtime, config.cache_dir)

    def _resolve(self) -> str:
        if self._model_arg is not None:
            return self._model_arg
        from scorer.models.qwen import prepare_qwen

        return str(prepare_qwen(self._cache_dir, progress=log.info))

    def load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._runtime.apply()
        where = self._resolve()
        tokenizer = AutoTokenizer.from_pretrained(where)
        if getattr(tokenizer, "chat_template", None) is None:
            raise BackendError(
                f"the tokenizer at {where} has no chat template; use an instruct model"
            )
        self._good_id = _single_token(tokenizer, self._language.good, where)
        self._bad_id = _single_token(tokenizer, self._language.bad, where)
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id
        if pad is None:
            raise BackendError(f"the tokenizer at {where} has neither a pad nor an eos token")
        self._pad_id = int(pad)
        model = AutoModelForCausalLM.from_pretrained(where, dtype=self._runtime.torch_dtype())
        model.eval()
        self._model = model
        self._decoder = model.get_decoder()
        self._head = model.get_output_embeddings()
        rows = [self._good_id, self._bad_id]
        self._verdict_rows = self._head.weight[rows].detach().float()
        bias = getattr(self._head, "bias", None)
        self._verdict_bias = None if bias is None else bias[rows].detach().float()
        self._meter = TokenizerMeter(tokenizer)
        self._check_head_split(tokenizer)
        log.info(
            "GRM local model loaded from %s (%s, %d threads)",
            where,
            self._runtime.torch_dtype(),
            torch.get_num_threads(),
        )

    def _check_head_split(self, tokenizer: Any) -> None:
        """We run decoder and lm_head separately; make sure that equals the model's own
        forward (models that scale or soft-cap their logits would not)."""
        import torch

        probe = tokenizer("probe: 好 差 GOOD BAD", add_special_tokens=False)["input_ids"]
        ids = torch.tensor([probe])
        with torch.inference_mode():
            whole = self._model(input_ids=ids, logits_to_keep=1, use_cache=False).logits[0, -1]
            hidden = self._decoder(input_ids=ids, use_cache=False).last_hidden_state[:, -1, :]
            split = self._head(hidden)[0]
        if not torch.allclose(whole.float(), split.float(), atol=1e-2, rtol=1e-2):
            raise BackendError(
                "this model's logits are not lm_head(decoder(x)); the local GRM backend "
                "cannot read its verdicts"
            )

    def meter(self) -> TokenizerMeter:
        if self._meter is None:
            raise BackendError("the local GRM backend is not loaded; call load() first")
        return self._meter

    def verdict_logprobs(self, prompts: Sequence[ChatPrompt]) -> list[VerdictLogprobs]:
        return [
            VerdictLogprobs(float(good), float(bad))
            for good, bad in self._each_answer_state(prompts, self._verdict_logprobs)
        ]

    def base_direction(self) -> np.ndarray:
        """row_good - row_bad of the model's own lm_head: its zero-shot margin per unit h."""
        head = self._head.weight if self._head is not None else None
        if head is None:
            raise BackendError("the local GRM backend is not loaded; call load() first")
        rows = head[[self._good_id, self._bad_id]].detach().float()
        return (rows[0] - rows[1]).numpy()

    def use_verdict_head(self, directory: Path) -> VerdictHead:
        """Adapt the two verdict rows with a trained head (scorer.verdict_head)."""
        import torch

        from scorer.verdict_head import load_verdict_head

        if self._head is None:
            raise BackendError("the local GRM backend is not loaded; call load() first")
        head = load_verdict_head(directory, int(self._verdict_rows.shape[1]), self.model_id)
        direction = torch.from_numpy(head.direction).float()
        base = self._head.weight[[self._good_id, self._bad_id]].detach().float()
        self._verdict_rows = torch.stack([base[0] + direction / 2, base[1] - direction / 2])
        bias = torch.tensor([head.bias / 2, -head.bias / 2])
        self._verdict_bias = bias if self._verdict_bias is None else self._verdict_bias + bias
        return head

    def answer_states(self, prompts: Sequence[ChatPrompt]) -> np.ndarray:
        """The decoder's last hidden state at the answer position, one row per prompt
        (float32): what the verdict head reads, for training a new one."""
        import numpy as np

        rows = self._each_answer_state(prompts, lambda hidden: hidden.float())
        return np.stack([row.numpy() for row in rows]) if rows else np.zeros((0, 0), np.float32)

    def _each_answer_state(
        self, prompts: Sequence[ChatPrompt], read: Callable[[torch.Tensor], Any]
    ) -> list[Any]:
        """`read(hidden)` for length-bucketed batches, back in prompt order."""
        meter = self.meter()
        ids = [meter.chat_ids(p) for p in prompts]
        out: list[Any] = [None] * len(ids)
        lengths = [len(i) for i in ids]
        for bucket in _token_capped(length_buckets(lengths, self._runtime.max_batch), lengths):
            values = read(self._answer_state([ids[i] for i in bucket]))
            rows = zip(*values, strict=True) if isinstance(values, tuple) else values
            for index, row in zip(bucket, rows, strict=True):
                out[index] = row
        return out

    def _answer_state(self, batch: list[list[int]]) -> torch.Tensor:
        """Left-pad, run one forward pass, return the last position's hidden state."""
        import torch

        width = max(len(ids) for ids in batch)
        input_ids = torch.full((len(batch), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ids in enumerate(batch):
            input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            mask[row, width - len(ids) :] = 1
        # Positions count real tokens only, so a left-padded row sees the same positions
        # as it would alone (a plain forward would number the padding too).
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        with torch.inference_mode():
            hidden: torch.Tensor = self._decoder(
                input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=False
            ).last_hidden_state[:, -1, :]
        return hidden

    def _verdict_logprobs(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Log-probabilities of the two verdicts from the last position's hidden state.

        The lm_head runs on this one position only (as `logits_to_keep=1` would). bf16
        logits near 20 are spaced 0.125 apart, which would quantize the margin the whole
        score rests on, so the two verdict logits are recomputed in fp32 (with the trained
        verdict head's rows when one is loaded); the bf16 logits supply the rest of the
        normaliser.
        """
        import torch

        with torch.inference_mode():
            logits = self._head(hidden).float()
            pair = hidden.float() @ self._verdict_rows.T
            if self._verdict_bias is not None:
                pair = pair + self._verdict_bias
            logits[:, [self._good_id, self._bad_id]] = pair
            normaliser = torch.logsumexp(logits, dim=-1)
        return pair[:, 0] - normaliser, pair[:, 1] - normaliser

    def health(self) -> dict[str, str | float]:
        return {"state": "loaded" if self._model is not None else "not_loaded"}


# Padded tokens per forward pass. Beyond this a bigger batch no longer raises throughput on
# CPU, and one long prompt would otherwise pad a whole batch of short ones up to its length.
MAX_BATCH_TOKENS = 2048


def _token_capped(buckets: list[list[int]], lengths: list[int]) -> list[list[int]]:
    """Split length-sorted buckets so rows x longest row stays within MAX_BATCH_TOKENS."""
    capped: list[list[int]] = []
    for bucket in buckets:
        current: list[int] = []
        for index in bucket:  # ascending length, so the newest row is the longest
            if current and (len(current) + 1) * lengths[index] > MAX_BATCH_TOKENS:
                capped.append(current)
                current = []
            current.append(index)
        if current:
            capped.append(current)
    return capped


def _single_token(tokenizer: Any, word: str, where: str) -> int:
    ids = tokenizer(word, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        raise BackendError(
            f"verdict {word!r} must be one token for the model at {where}; it is {len(ids)}"
        )
    return int(ids[0])


def _model_id(model: str | None) -> str:
    """A short, stable name for the weights (goes into a bounded metric label)."""
    if model is None:
        from scorer.models.qwen import GGUF_SHA256, QWEN_DIRNAME

        return f"{QWEN_DIRNAME}@{GGUF_SHA256[:8]}"
    path = Path(model)
    config = path / "config.json"
    if config.is_file():
        digest = hashlib.sha256(config.read_bytes())
        for weights in sorted(path.glob("*.safetensors")):
            digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
        return f"{path.name}@{digest.hexdigest()[:8]}"
    return model  # a hub id names itself
