"""How users phrase a constraint: inside the request, or as a follow-up turn."""

from __future__ import annotations

from random import Random

from benchmark.synthetic.situation import Ask, Lang

_SUFFIX: dict[str, dict[Lang, tuple[str, ...]]] = {
    "brief": {
        "zh": (
            "，简单说一下就行",
            "，一句话回答",
            "，简短点",
            "，说重点就行",
            "（简单回答）",
            "，别太长",
        ),
        "en": (" Keep it short.", " One sentence, please.", " Just the short answer.", " Briefly?"),
    },
    "detail": {
        "zh": ("，详细讲讲", "，能展开说说吗", "，讲详细一点", "，原理也说一下", "，说得具体些"),
        "en": (" Please explain in detail.", " Can you go deeper?", " Give me the details."),
    },
    "bullets": {
        "zh": ("，用{n}个要点概括", "，分{n}点说", "，列{n}条要点", "，{n}点就够"),
        "en": (
            " Summarize in {n} bullet points.",
            " Give me {n} bullet points.",
            " {n} points max.",
        ),
    },
    "table": {
        "zh": ("，用表格列出来", "，做成表格", "，整理成表格"),
        "en": (" Put it in a table.", " Format it as a table."),
    },
    "no_explain": {
        "zh": ("，直接给答案，不用解释", "，只要结果", "，别解释，直接说", "，只要最终答案"),
        "en": (
            " Just the answer, no explanation.",
            " Only the result please.",
            " No explanation needed.",
        ),
    },
}

_PREFIX: dict[str, dict[Lang, tuple[str, ...]]] = {
    "brief": {
        "zh": ("一句话告诉我：", "简单回答："),
        "en": ("Quick question: ", "In one sentence: "),
    },
    "no_explain": {"zh": ("直接告诉我结果：",), "en": ("Answer only: ",)},
}

_FOLLOWUP: dict[str, dict[Lang, tuple[str, ...]]] = {
    "brief": {
        "zh": (
            "太长了，一句话说重点",
            "能简短一点吗？",
            "说简单点",
            "总结成一句话吧",
            "有点长，精简一下",
            "看不完，说重点",
        ),
        "en": (
            "Too long. One sentence?",
            "Can you make it shorter?",
            "TL;DR please",
            "Shorter please.",
        ),
    },
    "detail": {
        "zh": ("能再详细点吗？", "展开说说", "具体讲讲", "为什么呢？详细说说", "说得再具体一些"),
        "en": ("Can you go into more detail?", "Explain more please.", "Why? Tell me more."),
    },
    "bullets": {
        "zh": ("用{n}点总结一下", "能分{n}点列出来吗", "整理成{n}条要点"),
        "en": ("Put that in {n} bullet points.", "Can you list it as {n} points?"),
    },
    "table": {
        "zh": ("能做成表格吗？", "用表格整理一下", "表格形式给我"),
        "en": ("Can you put that in a table?", "Table format please."),
    },
    "no_explain": {
        "zh": ("别解释了，直接告诉我结果", "直接说答案", "我只要结论"),
        "en": ("Just give me the final answer.", "Skip the explanation, what's the answer?"),
    },
}


def with_ask(lang: Lang, rng: Random, base: str, ask: Ask) -> str:
    """The request with its constraint written into it."""
    if ask.kind not in _SUFFIX:
        return base
    if ask.kind in _PREFIX and rng.random() < 0.3:
        return rng.choice(_PREFIX[ask.kind][lang]) + base
    suffix = rng.choice(_SUFFIX[ask.kind][lang]).format(n=ask.n)
    if lang == "zh":
        return base.rstrip("？?。！") + suffix
    return base + suffix


def followup(lang: Lang, rng: Random, ask: Ask) -> str:
    """The constraint alone, as the user's next turn after an unconstrained answer."""
    if ask.kind not in _FOLLOWUP:
        return ""
    return rng.choice(_FOLLOWUP[ask.kind][lang]).format(n=ask.n)
