"""The uxmon streaming service: events, conversation state, scoring, metrics."""

__version__ = "0.1.0"
