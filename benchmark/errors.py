"""One exception base for the benchmark package; messages say what was expected and
what came, and never quote a record's text (it may hold user data)."""

from __future__ import annotations


class BenchmarkError(Exception):
    """Base of every error raised by uxmon's benchmark package."""


class SourceError(BenchmarkError):
    """A data source that cannot be read: missing path, unknown config, unreadable file."""


class RecordError(BenchmarkError, ValueError):
    """One record does not fit the schema; names the record's cid and the field."""

    def __init__(self, cid: str | None, field: str, problem: str) -> None:
        who = f"cid {cid!r}" if cid is not None else "a record without a cid"
        super().__init__(f"{who}: field {field!r}: {problem}")
        self.cid = cid
        self.field = field
        self.problem = problem
