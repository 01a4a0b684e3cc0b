"""Synthetic live traffic as event-schema-v1 JSON lines (see stream/events.py).

Each conversation is 2-6 exchanges drawn from the same situations as the corpus; after
a reply the simulated user reacts the way real users do (complains, repeats, rephrases,
dismisses, switches topic, reads and follows up, or leaves), and sometimes clicks
feedback. Every user turn carries two metadata keys for tests:

- `synthetic_intent`: what the simulated user meant (complaint, repeat, ...).
- `synthetic_expected`: what DESIGN.md's reaction rules give for that message, its
  timing and the previous turns (complaint detection is assumed right by construction).

Assistant turns carry `synthetic_quality` (good/bad) and `synthetic_dimension`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from random import Random
from typing import Any

from benchmark import taxonomy as t
from benchmark.synthetic import kinds, style
from benchmark.synthetic.complaints import complaint
from benchmark.synthetic.similarity import similarity
from benchmark.synthetic.situation import Lang, Situation, Split

ASSISTANTS = ("web", "app", "api")
MODELS = ("m-2026.10", "m-2026.11")
FEEDBACK_KINDS = ("thumbs_up", "thumbs_down", "regenerate", "copy", "share", "stop")
DISMISS: dict[Lang, tuple[str, ...]] = {"zh": ("算了", "哦", "好吧"), "en": ("ok", "whatever")}
ZONES: dict[Lang, timezone] = {
    "zh": timezone(timedelta(hours=8)),
    "en": timezone(timedelta(hours=-5)),
}
LOCALES: dict[Lang, str] = {"zh": "zh-CN", "en": "en-US"}
WINDOW_START = datetime(2026, 11, 20, 1, 0, tzinfo=UTC)  # 09:00 in Beijing, 20:00 in New York
WINDOW = timedelta(hours=3)

_THANKS: dict[Lang, tuple[str, ...]] = {
    "zh": ("谢谢！", "明白了，", "好的，懂了。", "有用，谢谢。", "收到，"),
    "en": ("Thanks! ", "Got it. ", "That helps, thanks. ", "Perfect. "),
}
_REPHRASE_LEAD: dict[Lang, tuple[str, ...]] = {
    "zh": ("我的意思是，", "换个说法：", "我是想问", "就是问", "我问的是"),
    "en": ("I mean, ", "What I'm asking is: ", "Let me rephrase: ", "In other words, "),
}
_REPEAT_FORM: dict[Lang, tuple[str, ...]] = {
    "zh": ("{q}", "{q}？", "请问{q}", "{q}!!"),
    "en": ("{q}", "{q}?", "{q} please", "so, {q}"),
}


def expected_reaction(
    prev_user: str, text: str, reply: str, gap_s: float, intent: str, lang: Lang
) -> str:
    """DESIGN.md's reaction rules, in their priority order."""
    if intent == "complaint":
        return "complaint"
    if len(reply) > 50 and gap_s < 30 and gap_s < 0.15 * len(reply):
        return "skip_read"
    if len(text) <= 20 and text.strip().lower() in {d.lower() for d in DISMISS[lang]}:
        return "dismiss"
    sim = similarity(prev_user, text)
    if sim > 0.80:
        return "repeat"
    if sim >= 0.45:
        return "rephrase"
    if sim < 0.15:
        return "abandon"
    return "satisfied"


