"""A learned layer over the reaction rules: the user's next message, its meaning and its
timing -> (Reaction, probability).

The rules of `stream.reactions` read characters; this reads meaning too. For one
follow-up (the user's next message after an assistant reply) the feature row is

- hand features (`HAND_FEATURES`, in that order): cosines between the embeddings of the
  next message, the previous user message and the reply; character-level similarity and
  containment; exact-repeat flags; lengths; the gap against a per-script reading and
  typing speed (Chinese reads far fewer characters a second than English); the pattern
  hits; the rules' own verdict one-hot; the explicit feedback given in between;
- the embedding of the next message, then the embedding of the reply (the reply's
  embedding says what kind of reply the user reacted to: a refusal, a wall of text).

All three embeddings are the caller's, made by the encoder the artefact names,
L2-normalised, float32: the users' messages with the E5 "query: " prefix
(`EMBEDDING_PREFIX`), the reply as the UX-Judge embeds it ("passage: " and the reply's
start, `scorer.ux_judge.reply_input_ids`), so the worker reuses the judge's embedding of
the reply instead of running the encoder over it again. This module
never runs the encoder; at inference it is numpy only: standardise, one affine map,
softmax (a multinomial logistic regression). `no_follow_up` is a timer's call, not this.

Weights live in `stream/data/reaction_model.npz` with `reaction_model.json` beside it
(version, feature spec, encoder fingerprint, training writers, cross-validation
figures). `bench/reactions_model.py` chose the recipe on leave-one-writer-out
cross-validation and `--save` writes the artefact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from stream.reactions import Patterns, Reaction, content_units, pattern_form, similarity

# What the model can answer: every reaction a next message can show (not no_follow_up).
CLASSES: tuple[Reaction, ...] = (
    Reaction.SATISFIED,
    Reaction.COMPLAINT,
    Reaction.REPHRASE,
    Reaction.REPEAT,
    Reaction.DISMISS,
    Reaction.SKIP_READ,
    Reaction.ABANDON,
)
FEEDBACK = ("thumbs_up", "thumbs_down", "regenerate", "copy")
EMBEDDING_PREFIX = "query: "
# Brisk reading and typing, characters per second; "cjk" counts Han characters.
READ_CHARS_PER_S = {"cjk": 8.0, "other": 25.0}
TYPE_CHARS_PER_S = {"cjk": 1.5, "other": 4.0}
MIN_GAP_S = 0.5  # clocks jitter; a gap below this is read as this

HAND_FEATURES: tuple[str, ...] = (
    "cos_message_previous",
    "cos_message_reply",
    "cos_previous_reply",
    "cos_message_reply_minus_previous",
    "similarity_previous",
    "message_units_in_previous",
    "previous_units_in_message",
    "message_units_in_reply",
    "same_pattern_form",
    "same_content_units",
    "log_len_message",
    "log_len_reply",
    "log_len_previous",
    "log_len_ratio_message_previous",
    "log_gap",
    "log_gap_over_reading",
    "log_gap_over_reading_and_typing",
    "log_gap_minus_typing_over_reading",
    "gap_under_30s",
    "reply_over_300_chars",
    "pattern_complaint",
    "pattern_dismiss",
    "pattern_continuation",
    "pattern_rephrase",
    "message_at_most_20_chars",
    "question_mark",
    "exclamation_mark",
    "message_has_cjk",
    "message_has_no_units",
    *(f"rule_{c.value}" for c in CLASSES),
    *(f"feedback_{k}" for k in FEEDBACK),
)
# Changing anything that alters feature values for the same inputs must change this name,
# so that an artefact trained on the old features is refused instead of mis-scoring.
FEATURE_SPEC: dict[str, Any] = {
    "name": "reaction-lr-v2",
    "embedding_prefix": EMBEDDING_PREFIX,
    "reply_embedding": "the UX-Judge's (scorer.ux_judge.reply_input_ids)",
    "hand": list(HAND_FEATURES),
    "embeddings": ["message", "reply"],
    "read_chars_per_s": READ_CHARS_PER_S,
    "type_chars_per_s": TYPE_CHARS_PER_S,
    "classes": [c.value for c in CLASSES],
}

WEIGHTS_FILE = "reaction_model.npz"
META_FILE = "reaction_model.json"
TRAIN_HINT = "python bench/reactions_model.py --save"


class ReactionModelError(RuntimeError):
    """The reaction model's artefact is missing, malformed, or does not fit its inputs."""


class ArtefactMismatchError(ReactionModelError):
    """The artefact was trained for another encoder, feature spec or embedding size."""


Vector = NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class FollowUp:
    """One user message after an assistant reply, with what the model reads of it.

    `previous` is the user message the reply answered (None when the assistant spoke
    first, and then `previous_vec` is None too); `gap_s` the seconds from the reply to
    this message; `feedback` the explicit feedback kinds given on the reply in between;
    `rule` the verdict of `stream.reactions.classify` on the same follow-up.
    """

    message: str
    message_vec: Vector
    reply: str
    reply_vec: Vector
    previous: str | None
    previous_vec: Vector | None
    gap_s: float
    rule: Reaction
    feedback: tuple[str, ...] = field(default=())


