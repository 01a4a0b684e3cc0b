"""One exception base for the scorer package; messages say what was expected and what came."""


class ScorerError(Exception):
    """Base of every error raised by uxmon scorers."""


class UnknownScorerError(ScorerError, KeyError):
    """A scorer name that is not registered."""

    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"unknown scorer {name!r}; known scorers: {', '.join(sorted(known))}")
        self.name = name
        self.known = known

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class ModelMissingError(ScorerError):
    """Model weights are not installed; the message names what to install."""


class InvalidDialogueError(ScorerError, ValueError):
    """A dialogue that cannot be scored (the message never contains user text)."""