class _Conversation:
    def __init__(self, rng: Random, index: int) -> None:
        self.rng = rng
        self.lang: Lang = "zh" if rng.random() < 0.8 else "en"
        self.cid = f"conv-{rng.getrandbits(48):012x}"
        self.assistant = rng.choices(ASSISTANTS, weights=(5, 4, 1), k=1)[0]
        self.model = MODELS[0] if rng.random() < 0.4 else MODELS[1]
        self.clock = WINDOW_START + timedelta(seconds=rng.uniform(0, WINDOW.total_seconds()))
        self.events: list[dict[str, Any]] = []
        self.turns = 0
        self.index = index

    def _ts(self) -> str:
        return self.clock.astimezone(ZONES[self.lang]).isoformat(timespec="milliseconds")

    def situation(self, avoid: str = "") -> Situation:
        split: Split = "seed" if self.rng.random() < 0.5 else "heldout"
        for _ in range(6):
            kind = kinds.any_kind(self.rng, self.lang)
            ask = self.rng.choice(
                [a for a in ("plain", "brief", "detail", "count") if self._able(kind.name, a)]
            )
            sit = kind.build(self.rng, self.lang, split, kind.ask(self.rng, ask))
            if not avoid or similarity(avoid, sit.query) < 0.15:
                return sit
        return sit

    @staticmethod
    def _able(kind: str, ask: str) -> bool:
        asks = {a for by_ask in kinds.BY_NAME[kind].failures.values() for a in by_ask}
        return ask in asks or (ask == "plain" and not asks)

    def turn(self, role: str, text: str, sit: Situation, metadata: dict[str, str]) -> str:
        self.turns += 1
        turn_id = f"t{self.turns:02d}"
        self.events.append(
            {
                "schema_version": 1,
                "type": "turn",
                "conversation_id": self.cid,
                "turn_id": turn_id,
                "role": role,
                "text": text,
                "ts": self._ts(),
                "assistant_id": self.assistant,
                "model_version": self.model,
                "scenario": sit.scenario,
                "locale": LOCALES[self.lang],
                "metadata": metadata,
            }
        )
        return turn_id

    def feedback(self, turn_id: str, kind: str) -> None:
        self.events.append(
            {
                "schema_version": 1,
                "type": "feedback",
                "conversation_id": self.cid,
                "turn_id": turn_id,
                "kind": kind,
                "ts": self._ts(),
            }
        )

    def reply(self, sit: Situation) -> tuple[str, str, str]:
        """(text, quality, dimension) of one assistant answer to `sit`."""
        rng = self.rng
        if rng.random() < 0.35 and sit.bad:
            dims = list(sit.bad)
            dim = rng.choices(dims, weights=[t.FAILURE_SHARES[d] + 0.01 for d in dims], k=1)[0]
            text = sit.bad[dim]()
            if dim not in (t.SYSTEM, t.REFUSAL, t.TONE):
                text = style.frame(self.lang, rng, text, sit.register)
            return text, "bad", dim
        return style.frame(self.lang, rng, sit.good(), sit.register), "good", sit.success


def _rephrase(rng: Random, lang: Lang, query: str, prev: str) -> str | None:
    """The same request in other words: similarity to the last message in 0.45-0.80."""
    body = query.rstrip("？?。.!！")
    for _ in range(12):
        lead = rng.choice(_REPHRASE_LEAD[lang])
        lo = rng.uniform(0.0, 0.35)
        hi = rng.uniform(0.6, 1.0)
        piece = body[int(len(body) * lo) : max(int(len(body) * lo) + 2, int(len(body) * hi))]
        text = lead + piece + ("？" if lang == "zh" else "?")
        if 0.45 <= similarity(prev, text) <= 0.80:
            return text
    return None


_DEEPER: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "{t}那{f}还有什么要注意的吗？",
        "{t}关于{f}，能再展开讲讲吗？",
        "{t}{f}这块能举个例子吗？",
    ),
    "en": (
        "{t}Any other tips on {f}?",
        "{t}Can you expand on {f}?",
        "{t}Could you give an example for {f}?",
    ),
}


def _go_deeper(rng: Random, lang: Lang, noun: str) -> str:
    """A follow-up asking for more on the same answer (what the user means: satisfied)."""
    return rng.choice(_DEEPER[lang]).format(t=rng.choice(_THANKS[lang]), f=noun)


def _repeat(rng: Random, lang: Lang, query: str, prev: str) -> str:
    """The same request again, near-verbatim: similarity to the last message > 0.80."""
    for _ in range(6):
        text = rng.choice(_REPEAT_FORM[lang]).format(q=query.rstrip("？?"))
        if similarity(prev, text) > 0.80:
            return text
    return prev


