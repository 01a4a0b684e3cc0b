"""Implicit reactions: what the user's next message says about the reply before it.

Rules, thresholds and their priority are DESIGN.md's ("Implicit reactions"):

1. complaint  - at most 300 chars and matching a complaint pattern
2. skip_read  - reply longer than 50 chars, answered in under 30 s and under 0.15 s a char
3. dismiss    - at most 20 chars and, without punctuation, in the closed dismiss set
4. repeat     - similarity to the previous user message above 0.80
   satisfied  - a continuation (see below)
5. rephrase   - similarity 0.45 to 0.80, or a rephrase marker (see below)
6. abandon    - similarity below 0.15 (a topic switch)
7. satisfied  - anything else

`no_follow_up` (no next message before the session times out) is decided by the caller.

Decisions the design leaves open, made here:

- Continuations. Read literally, the rules call "谢谢！能再展开讲讲吗？" or "Thanks! And 20
  kg?" a topic switch or a rephrase: they share few characters with the question, or share
  its template. An acknowledgement, a request to go deeper, or a reference back to the
  answer (the continuation patterns) says the user took the answer and moved on with it,
  so such a message is `satisfied`. The check sits after `repeat`: a near-verbatim
  question means the answer missed, whatever politeness wraps it.
- Rephrase markers. Real rewording ("我的意思是……", "In other words, ...") often shares
  too little with the question to reach 0.45; a user who says they are rephrasing is.
- Units of similarity. Character-set Jaccard suits Chinese, where a character carries
  meaning, but two unrelated English sentences share most of the alphabet and score about
  0.6. So CJK text is compared character by character and other scripts word by word;
  for Chinese this is exactly the design's definition.
- Lengths (300, 20, 50) count the message as sent, minus surrounding whitespace.

Pattern sets are data (stream/patterns/<kind>.<lang>.txt, format described at the top of
each file) so they can grow without code changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from difflib import SequenceMatcher
from enum import StrEnum
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import get_args

from stream.events import FeedbackEvent

COMPLAINT_MAX_CHARS = 300
SKIP_READ_REPLY_OVER_CHARS = 50
SKIP_READ_GAP_UNDER_S = 30.0
SKIP_READ_S_PER_CHAR = 0.15
DISMISS_MAX_CHARS = 20
REPEAT_ABOVE = 0.80
REPHRASE_FROM = 0.45
ABANDON_BELOW = 0.15
# SequenceMatcher is quadratic in the worst case; a pasted document must not stall a worker.
# Two messages whose first units agree this far are alike whatever follows.
MAX_COMPARED_UNITS = 1000

PATTERN_KINDS = ("complaint", "dismiss", "continuation", "rephrase")
_REGEX_PREFIX = "re:"


class Reaction(StrEnum):
    COMPLAINT = "complaint"
    SKIP_READ = "skip_read"
    DISMISS = "dismiss"
    REPEAT = "repeat"
    REPHRASE = "rephrase"
    ABANDON = "abandon"
    SATISFIED = "satisfied"
    NO_FOLLOW_UP = "no_follow_up"


# Every reaction but `satisfied` and `no_follow_up` says the reply did not serve the user.
# skip_read counts: a reply nobody reads did not serve them, and length is the commonest
# failure (UXBench: Verbosity/Redundancy, 34% of disliked turns). abandon counts: with the
# continuation rule, what is left below 0.15 is a switch with no sign the answer was taken.
DISSATISFIED = frozenset(
    {
        Reaction.COMPLAINT,
        Reaction.SKIP_READ,
        Reaction.DISMISS,
        Reaction.REPEAT,
        Reaction.REPHRASE,
        Reaction.ABANDON,
    }
)
# Explicit feedback. `stop` is left out: users stop a reply that already told them enough
# as often as one going wrong; copy and share are approval.
FEEDBACK_KINDS: frozenset[str] = frozenset(get_args(FeedbackEvent.model_fields["kind"].annotation))
DISSATISFIED_FEEDBACK = frozenset({"thumbs_down", "regenerate"})


class PatternError(ValueError):
    """A pattern directory is incomplete or holds a line that is not a valid pattern."""


def is_dissatisfied(reaction: Reaction) -> bool:
    return reaction in DISSATISFIED


def feedback_is_dissatisfied(kind: str) -> bool:
    """True for thumbs_down and regenerate; raise for a kind the event schema does not know."""
    if kind not in FEEDBACK_KINDS:
        raise ValueError(f"unknown feedback kind; expected one of {sorted(FEEDBACK_KINDS)}")
    return kind in DISSATISFIED_FEEDBACK


def pattern_form(text: str) -> str:
    """What complaint and continuation patterns are searched in.

    NFKC folds full-width letters and punctuation to ASCII (？ is ?, ， is ,), so a
    pattern written either way matches both; curly apostrophes become straight ones.
    """
    folded = unicodedata.normalize("NFKC", text).lower().replace("\u2019", "'")
    return " ".join(folded.split())


def content_units(text: str) -> list[str]:
    """The message's units of meaning: each CJK character, each word of other scripts.

    Lower-cased and NFKC-folded; punctuation, symbols (emoji too) and spaces are dropped.
    """
    units: list[str] = []
    word: list[str] = []
    for char in unicodedata.normalize("NFKC", text).lower():
        if _is_cjk(char):
            if word:
                units.append("".join(word))
                word = []
            units.append(char)
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            word.append(char)
        elif word:
            units.append("".join(word))
            word = []
    if word:
        units.append("".join(word))
    return units


def _is_cjk(char: str) -> bool:
    # Scripts written without spaces between words: Han, kana. Hangul uses spaces.
    code = ord(char)
    return (
        0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x3040 <= code <= 0x30FF
        or 0x20000 <= code <= 0x3FFFF
    )


def similarity(a: str, b: str) -> float:
    """max(sequence-match ratio, unit-set Jaccard) over content units; 0.0 if one is empty."""
    return _unit_similarity(content_units(a), content_units(b))


def _unit_similarity(x: list[str], y: list[str]) -> float:
    if not x or not y:
        return 0.0
    x, y = x[:MAX_COMPARED_UNITS], y[:MAX_COMPARED_UNITS]
    sx, sy = set(x), set(y)
    jaccard = len(sx & sy) / len(sx | sy)
    matcher = SequenceMatcher(None, x, y, autojunk=False)
    # ratio() is the expensive part; skip it when its cheap upper bound cannot win.
    if matcher.real_quick_ratio() <= jaccard or matcher.quick_ratio() <= jaccard:
        return jaccard
    return max(matcher.ratio(), jaccard)


def skipped_reading(reply: str, gap_s: float) -> bool:
    """The reply was too long to have been read in the time the user took to answer."""
    chars = len(reply.strip())
    return (
        chars > SKIP_READ_REPLY_OVER_CHARS
        and gap_s < SKIP_READ_GAP_UNDER_S
        and gap_s < SKIP_READ_S_PER_CHAR * chars
    )


@dataclass(frozen=True, slots=True)
class Patterns:
    """Compiled pattern sets; all languages' files of a kind apply to every message."""

    complaint: tuple[re.Pattern[str], ...]
    dismiss: tuple[re.Pattern[str], ...]
    continuation: tuple[re.Pattern[str], ...]
    rephrase: tuple[re.Pattern[str], ...]

    def __repr__(self) -> str:
        sizes = ", ".join(f"{kind}={len(getattr(self, kind))}" for kind in PATTERN_KINDS)
        return f"Patterns({sizes})"

    @classmethod
    def load(cls, directory: Path | None = None) -> Patterns:
        """Read `<kind>.<lang>.txt` for each kind from `directory` (default: bundled)."""
        root: Traversable = (
            resources.files("stream") / "patterns" if directory is None else directory
        )
        if not root.is_dir():
            raise PatternError(f"pattern directory {root!s} does not exist")
        files = sorted((f for f in root.iterdir() if f.name.endswith(".txt")), key=lambda f: f.name)
        sets: dict[str, list[re.Pattern[str]]] = {kind: [] for kind in PATTERN_KINDS}
        for file in files:
            kind = file.name.split(".", 1)[0]
            if kind not in sets:
                raise PatternError(
                    f"{file!s}: unknown pattern kind {kind!r}; "
                    f"expected <kind>.<lang>.txt with kind one of {list(PATTERN_KINDS)}"
                )
            sets[kind].extend(_compile_file(file, whole=kind == "dismiss"))
        for kind, patterns in sets.items():
            if not patterns:
                raise PatternError(f"no {kind} patterns in {root!s} ({kind}.*.txt)")
        return cls(
            complaint=tuple(sets["complaint"]),
            dismiss=tuple(sets["dismiss"]),
            continuation=tuple(sets["continuation"]),
            rephrase=tuple(sets["rephrase"]),
        )

    @classmethod
    def own(cls, directory: Path | None) -> Patterns | None:
        """The patterns a team wrote itself: those of `directory` the bundled sets lack
        (None when no directory is configured). Kinds may be empty."""
        if directory is None:
            return None
        theirs, bundled = cls.load(directory), cls.load()

        def new(kind: str) -> tuple[re.Pattern[str], ...]:
            known = {(p.pattern, p.flags) for p in getattr(bundled, kind)}
            return tuple(p for p in getattr(theirs, kind) if (p.pattern, p.flags) not in known)

        return cls(*(new(kind) for kind in PATTERN_KINDS))

    def fires(self, text: str) -> bool:
        """True when one of these patterns decides or shapes `classify`'s verdict on the
        message: a complaint (within its length limit), a dismissal (within its limit), a
        continuation or a rephrase marker."""
        stripped = text.strip()
        return (
            (len(stripped) <= COMPLAINT_MAX_CHARS and self.is_complaint(stripped))
            or (len(stripped) <= DISMISS_MAX_CHARS and self.is_dismissal(stripped))
            or self.is_continuation(stripped)
            or self.is_rephrase(stripped)
        )

    def is_complaint(self, text: str) -> bool:
        return _search(self.complaint, pattern_form(text))

    def is_dismissal(self, text: str) -> bool:
        # The dismiss set is closed: the whole message, minus punctuation, must be in it.
        bare = "".join(content_units(text))
        return bool(bare) and any(p.fullmatch(bare) for p in self.dismiss)

    def is_continuation(self, text: str) -> bool:
        return _search(self.continuation, pattern_form(text))

    def is_rephrase(self, text: str) -> bool:
        return _search(self.rephrase, pattern_form(text))


