"""The learned reaction layer in the worker: the model (stream/reaction_model.py) and the
encoder that feeds it, loaded like a scorer.

The encoder is the UX-Judge's own when one is configured (the worker loads it anyway: one
copy in memory, one set of torch threads); without one the layer makes its own from the
same settings. The artefact is checked at construction (it exists) and at `load()` (it
was trained for this encoder and this feature spec); either failure is a
`ReactionModelError`, which the CLI reports in one line.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorer.encoder import E5Encoder
from scorer.ux_judge import reply_input_ids
from stream.conversation import Learned
from stream.reaction_model import (
    EMBEDDING_PREFIX,
    META_FILE,
    TRAIN_HINT,
    WEIGHTS_FILE,
    ArtefactMismatchError,
    ReactionModel,
    ReactionModelError,
    default_dir,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FollowUpTexts:
    """What a batch's follow-ups read, distinct, in fold order: the users' messages (the
    follow-ups and the messages the replies answered) and the replies."""

    messages: list[str]
    replies: list[str]


class ReactionLayer:
    """`load()` once (after or with the scorers), then `model` and `embed` per batch."""

    def __init__(self, directory: Path | None, encoder: E5Encoder) -> None:
        self.directory = directory or default_dir()
        for name in (WEIGHTS_FILE, META_FILE):
            if not (self.directory / name).is_file():
                raise ReactionModelError(
                    f"reaction model artefact {self.directory / name} is missing "
                    f"(UXMON_REACTION_MODEL); expected {WEIGHTS_FILE} and {META_FILE} there "
                    f"(train them with `{TRAIN_HINT}`), or set UXMON_REACTION_MODEL= (empty) "
                    "for the rules alone"
                )
        self.encoder = encoder
        self.model: ReactionModel | None = None  # set by load()

    @classmethod
    def for_scorers(
        cls,
        directory: Path | None,
        scorers: Sequence[Any],
        *,
        cache_dir: Path | None = None,
        runtime: Any = None,
    ) -> ReactionLayer:
        """The layer on the first scorer's E5 encoder (the UX-Judge's), or a new one."""
        encoder = next(
            (s.encoder for s in scorers if isinstance(getattr(s, "encoder", None), E5Encoder)),
            None,
        )
        return cls(directory, encoder or E5Encoder(cache_dir=cache_dir, runtime=runtime))

    @property
    def version(self) -> str:
        return self.model.version if self.model is not None else "unloaded"

    def load(self) -> None:
        if self.model is not None:
            return
        self.encoder.load()  # a no-op when the UX-Judge loaded it
        model = ReactionModel.load(self.directory, encoder_fingerprint=self.encoder.fingerprint)
        if model.embedding_dim != self.encoder.dim:
            raise ArtefactMismatchError(
                f"reaction model in {self.directory} reads {model.embedding_dim}-dim "
                f"embeddings; the encoder makes {self.encoder.dim}"
            )
        self.model = model
        log.info("reaction model %s loaded from %s", model.version, self.directory)

    def embed(self, texts: FollowUpTexts) -> Learned:
        """The model with the batch's embeddings, made the way it was trained: messages
        with the "query: " prefix, replies as the UX-Judge embeds them (so a reply it has
        scored is a cache hit). Call after `load()`."""
        if self.model is None:
            raise ReactionModelError("reaction layer used before load(); call load() once first")
        messages = self.encoder.encode(texts.messages, EMBEDDING_PREFIX)
        replies = self.encoder.embed_ids(reply_input_ids(texts.replies, self.encoder))
        return Learned(
            self.model,
            dict(zip(texts.messages, messages, strict=True)),
            dict(zip(texts.replies, replies, strict=True)),
        )