def cjk_chars(text: str) -> int:
    return sum(1 for c in text if "\u3400" <= c <= "\u9fff")


def seconds_at(text: str, chars_per_s: dict[str, float]) -> float:
    """Seconds to read or type `text` at the given per-script speeds."""
    cjk = cjk_chars(text)
    return cjk / chars_per_s["cjk"] + (len(text) - cjk) / chars_per_s["other"]


def containment(part: str, whole: str) -> float:
    """Share of the distinct content units of `part` that occur in `whole` (0.0 if none)."""
    units = set(content_units(part))
    if not units:
        return 0.0
    return len(units & set(content_units(whole))) / len(units)


def hand_features(follow_up: FollowUp, patterns: Patterns) -> NDArray[np.float64]:
    """The `HAND_FEATURES` row of one follow-up (deterministic: same inputs, same row)."""
    f = follow_up
    text = f.message.strip()
    previous = f.previous or ""
    reply = f.reply
    m = np.asarray(f.message_vec, dtype=np.float64)
    a = np.asarray(f.reply_vec, dtype=np.float64)
    q = (
        np.asarray(f.previous_vec, dtype=np.float64)
        if f.previous_vec is not None and f.previous is not None
        else np.zeros_like(m)
    )
    cos_mq, cos_ma, cos_qa = float(m @ q), float(m @ a), float(q @ a)
    gap = max(MIN_GAP_S, f.gap_s)
    reading = max(1.0, seconds_at(reply, READ_CHARS_PER_S))
    typing = max(1.0, seconds_at(text, TYPE_CHARS_PER_S))
    units = content_units(text)
    has_previous = bool(previous)
    row = [
        cos_mq,
        cos_ma,
        cos_qa,
        cos_ma - cos_mq,
        similarity(previous, text) if has_previous else 0.0,
        containment(text, previous),
        containment(previous, text),
        containment(text, reply),
        float(has_previous and pattern_form(text) == pattern_form(previous)),
        float(has_previous and "".join(units) == "".join(content_units(previous))),
        math.log1p(len(text)),
        math.log1p(len(reply)),
        math.log1p(len(previous)),
        math.log((len(text) + 1) / (len(previous) + 1)),
        math.log(gap),
        math.log(gap / reading),
        math.log(gap / (reading + typing)),
        math.log(max(MIN_GAP_S, gap - typing) / reading),
        float(gap < 30),
        float(len(reply) > 300),
        float(patterns.is_complaint(text)),
        float(patterns.is_dismissal(text)),
        float(patterns.is_continuation(text)),
        float(patterns.is_rephrase(text)),
        float(len(text) <= 20),
        float("?" in text or "？" in text),
        float("!" in text or "！" in text),
        float(cjk_chars(text) > 0),
        float(not units),
        *(float(f.rule == c) for c in CLASSES),
        *(float(k in f.feedback) for k in FEEDBACK),
    ]
    return np.asarray(row, dtype=np.float64)


def features(follow_up: FollowUp, patterns: Patterns) -> NDArray[np.float64]:
    """The full feature row: hand features, then the message's and the reply's embedding."""
    return np.concatenate(
        [
            hand_features(follow_up, patterns),
            np.asarray(follow_up.message_vec, dtype=np.float64),
            np.asarray(follow_up.reply_vec, dtype=np.float64),
        ]
    )


def feature_dim(embedding_dim: int) -> int:
    return len(HAND_FEATURES) + 2 * embedding_dim


def default_dir() -> Path:
    return Path(str(resources.files("stream") / "data"))


