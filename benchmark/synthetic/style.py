"""Surface style shared by liked and disliked replies.

Everything here is label-neutral on purpose: openers, closers, apologies, list and
markdown formats are drawn from the same pools with the same odds whatever the label,
so a classifier cannot learn "polite opener => liked" or "bullets => disliked".
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from benchmark.synthetic.situation import Lang

OPENERS: dict[str, dict[Lang, tuple[str, ...]]] = {
    "task": {
        "zh": (
            "好的，",
            "好的！",
            "没问题，",
            "当然可以。",
            "明白了。",
            "收到～",
            "这个问题很常见。",
            "我来帮你看看。",
            "嗯，",
            "可以的。",
            "来啦！",
            "这个我知道。",
            "好问题！",
            "稍等，我整理一下：",
            "简单来说，",
            "这个问题其实不难，",
            "我帮你总结一下：",
            "关于这个问题，",
        ),
        "en": (
            "Sure! ",
            "Of course. ",
            "Good question! ",
            "Got it. ",
            "Happy to help. ",
            "Here you go: ",
            "Okay, ",
            "Absolutely. ",
            "Let me break it down. ",
            "Simply put, ",
            "In short, ",
        ),
    },
    "warm": {
        "zh": ("抱抱你。", "嗯嗯，", "我在呢。", "听到了。", "哎，", "哈哈，", "诶，"),
        "en": ("Oh, ", "Hey, ", "I hear you. ", "Aw, ", "Ha, "),
    },
}

CLOSERS: dict[str, dict[Lang, tuple[str, ...]]] = {
    "task": {
        "zh": (
            "希望对你有帮助！",
            "如果还有疑问，随时问我。",
            "需要的话我可以再展开讲讲。",
            "祝你顺利！",
            "有其他问题欢迎继续问～",
            "有不清楚的地方可以再问我。",
            "你可以先试试看。",
            "以上就是主要内容。",
            "总的来说就是这样，希望能帮到你。",
        ),
        "en": (
            "Hope this helps!",
            "Let me know if you have more questions.",
            "Happy to go into more detail if you like.",
            "Good luck!",
            "Feel free to ask a follow-up.",
            "That's the gist of it.",
        ),
    },
    "warm": {
        "zh": (
            "我一直在这儿，想聊随时找我。",
            "愿意的话可以多跟我说说。",
            "照顾好自己。",
            "加油呀！",
        ),
        "en": ("I'm here if you want to talk more.", "Take care of yourself.", "Rooting for you!"),
    },
}

APOLOGIES: dict[Lang, tuple[str, ...]] = {
    "zh": ("抱歉，", "不好意思，", "抱歉让你久等了，", "抱歉刚才没说清楚，", "对不起，"),
    "en": ("Sorry about that. ", "Apologies. ", "My apologies, ", "Sorry for the confusion. "),
}

SEP: dict[Lang, str] = {"zh": "", "en": " "}


LOWERABLE = frozenset(
    {
        "The",
        "It",
        "A",
        "An",
        "You",
        "This",
        "Your",
        "There",
        "That",
        "Its",
        "In",
        "Let's",
        "Most",
        "Each",
        "Here",
        "To",
        "Try",
        "Go",
        "Use",
        "Open",
    }
)
_BLOCK_STARTS = ("1.", "- ", "• ", "**", "#", "|", "《", "```", "`", "主题", "Subject")


def join(lang: Lang, sentences: Sequence[str]) -> str:
    out = ""
    for s in sentences:
        if not s:
            continue
        if out:
            # code blocks and lists keep their own lines
            block = out.endswith("```") or s.startswith(("```", "1.", "- ", "• ")) or "\n" in s[:3]
            out += "\n" if block else SEP[lang]
        out += s
    return out


def looks_cut(text: str) -> bool:
    """True when a reply stops mid-sentence (so no closer should follow it)."""
    last = text.rstrip().rsplit("\n", 1)[-1]
    if not last or last.startswith(
        ("1", "2", "3", "4", "5", "6", "7", "8", "9", "-", "•", "|", "`")
    ):
        return False
    return last[-1] not in '。.！!？?…～~）)」”"*`:：;；、😄🎉💪😂'


def frame(lang: Lang, rng: Random, body: str, register: str = "task") -> str:
    """Wrap a body in an optional opener and closer, independent of the label."""
    openers = OPENERS[register][lang]
    if lang == "en" and body.split(" ", 1)[0] not in LOWERABLE:
        # "Simply put, Jupiter..." reads fine; "Simply put, Most stores..." does not.
        openers = tuple(o for o in openers if not o.endswith(", "))
    opener = rng.choice(openers) if rng.random() < 0.45 else ""
    if opener.endswith(", ") and lang == "en":
        body = body[0].lower() + body[1:]
    closer = rng.choice(CLOSERS[register][lang]) if rng.random() < 0.4 else ""
    if looks_cut(body):
        closer = ""
    if opener and body.lstrip().startswith(_BLOCK_STARTS):
        opener = opener.rstrip() + "\n"  # a list or heading starts on its own line
    text = opener + body
    if closer:
        text += ("\n\n" if "\n" in body or rng.random() < 0.5 else SEP[lang]) + closer
    return text


def listing(lang: Lang, rng: Random, items: Sequence[str], style: str | None = None) -> str:
    """Render items as a numbered, dashed, bulleted or bold-headed list."""
    style = style or rng.choice(("numbered", "numbered", "dash", "dot", "bold"))
    lines = []
    for i, item in enumerate(items, 1):
        if style == "numbered":
            lines.append(f"{i}. {item}")
        elif style == "dash":
            lines.append(f"- {item}")
        elif style == "dot":
            lines.append(f"• {item}")
        else:
            head, sep, rest = _split_head(lang, item)
            lines.append(f"{i}. **{head}**{sep}{rest}" if rest else f"{i}. **{head}**")
    return "\n".join(lines)


def _split_head(lang: Lang, item: str) -> tuple[str, str, str]:
    for mark in ("：", "，", "。") if lang == "zh" else (": ", ", ", ". "):
        head, sep, rest = item.partition(mark)
        if sep and 2 <= len(head) <= 24:
            return head, sep, rest
    return item, "", ""


def paragraphs(lang: Lang, rng: Random, sentences: Sequence[str]) -> str:
    """Group sentences into one to three paragraphs."""
    sentences = [s for s in sentences if s]
    if len(sentences) <= 2 or rng.random() < 0.4:
        return join(lang, sentences)
    cut = rng.randint(1, len(sentences) - 1)
    return join(lang, sentences[:cut]) + "\n\n" + join(lang, sentences[cut:])


def sectioned(lang: Lang, rng: Random, sections: Sequence[tuple[str, str]]) -> str:
    """Markdown sections ("**Why**\\n..." or "### Why\\n...")."""
    style = rng.choice(("bold", "bold", "h3"))
    out = []
    for title, body in sections:
        head = f"**{title}**" if style == "bold" else f"### {title}"
        out.append(f"{head}\n{body}")
    return "\n\n".join(out)


def table(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def end(lang: Lang, sentence: str) -> str:
    """Terminate a sentence with the language's full stop unless it already ends."""
    if not sentence or sentence[-1] in "。！？!?.…～~：:":
        return sentence
    return sentence + ("。" if lang == "zh" else ".")
