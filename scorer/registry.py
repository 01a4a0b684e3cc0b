"""Scorers by name. Unknown names fail with the list of known ones.

Besides registered names, `module.path:Factory` loads a scorer from any importable module,
so a team can plug in its own scorer without changing uxmon.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from scorer.errors import ScorerError, UnknownScorerError
from scorer.protocol import Scorer

ScorerFactory = Callable[..., Scorer]

_FACTORIES: dict[str, ScorerFactory] = {}
_BUILTINS = {
    "ux_judge": "scorer.ux_judge:UXJudge",
    "grm": "scorer.grm:GRM",
}


def register(name: str) -> Callable[[ScorerFactory], ScorerFactory]:
    def decorate(factory: ScorerFactory) -> ScorerFactory:
        _FACTORIES[name] = factory
        return factory

    return decorate


def known_scorers() -> list[str]:
    return sorted({*_FACTORIES, *_BUILTINS})


def _import(path: str) -> ScorerFactory:
    module_name, _, attr = path.partition(":")
    module = importlib.import_module(module_name)
    factory: ScorerFactory = getattr(module, attr)
    return factory


def create(name: str, **options: Any) -> Scorer:
    """Build (not load) the scorer called `name` with keyword `options`."""
    if name in _FACTORIES:
        return _FACTORIES[name](**options)
    if name in _BUILTINS:
        return _import(_BUILTINS[name])(**options)
    if ":" in name:
        try:
            factory = _import(name)
        except (ImportError, AttributeError) as exc:
            raise ScorerError(f"cannot load scorer {name!r}: {type(exc).__name__}: {exc}") from exc
        return factory(**options)
    raise UnknownScorerError(name, known_scorers())