def conversation(rng: Random, index: int) -> list[dict[str, Any]]:
    c = _Conversation(rng, index)
    sit = c.situation()
    user_text, intent = sit.query, "opening"
    expected = "none"
    deeper = False  # the user asked to go deeper into the last answer
    for exchange in range(rng.randint(2, 6)):
        c.turn("user", user_text, sit, {"synthetic_intent": intent, "synthetic_expected": expected})
        c.clock += timedelta(seconds=rng.uniform(1.5, 12))
        if deeper and sit.base_reply is not None:
            text, quality, dim = style.frame(c.lang, rng, sit.base_reply()), "good", sit.success
        else:
            text, quality, dim = c.reply(sit)
        deeper = False
        turn_id = c.turn(
            "assistant", text, sit, {"synthetic_quality": quality, "synthetic_dimension": dim}
        )
        last = exchange > 0 and rng.random() < 0.12  # every conversation has 2+ exchanges
        # feedback clicks, possibly a regenerated answer
        roll = rng.random()
        if quality == "bad" and roll < 0.12:
            c.clock += timedelta(seconds=rng.uniform(2, 10))
            c.feedback(turn_id, "regenerate")
            c.clock += timedelta(seconds=rng.uniform(2, 8))
            text, quality, dim = c.reply(sit)
            turn_id = c.turn(
                "assistant", text, sit, {"synthetic_quality": quality, "synthetic_dimension": dim}
            )
            roll = rng.random()
        clicks = (
            (("thumbs_down", 0.25), ("stop", 0.33), ("copy", 0.35))
            if quality == "bad"
            else (("thumbs_up", 0.2), ("copy", 0.35), ("share", 0.39))
        )
        for kind, upto in clicks:
            if roll < upto and (kind != "stop" or len(text) > 150):
                c.clock += timedelta(seconds=rng.uniform(2, 15))
                c.feedback(turn_id, kind)
                break
        if last:
            break
        # the user's next move
        lang = c.lang
        if quality == "bad":
            intent = rng.choices(
                ("complaint", "repeat", "rephrase", "dismiss", "abandon", "skip_read", "leave"),
                weights=(35, 12, 13, 12, 10, 8, 10),
                k=1,
            )[0]
        else:
            intent = rng.choices(
                ("satisfied", "abandon", "skip_read", "leave"), weights=(55, 22, 8, 15), k=1
            )[0]
        if intent == "skip_read" and len(text) <= 120:
            intent = "satisfied" if quality == "good" else "complaint"
        if intent == "leave" and exchange > 0:
            break
        if intent == "leave":
            intent = "abandon"
        prev = user_text
        if intent == "complaint":
            user_text = complaint(rng, lang, dim if quality == "bad" else t.INTENT)
            gap = rng.uniform(6, 60)
        elif intent == "repeat":
            user_text, gap = _repeat(rng, lang, sit.query, prev), rng.uniform(30, 90)
        elif intent == "rephrase":
            rephrased = _rephrase(rng, lang, sit.query, prev)
            if rephrased is None:  # nothing in the band: the user complains instead
                intent, rephrased = "complaint", complaint(rng, lang, dim)
            user_text, gap = rephrased, rng.uniform(30, 120)
        elif intent == "dismiss":
            user_text, gap = rng.choice(DISMISS[lang]), rng.uniform(30, 80)
        elif intent == "skip_read":
            sit = c.situation(avoid=prev) if rng.random() < 0.5 else sit
            user_text = sit.query if sit.query != prev else _repeat(rng, lang, sit.query, prev)
            gap = rng.uniform(3, min(28.0, 0.12 * len(text)))
        elif intent == "abandon":
            sit = c.situation(avoid=prev)
            user_text, gap = sit.query, rng.uniform(30, 200)
        elif sit.base_reply is not None and sit.noun and rng.random() < 0.6:
            # satisfied: asks for more on the same answer
            user_text, deeper = _go_deeper(rng, lang, sit.noun), True
            gap = rng.uniform(max(30.0, 0.2 * len(text)), max(60.0, 0.5 * len(text)))
        else:  # satisfied: thanks, then the next question of the same kind of conversation
            nxt = (
                kinds.BY_NAME[sit.kind]
                if lang in kinds.BY_NAME[sit.kind].langs
                else kinds.any_kind(rng, lang)
            )
            sit = nxt.build(rng, lang, "seed", nxt.ask(rng, "plain"))
            user_text = rng.choice(_THANKS[lang]) + sit.query
            gap = rng.uniform(max(30.0, 0.2 * len(text)), max(60.0, 0.5 * len(text)))
        c.clock = max(c.clock, _parse(c.events[-1]["ts"])) + timedelta(seconds=gap)
        gap_from_reply = (c.clock - _parse(_last_assistant(c.events)["ts"])).total_seconds()
        expected = expected_reaction(prev, user_text, text, gap_from_reply, intent, lang)
    return c.events


def _last_assistant(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in reversed(events) if e["type"] == "turn" and e["role"] == "assistant")


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts)


def build_traffic(seed: int, conversations: int) -> list[dict[str, Any]]:
    rng = Random(seed)
    events = [e for i in range(conversations) for e in conversation(rng, i)]
    # Interleave conversations by instant; a stable sort keeps each one's own order.
    return sorted(events, key=lambda e: _parse(e["ts"]))


def dumps(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))
