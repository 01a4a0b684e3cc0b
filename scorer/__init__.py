"""Scorers: predict how a user experienced an assistant reply.

This package imports nothing else of uxmon's (see DESIGN.md, dependency rule).
"""

from scorer.errors import InvalidDialogueError, ModelMissingError, ScorerError, UnknownScorerError
from scorer.protocol import Scorer
from scorer.registry import create, known_scorers, register
from scorer.types import Dialogue, Score, Turn, Verdict

__all__ = [
    "Dialogue",
    "InvalidDialogueError",
    "ModelMissingError",
    "Score",
    "Scorer",
    "ScorerError",
    "Turn",
    "UnknownScorerError",
    "Verdict",
    "create",
    "known_scorers",
    "register",
]
