"""Assemble Task-1 records (UXBench UX-Judge schema) from situations.

Every disliked record gets a liked twin drawn from the same kind of conversation with
the same kind of request (and, some of the time, the very same request), and both go
through the same history, framing and wrapping steps with the same odds. Whatever
separates the labels is therefore the reply's relation to the request, not the shape
of the request or the look of the reply.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from random import Random
from typing import Any

from benchmark import taxonomy as t
from benchmark.synthetic import kinds, style
from benchmark.synthetic.complaints import complaint
from benchmark.synthetic.situation import Lang, Situation, Split

ZH_SHARE = 0.8
TWIN_SAME_REQUEST = 0.3  # share of liked twins that answer the very same request
AGENTIC_SHARE = 0.08  # replies stored in the agentic-search JSON format

_UNFRAMED = frozenset({t.SYSTEM, t.REFUSAL, t.TONE})
# Failures a user complains about and a good next reply can plainly fix.
_FIXABLE = (
    t.INCOMPLETE,
    t.INTENT,
    t.FACTUAL,
    t.RELIABILITY,
    t.UNINFORMATIVE,
    t.SYSTEM,
    t.REFUSAL,
    t.TONE,
)
_EASY = frozenset({t.SYSTEM, t.REFUSAL, t.UNINFORMATIVE})
_HARD = frozenset({t.INTENT, t.FACTUAL, t.RELIABILITY})


@dataclass(frozen=True, slots=True)
class Drawn:
    """One record before serialisation: who said what, and what it is labelled."""

    situation: Situation
    history: tuple[tuple[str, str], ...]
    query: str
    reply: str
    label: int  # 1 liked / -1 disliked
    dimension: str
    mode: str  # none | context | followup | complaint
    ask: str


def draw_pairs(split: Split, per_label: int, seed: int, min_per_dim: int) -> list[Drawn]:
    """`per_label` disliked records in UXBench's failure proportions, each with a liked twin."""
    rng = Random(seed)
    quotas = t.failure_quotas(per_label, min_per_dim)
    dims = [dim for dim, n in quotas.items() for _ in range(n)]
    rng.shuffle(dims)
    out: list[Drawn] = []
    for dim in dims:
        lang: Lang = "zh" if rng.random() < ZH_SHARE else "en"
        kind = kinds.for_failure(rng, dim, lang)
        asks = kind.failures[dim]
        ask_kind = rng.choices(list(asks), weights=list(asks.values()), k=1)[0]
        sit = kind.build(rng, lang, split, kind.ask(rng, ask_kind))
        mode = _mode(rng, sit)
        out.append(_finish(rng, sit, split, mode, -1, dim, ask_kind))
        twin = (
            sit
            if rng.random() < TWIN_SAME_REQUEST
            else kind.build(rng, lang, split, kind.ask(rng, ask_kind))
        )
        twin_mode = mode if twin is sit else _mode(rng, twin)
        out.append(_finish(rng, twin, split, twin_mode, 1, twin.success, ask_kind))
    rng.shuffle(out)
    return out


def _mode(rng: Random, sit: Situation) -> str:
    roll = rng.random()
    if roll < 0.15:
        return "followup" if sit.followup and sit.base_reply is not None else "none"
    if roll < 0.23:
        return "complaint" if any(d in _FIXABLE for d in sit.bad) else "none"
    if roll < 0.5:
        return "context"
    return "none"


def _finish(
    rng: Random, sit: Situation, split: Split, mode: str, label: int, dim: str, ask: str
) -> Drawn:
    lang = sit.lang
    history: list[tuple[str, str]] = []
    query = sit.query
    if mode == "context":
        for _ in range(rng.choice((1, 1, 2))):
            other = kinds.any_kind(rng, lang)
            prior = other.build(rng, lang, split, other.ask(rng, "plain"))
            history += [
                ("user", prior.query),
                ("assistant", style.frame(lang, rng, prior.good(), prior.register)),
            ]
    elif mode == "followup" and sit.base_reply is not None:
        history = [
            ("user", sit.base_query),
            ("assistant", style.frame(lang, rng, sit.base_reply(), sit.register)),
        ]
        query = sit.followup
    elif mode == "complaint":
        failed = rng.choice([d for d in sit.bad if d in _FIXABLE])
        history = [("user", sit.query), ("assistant", sit.bad[failed]())]
        query = complaint(rng, lang, failed)
    if mode in ("none", "context") and rng.random() < 0.35:
        query = voice(rng, lang, query)
    reply = sit.good() if label == 1 else sit.bad[dim]()
    if dim not in _UNFRAMED:
        reply = style.frame(lang, rng, reply, sit.register)
    if mode == "complaint" and dim not in _UNFRAMED and rng.random() < (0.7 if label == 1 else 0.5):
        reply = rng.choice(style.APOLOGIES[lang]) + reply
    return Drawn(sit, tuple(history), query, reply, label, dim, mode, ask)


