"""The similarity DESIGN.md defines for implicit reactions, so generated follow-ups land
in the band they are meant to illustrate (repeat > 0.80, rephrase 0.45-0.80, topic
switch < 0.15). The stream has its own implementation; this one only steers the
generator and never feeds a metric.
"""

from __future__ import annotations

import unicodedata
from difflib import SequenceMatcher


def normalise(text: str) -> str:
    return "".join(
        c
        for c in text.lower()
        if not unicodedata.category(c).startswith(("P", "Z", "S")) and not c.isspace()
    )


def similarity(a: str, b: str) -> float:
    """max(sequence-match ratio, character-set Jaccard) after lower-casing, no punctuation."""
    x, y = normalise(a), normalise(b)
    if not x and not y:
        return 1.0
    ratio = SequenceMatcher(None, x, y, autojunk=False).ratio()
    sx, sy = set(x), set(y)
    jaccard = len(sx & sy) / len(sx | sy) if sx | sy else 0.0
    return max(ratio, jaccard)
