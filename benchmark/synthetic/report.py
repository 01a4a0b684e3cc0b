"""Human-readable summary of a generated Task-1 corpus."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from statistics import mean, median
from typing import Any


def dimension(record: dict[str, Any]) -> str:
    return str(record.get("failure_dimension") or record.get("success_dimension"))


def distinct_reply_ratio(records: Sequence[dict[str, Any]]) -> float:
    return len({r["agent_response_full"] for r in records}) / max(1, len(records))


def _quantiles(values: list[int]) -> str:
    values = sorted(values)
    if not values:
        return "-"
    q = lambda p: values[min(len(values) - 1, int(p * len(values)))]  # noqa: E731
    return f"mean {mean(values):.0f}  median {median(values):.0f}  p10 {q(0.1)}  p90 {q(0.9)}"


def _table(title: str, counts: Counter[tuple[str, str]]) -> list[str]:
    keys = sorted({k for k, _ in counts})
    lines = [f"  {title}:"]
    for k in keys:
        good, bad = counts[(k, "liked")], counts[(k, "disliked")]
        lines.append(f"    {k:<42} liked {good:>5}  disliked {bad:>5}")
    return lines


def summary(name: str, records: Sequence[dict[str, Any]]) -> str:
    label = lambda r: "liked" if r["ground_truth"] == 1 else "disliked"  # noqa: E731
    lines = [f"{name}: {len(records)} records"]
    by_label = Counter(label(r) for r in records)
    lines.append(f"  labels: liked {by_label['liked']}  disliked {by_label['disliked']}")
    lines += _table("scenario", Counter((str(r["scenario"]), label(r)) for r in records))
    lines += _table("language", Counter((r["synthetic_meta"]["lang"], label(r)) for r in records))
    lines += _table("kind", Counter((r["synthetic_meta"]["kind"], label(r)) for r in records))
    lines += _table("history", Counter((r["synthetic_meta"]["history"], label(r)) for r in records))
    lines.append("  failure dimensions:")
    bad = [r for r in records if r["ground_truth"] == -1]
    for dim, n in Counter(dimension(r) for r in bad).most_common():
        lines.append(f"    {dim:<42} {n:>5}  ({n / max(1, len(bad)):.1%})")
    lines.append("  success dimensions:")
    for dim, n in Counter(dimension(r) for r in records if r["ground_truth"] == 1).most_common():
        lines.append(f"    {dim:<42} {n:>5}")
    lines.append(
        f"  difficulty: {dict(sorted(Counter(str(r.get('difficulty')) for r in records).items()))}"
    )
    lines.append(
        f"  distinct replies: {distinct_reply_ratio(records):.3f}   "
        f"distinct queries: "
        f"{len({str(r['source_query']) for r in records}) / max(1, len(records)):.3f}"
    )
    for lab in ("liked", "disliked"):
        lengths = [len(str(r["agent_response_full"])) for r in records if label(r) == lab]
        lines.append(f"  reply chars ({lab}): {_quantiles(lengths)}")
    return "\n".join(lines)