@dataclass(frozen=True, slots=True)
class ReactionModel:
    """Standardise, affine map, softmax. Build with `load`, or `from_arrays` when training."""

    mean: NDArray[np.float64]
    scale: NDArray[np.float64]  # the row is (x - mean) / scale
    weights: NDArray[np.float64]  # [features, classes]
    bias: NDArray[np.float64]  # [classes]
    patterns: Patterns
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def embedding_dim(self) -> int:
        return (int(self.mean.shape[0]) - len(HAND_FEATURES)) // 2

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "untrained"))

    @classmethod
    def load(
        cls,
        directory: Path | None = None,
        *,
        encoder_fingerprint: str,
        patterns: Patterns | None = None,
    ) -> ReactionModel:
        """Read the artefact from `directory` (default: stream/data) and check that it was
        trained for the encoder whose fingerprint is given and for this feature spec."""
        root = directory or default_dir()
        weights_path, meta_path = root / WEIGHTS_FILE, root / META_FILE
        for path in (weights_path, meta_path):
            if not path.is_file():
                raise ReactionModelError(
                    f"reaction model artefact {path} is missing; expected {WEIGHTS_FILE} and "
                    f"{META_FILE} in {root} (train them with `{TRAIN_HINT}`)"
                )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            with np.load(weights_path, allow_pickle=False) as data:
                arrays = {k: np.asarray(data[k], dtype=np.float64) for k in data.files}
        except (OSError, ValueError) as exc:
            raise ReactionModelError(
                f"cannot read reaction model artefact in {root}: {type(exc).__name__}: {exc}"
            ) from None
        spec = meta.get("feature_spec", {}).get("name")
        if spec != FEATURE_SPEC["name"]:
            raise ArtefactMismatchError(
                f"reaction model in {root} expects features {spec!r}; this uxmon computes "
                f"{FEATURE_SPEC['name']!r}; retrain with `{TRAIN_HINT}`"
            )
        trained_for = str(meta.get("encoder", {}).get("fingerprint", ""))
        if trained_for != encoder_fingerprint:
            raise ArtefactMismatchError(
                f"reaction model in {root} was trained on encoder {trained_for[:8] or '?'} "
                f"but the encoder in use is {encoder_fingerprint[:8]}; use the encoder the "
                f"artefact names or retrain with `{TRAIN_HINT}`"
            )
        missing = {"mean", "scale", "weights", "bias"} - set(arrays)
        if missing:
            raise ReactionModelError(
                f"{weights_path}: expected arrays mean, scale, weights, bias; "
                f"missing {sorted(missing)}"
            )
        return cls.from_arrays(
            arrays["mean"],
            arrays["scale"],
            arrays["weights"],
            arrays["bias"],
            patterns=patterns,
            meta=meta,
        )

    @classmethod
    def from_arrays(
        cls,
        mean: NDArray[np.floating[Any]],
        scale: NDArray[np.floating[Any]],
        weights: NDArray[np.floating[Any]],
        bias: NDArray[np.floating[Any]],
        *,
        patterns: Patterns | None = None,
        meta: dict[str, Any] | None = None,
    ) -> ReactionModel:
        n = int(mean.shape[0])
        shapes_ok = (
            mean.ndim == 1
            and scale.shape == mean.shape
            and weights.shape == (n, len(CLASSES))
            and bias.shape == (len(CLASSES),)
            and (n - len(HAND_FEATURES)) > 0
            and (n - len(HAND_FEATURES)) % 2 == 0
        )
        if not shapes_ok:
            raise ArtefactMismatchError(
                f"reaction model arrays do not fit: expected mean and scale [n], weights "
                f"[n, {len(CLASSES)}], bias [{len(CLASSES)}] with n = {len(HAND_FEATURES)} + "
                f"2 x embedding dim; got mean {mean.shape}, scale {scale.shape}, "
                f"weights {weights.shape}, bias {bias.shape}"
            )
        return cls(
            mean=np.asarray(mean, dtype=np.float64),
            scale=np.asarray(scale, dtype=np.float64),
            weights=np.asarray(weights, dtype=np.float64),
            bias=np.asarray(bias, dtype=np.float64),
            patterns=patterns or Patterns.load(),
            meta=dict(meta or {}),
        )

    def save(self, directory: Path, meta: dict[str, Any]) -> None:
        """Write the artefact (weights as float32; the meta JSON with the feature spec)."""
        directory.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(
            directory / WEIGHTS_FILE,
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
            weights=self.weights.astype(np.float32),
            bias=self.bias.astype(np.float32),
        )
        full = {**meta, "feature_spec": FEATURE_SPEC}
        (directory / META_FILE).write_text(
            json.dumps(full, indent=1, ensure_ascii=False, sort_keys=True) + "\n",
            encoding="utf-8",
        )

    def _check(self, follow_up: FollowUp) -> None:
        d = self.embedding_dim
        vectors = [("message_vec", follow_up.message_vec), ("reply_vec", follow_up.reply_vec)]
        if follow_up.previous_vec is not None:
            vectors.append(("previous_vec", follow_up.previous_vec))
        for name, vec in vectors:
            if np.shape(vec) != (d,):
                raise ArtefactMismatchError(
                    f"{name}: expected a [{d}] embedding (the artefact's encoder), "
                    f"got shape {np.shape(vec)}"
                )

    def probabilities(self, follow_ups: Sequence[FollowUp]) -> NDArray[np.float64]:
        """P(reaction) per follow-up, one row each, columns in `CLASSES` order."""
        if not follow_ups:
            return np.zeros((0, len(CLASSES)))
        for f in follow_ups:
            self._check(f)
        rows = np.stack([features(f, self.patterns) for f in follow_ups])
        logits = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probs: NDArray[np.float64] = exp / exp.sum(axis=1, keepdims=True)
        return probs

    def predict(self, follow_up: FollowUp) -> tuple[Reaction, float]:
        """The most probable reaction and its probability."""
        probs = self.probabilities([follow_up])[0]
        best = int(np.argmax(probs))
        return CLASSES[best], float(probs[best])