def _search(patterns: Iterable[re.Pattern[str]], text: str) -> bool:
    return any(p.search(text) for p in patterns)


def _compile_file(file: Traversable, *, whole: bool) -> Iterator[re.Pattern[str]]:
    for number, raw in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            yield _compile_line(line, whole=whole)
        except PatternError as exc:
            raise PatternError(f"{file!s}:{number}: {exc}") from None


def _compile_line(line: str, *, whole: bool) -> re.Pattern[str]:
    if line.startswith(_REGEX_PREFIX):
        source = unicodedata.normalize("NFKC", line[len(_REGEX_PREFIX) :].strip())
        if not source:
            raise PatternError("empty regular expression after 're:'")
        try:
            compiled = re.compile(source, re.IGNORECASE)
        except re.error as exc:
            raise PatternError(
                f"invalid regular expression: {exc.msg} at position {exc.pos}"
            ) from None
        if compiled.search(""):
            raise PatternError("regular expression matches the empty message")
        return compiled
    if whole:
        # Dismiss entries are compared with the message stripped of punctuation and spaces.
        literal = "".join(content_units(line))
        if not literal:
            raise PatternError("literal has nothing left once punctuation is removed")
        return re.compile(re.escape(literal))
    literal = pattern_form(line)
    # A literal edged by an ASCII letter or digit matches only at a word edge there, so
    # "no" does not fire inside "know"; CJK literals match anywhere.
    head = r"(?<![a-z0-9])" if _ascii_alnum(literal[0]) else ""
    tail = r"(?![a-z0-9])" if _ascii_alnum(literal[-1]) else ""
    return re.compile(head + re.escape(literal) + tail)


