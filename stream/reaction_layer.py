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
from pathlib import Path
from typing import Any

from scorer.encoder import E5Encoder
from stream.reaction_model import (
    EMBEDDING_PREFIX,
    META_FILE,
    TRAIN_HINT,
    WEIGHTS_FILE,
    ArtefactMismatchError,
    ReactionModel,
    ReactionModelError,
    Vector,
    default_dir,
)

log = logging.getLogger(__name__)


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

    def embed(self, texts: Sequence[str]) -> dict[str, Vector]:
        """text -> embedding, all in one encoder batch, the way the model was trained."""
        if not texts:
            return {}
        rows = self.encoder.encode(texts, EMBEDDING_PREFIX)
        return dict(zip(texts, rows, strict=True))
