"""UXBench's taxonomy (DESIGN.md): its scenarios and dimensions as closed sets."""

from __future__ import annotations

from typing import Final

SCENARIOS: Final = (
    "Information & Knowledge Seeking",
    "Personal Assistance & Emotional Support",
    "Creative Content & Entertainment",
    "Casual Chat & Companionship",
    "Learning & Educational Support",
    "Productivity & Office Efficiency",
    "Product & Service Inquiry",
    "Other",
)
INFO, PERSONAL, CREATIVE, CHAT, LEARNING, OFFICE, PRODUCT, OTHER = SCENARIOS

VERBOSITY: Final = "Verbosity/Redundancy"
INCOMPLETE: Final = "Task Incompleteness"
INTENT: Final = "Intent Misunderstanding"
FACTUAL: Final = "Factual Error"
RELIABILITY: Final = "Information Reliability"
FORMAT: Final = "Instruction/Format Failure"
UNINFORMATIVE: Final = "Insufficiently Informative"
TONE: Final = "Emotional Tone Mismatch"
REFUSAL: Final = "Safety/Refusal"
SYSTEM: Final = "System/Technical Error"

# Shares of disliked turns per failure dimension in UXBench Task 1 (sum 1.0).
FAILURE_SHARES: Final[dict[str, float]] = {
    VERBOSITY: 0.343,
    INCOMPLETE: 0.248,
    INTENT: 0.115,
    FACTUAL: 0.110,
    RELIABILITY: 0.101,
    FORMAT: 0.028,
    UNINFORMATIVE: 0.022,
    TONE: 0.020,
    REFUSAL: 0.009,
    SYSTEM: 0.004,
}
FAILURE_DIMENSIONS: Final = tuple(FAILURE_SHARES)

ACCURATE: Final = "Accurate Answering"
DEPTH: Final = "Knowledge Depth"
DETAIL: Final = "Comprehensive Detail"
SOLVING: Final = "Problem Solving"
GUIDANCE: Final = "Practical Guidance"
CREATIVE_GEN: Final = "Creative Generation"
COMPLETION: Final = "Task Completion"
EMPATHY: Final = "Empathetic Support"
SUCCESS_DIMENSIONS: Final = (
    ACCURATE,
    DEPTH,
    DETAIL,
    SOLVING,
    GUIDANCE,
    CREATIVE_GEN,
    COMPLETION,
    EMPATHY,
)

DIFFICULTIES: Final = ("easy", "medium", "hard")


def failure_quotas(total: int, minimum: int) -> dict[str, int]:
    """Split `total` disliked records over the dimensions in UXBench's proportions.

    Rare dimensions are raised to `minimum` so a classifier sees enough of each; the
    surplus is taken from the two largest dimensions, which can afford it.
    """
    minimum = min(minimum, total // len(FAILURE_SHARES))  # a tiny corpus cannot afford the floor
    quotas = {dim: max(minimum, round(share * total)) for dim, share in FAILURE_SHARES.items()}
    surplus = sum(quotas.values()) - total
    big = sorted(FAILURE_SHARES, key=FAILURE_SHARES.__getitem__, reverse=True)[:2]
    while surplus != 0:
        for dim in big:
            if surplus == 0:
                break
            step = 1 if surplus > 0 else -1
            quotas[dim] -= step
            surplus -= step
    return quotas