_VOICE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "请问",
        "问一下，",
        "想问下",
        "hello，",
        "在吗？",
        "帮我看看：",
        "小助手，",
        "急！",
        "那个，",
    ),
    "en": ("Hey, ", "Quick question: ", "Hi! ", "Hello, ", "Um, ", "Help: "),
}


def voice(rng: Random, lang: Lang, query: str) -> str:
    """The same request in a user's own voice: a greeting, a filler, dropped punctuation.

    Applied to liked and disliked records alike; it multiplies surface forms so that a
    classifier cannot key on exact query strings.
    """
    if rng.random() < 0.3:
        query = query.rstrip("？?")
    prefix = rng.choice(_VOICE[lang])
    if lang == "en" and prefix.endswith((", ", ": ")) and query.split(" ", 1)[0] != "I":
        query = query[:1].lower() + query[1:]
    return prefix + query


def difficulty(rng: Random, d: Drawn) -> str:
    if d.label == -1:
        level = 0 if d.dimension in _EASY else 2 if d.dimension in _HARD else 1
    else:
        level = 0 if len(d.reply) < 60 else 1
    if d.history and rng.random() < 0.4:
        level += 1
    if rng.random() < 0.2:
        level += rng.choice((-1, 1))
    return t.DIFFICULTIES[max(0, min(2, level))]


def agentic(rng: Random, text: str) -> str:
    """Wrap a reply the way an agentic-search client stores it: text split over content[].msg."""
    parts: list[str] = []
    rest = text
    while rest:
        cut = rest.find("\n", max(1, len(rest) // rng.randint(2, 4)))
        cut = len(rest) if cut < 0 else cut + 1
        parts.append(rest[:cut])
        rest = rest[cut:]
    content: list[dict[str, Any]] = [
        {
            "type": "search",
            "docs": [
                {
                    "title": f"reference {i + 1}",
                    "url": f"https://example.org/doc/{rng.getrandbits(24):06x}",
                }
                for i in range(rng.randint(1, 3))
            ],
        }
    ]
    content += [{"type": "text", "msg": p} for p in parts]
    return json.dumps({"agent": "search", "content": content}, ensure_ascii=False)


def to_record(rng: Random, d: Drawn, cid: str, start: datetime) -> dict[str, Any]:
    """Serialise in the UXBench Task-1 schema, plus a `synthetic_meta` block for audits."""
    clock = start
    history = []
    for i, (role, text) in enumerate(d.history):
        history.append(
            {
                "turn_index": i,
                "role": role,
                "message": text,
                "create_time": clock.strftime("%Y-%m-%d %H:%M:%S"),
                "length": len(text),
            }
        )
        clock += timedelta(seconds=rng.randint(8, 400))
    reply = agentic(rng, d.reply) if rng.random() < AGENTIC_SHARE else d.reply
    record: dict[str, Any] = {
        "cid": cid,
        "ground_truth": d.label,
        "source_query": {"turn_index": len(history), "message": d.query},
        "selected_history": history,
        "agent_response_full": reply,
        "scenario": d.situation.scenario,
        ("success_dimension" if d.label == 1 else "failure_dimension"): d.dimension,
        "difficulty": difficulty(rng, d),
        "synthetic_meta": {
            "lang": d.situation.lang,
            "kind": d.situation.kind,
            "topic": d.situation.topic,
            "ask": d.ask,
            "history": d.mode,
        },
    }
    return record


def build_task1(split: Split, per_label: int, seed: int, min_per_dim: int) -> list[dict[str, Any]]:
    rng = Random(seed + 1)
    drawn = draw_pairs(split, per_label, seed, min_per_dim)
    base = datetime(2025, 3, 1, 8, 0, 0)
    return [
        to_record(
            rng, d, f"syn-{split}-{i:05d}", base + timedelta(minutes=rng.randint(0, 60 * 24 * 200))
        )
        for i, d in enumerate(drawn)
    ]