def _ascii_alnum(char: str) -> bool:
    return char.isascii() and char.isalnum()


def classify(
    previous_user: str | None,
    reply: str,
    reply_ts: datetime,
    next_user: str,
    next_ts: datetime,
    patterns: Patterns,
) -> Reaction:
    """The user's reaction to `reply`, read from their next message and its timing.

    `previous_user` is the user message the reply answered (None when the assistant spoke
    first); repeat, rephrase and abandon are measured against it.
    """
    text = next_user.strip()
    if len(text) <= COMPLAINT_MAX_CHARS and patterns.is_complaint(text):
        return Reaction.COMPLAINT
    if skipped_reading(reply, (next_ts - reply_ts).total_seconds()):
        return Reaction.SKIP_READ
    if len(text) <= DISMISS_MAX_CHARS and patterns.is_dismissal(text):
        return Reaction.DISMISS
    units = content_units(text)
    previous = content_units(previous_user) if previous_user is not None else []
    if not units or not previous:
        # Nothing to compare (an emoji, or no earlier question): no evidence against the reply.
        return Reaction.SATISFIED
    score = _unit_similarity(previous, units)
    if score > REPEAT_ABOVE:
        return Reaction.REPEAT
    if patterns.is_continuation(text):
        return Reaction.SATISFIED
    if score >= REPHRASE_FROM or patterns.is_rephrase(text):
        return Reaction.REPHRASE
    if score < ABANDON_BELOW:
        return Reaction.ABANDON
    return Reaction.SATISFIED
