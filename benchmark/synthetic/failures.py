"""Generic ways a reply goes wrong, shared by every kind of conversation.

Each function takes the material a good reply is made of (the key answer, supporting
details, a noun phrase naming the topic) and returns a disliked reply. The padding
phrases used here also appear, less often, in liked detailed replies (see
`good_detailed`), so that their presence alone does not give the label away.
"""

from __future__ import annotations

from collections.abc import Sequence
from random import Random

from benchmark.synthetic import style
from benchmark.synthetic.situation import Ask, Lang

_PREAMBLE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "关于{noun}，这是一个很多人都关心的问题，下面我从几个方面为你详细说明。",
        "在回答{noun}之前，我们先来了解一下相关的背景。",
        "这个问题问得非常好！{noun}看似简单，其实包含了不少值得了解的内容。",
        "要说清楚{noun}，需要先从基础讲起。",
        "{noun}是一个经常被问到的话题，我尽量全面地解释一下。",
    ),
    "en": (
        "Great question! {noun} is something a lot of people wonder about, so let me explain it "
        "thoroughly.",
        "Before answering, it helps to understand some background on {noun}.",
        "To fully understand {noun}, we need to start with the basics.",
        "{noun} comes up a lot, so I'll try to cover it from several angles.",
    ),
}
_RESTATE: dict[Lang, tuple[str, ...]] = {
    "zh": ("换句话说，", "也就是说，", "再强调一遍，", "简单来说，", "所以说，", "总结一下："),
    "en": ("In other words, ", "To put it another way, ", "Again, ", "Simply put, ", "To sum up, "),
}
_FILLER: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "当然，具体情况还需要结合实际来判断。",
        "了解这些知识对日常生活也很有帮助。",
        "这个问题看似简单，背后其实有很多值得思考的地方。",
        "正如前面提到的，这一点非常重要。",
        "希望以上内容能帮助你更全面地理解这个问题。",
        "值得注意的是，不同资料的表述可能略有差异，但核心意思是一样的。",
        "总之，掌握了这些要点，相信你就能很好地理解了。",
        "这也是为什么很多人会对这个问题感兴趣的原因之一。",
        "从不同的角度来看，这个问题都有其重要意义。",
    ),
    "en": (
        "Of course, the details may vary depending on your situation.",
        "Understanding this can be useful in everyday life as well.",
        "It seems simple, but there is actually a lot to think about here.",
        "As mentioned above, this point is really important.",
        "I hope this gives you a more complete picture.",
        "It's worth noting that different sources phrase this slightly differently, but the core "
        "idea is the same.",
        "All in all, once you understand these points you'll have a solid grasp of it.",
    ),
}
_VAGUE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "关于{noun}，其实要看具体情况，不同的人、不同的场景答案都不太一样。建议你结合自己的实际情况综合考虑，必要时可以查阅更权威的资料。",
        "{noun}这个问题比较复杂，涉及很多方面的因素，很难一概而论。总的来说，多了解、多比较，找到适合自己的方式最重要。",
        "这个问题有很多种说法，每种说法都有一定道理。你可以多参考几方面的信息再做判断。",
        "{noun}的话，一般来说按照常规的方法来就可以了，注意细节，问题不大。",
        "这取决于很多因素，比如时间、环境和个人情况等。建议具体问题具体分析。",
        "这个嘛，因人而异。你可以先试一试，根据效果再调整。",
    ),
    "en": (
        "It really depends on your situation; there isn't a one-size-fits-all answer about "
        "{noun}. I'd suggest weighing your options and checking a reliable source.",
        "There are many factors involved in {noun}, so it's hard to say in general. Do some "
        "research and see what works for you.",
        "Different people will tell you different things here. It's best to look at a few "
        "sources and decide for yourself.",
        "Generally, just follow the usual approach and pay attention to the details, and you "
        "should be fine.",
    ),
}
_REFUSE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "抱歉，关于{noun}的问题我暂时无法回答。",
        "这个问题可能涉及专业领域，为了避免误导，我不便给出具体建议，请咨询相关专业人士。",
        "抱歉，我无法协助完成这个请求。",
        "很抱歉，根据相关规定，我不能提供这方面的内容。",
        "作为AI助手，我无法就{noun}给出答复，建议你通过官方渠道了解。",
    ),
    "en": (
        "I'm sorry, but I can't help with that request.",
        "I'm not able to provide advice on {noun}. Please consult a qualified professional.",
        "Sorry, I can't assist with this. You may want to check an official source.",
        "As an AI, I can't give an answer about {noun}.",
    ),
}
_ERRORS: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "网络开小差了，请稍后再试。",
        "服务器繁忙，请稍后重试。",
        "[系统错误] 回答生成失败（错误码 502），请重新生成。",
        "抱歉，回答生成中断，请点击重新生成。",
        "{partial}\n\n[ERROR] stream closed unexpectedly",
        "{partial}{partial}",
        "error: upstream request timeout",
        "{partial}\n\n（内容加载失败）",
        "抱歉，出了点问题，请稍后再试。",
    ),
    "en": (
        "Network error. Please try again later.",
        "Something went wrong. Please regenerate the response.",
        "[ERROR 504] Gateway timeout",
        "{partial}\n\n[error: connection reset by peer]",
        "{partial}{partial}",
        "Sorry, something went wrong. Please try again.",
    ),
}


def preamble(lang: Lang, rng: Random, noun: str) -> str:
    return rng.choice(_PREAMBLE[lang]).format(noun=noun)


def restate(lang: Lang, rng: Random, key: str) -> str:
    return rng.choice(_RESTATE[lang]) + _lower_first(lang, key)


def filler(lang: Lang, rng: Random) -> str:
    return rng.choice(_FILLER[lang])


def fillers(lang: Lang, rng: Random, k: int) -> list[str]:
    return rng.sample(_FILLER[lang], k=k)


def verbose(lang: Lang, rng: Random, key: str, details: Sequence[str], noun: str) -> str:
    """The right answer buried in preamble, repetition and unrequested background.

    Padding is mostly the topic's own material said twice, and a good share of these
    replies carry no stock phrase at all, so what marks them is redundancy and length
    against the request rather than a template word.
    """
    details = [d for d in details if d]
    rng.shuffle(details)
    parts: list[str]
    if rng.random() < 0.4:
        # Plain and long: everything the topic offers, the key point said twice.
        parts = [key, *details]
        parts.insert(
            rng.randint(1, len(parts)), key if rng.random() < 0.5 else restate(lang, rng, key)
        )
        if details:
            parts.append(rng.choice(details))
        return style.paragraphs(lang, rng, parts)
    parts = []
    if rng.random() < 0.5:
        parts.append(preamble(lang, rng, noun))
    parts += details[:2]
    parts.append(key)
    parts.append(restate(lang, rng, key))
    parts += details[2:]
    if details and rng.random() < 0.6:
        parts.append(rng.choice(_AGAIN[lang]) + _lower_first(lang, rng.choice(details)))
    parts += fillers(lang, rng, rng.randint(0, 2))
    if rng.random() < 0.5:
        parts.append(rng.choice(_RESTATE[lang]) + _lower_first(lang, key))
    if rng.random() < 0.35 and len(parts) >= 4:
        half = len(parts) // 2
        titles = rng.choice(_TITLES[lang])
        return style.sectioned(
            lang,
            rng,
            [
                (titles[0], style.join(lang, parts[:half])),
                (titles[1], style.join(lang, parts[half:-1])),
                (titles[2], parts[-1]),
            ],
        )
    return style.paragraphs(lang, rng, parts)


_AGAIN: dict[Lang, tuple[str, ...]] = {
    "zh": ("前面也提到了，", "需要再次说明的是，", "还是那句话，", "另外，", "同时，"),
    "en": ("As mentioned above, ", "Again, ", "Also, ", "On top of that, "),
}
_TITLES: dict[Lang, tuple[tuple[str, str, str], ...]] = {
    "zh": (("背景", "解答", "总结"), ("答案", "补充说明", "小结"), ("要点", "详细说明", "总结")),
    "en": (
        ("Background", "Answer", "Summary"),
        ("Answer", "More details", "In short"),
        ("Key points", "Details", "Summary"),
    ),
}


def repeat_items(lang: Lang, rng: Random, items: Sequence[str], noun: str) -> str:
    """A list answer whose items are each followed by a restatement of the same point."""
    pre = rng.choice(_PREAMBLE[lang]).format(noun=noun)
    padded = [style.join(lang, [item, filler(lang, rng)]) for item in items]
    tail = restate(lang, rng, items[0]) if items else ""
    return (
        pre
        + "\n\n"
        + style.listing(lang, rng, padded)
        + "\n\n"
        + style.join(lang, [tail, *fillers(lang, rng, 2)])
    )


def truncate(rng: Random, text: str) -> str:
    """Cut a reply mid-way, as a generation that stopped early."""
    if len(text) < 24:
        return text[: max(4, len(text) // 2)]
    cut = int(len(text) * rng.uniform(0.3, 0.7))
    while cut > 8 and text[cut - 1] in "。.！!？?\n ":
        cut -= 1
    return text[:cut].rstrip()


def vague(lang: Lang, rng: Random, noun: str) -> str:
    return rng.choice(_VAGUE[lang]).format(noun=noun)


def refuse(lang: Lang, rng: Random, noun: str) -> str:
    return rng.choice(_REFUSE[lang]).format(noun=noun)


def system_error(lang: Lang, rng: Random, partial: str) -> str:
    cut = partial[: max(6, int(len(partial) * rng.uniform(0.15, 0.4)))]
    return rng.choice(_ERRORS[lang]).format(partial=cut)


def good_detailed(
    lang: Lang,
    rng: Random,
    key: str,
    details: Sequence[str],
    titles: tuple[str, str],
    example: str = "",
    noun: str = "",
) -> str:
    """A long liked reply: every sentence adds something; a connective or two may repeat."""
    parts = [key, *details]
    if example:
        parts.append(example)
    # A closing summary, said once, is ordinary in a long good answer.
    summary = restate(lang, rng, key) if rng.random() < 0.3 else ""
    if rng.random() < 0.3:
        parts.insert(1, filler(lang, rng))
    if noun and rng.random() < 0.2:
        parts.insert(0, preamble(lang, rng, noun))
    roll = rng.random()
    if roll < 0.35:
        head, rest = titles if rng.random() < 0.5 else rng.choice(_TITLES[lang][1:])[:2]
        split = parts.index(key) + 1
        return style.sectioned(
            lang,
            rng,
            [
                (head, style.join(lang, parts[:split])),
                (rest, style.join(lang, [*parts[split:], summary])),
            ],
        )
    if roll < 0.6 and len(details) >= 2:
        listed = key + "\n\n" + style.listing(lang, rng, parts[1:])
        return listed + ("\n\n" + summary if summary else "")
    return style.paragraphs(lang, rng, [*parts, summary])


def ignore_ask(
    lang: Lang, rng: Random, key: str, details: Sequence[str], ask: Ask, noun: str
) -> str:
    """A reply that answers but disregards the requested form."""
    if ask.kind == "brief":
        return good_detailed(lang, rng, key, details, _titles(lang))
    if ask.kind == "bullets":
        items = [key, *details]
        if len(items) > ask.n + 1 and rng.random() < 0.5:
            return style.listing(lang, rng, items)  # more points than asked for
        return style.paragraphs(lang, rng, items)
    if ask.kind == "table":
        return (
            style.listing(lang, rng, [key, *details])
            if rng.random() < 0.5
            else style.paragraphs(lang, rng, [key, *details])
        )
    if ask.kind == "no_explain":
        return style.paragraphs(lang, rng, [*details, key])
    return verbose(lang, rng, key, details, noun)


def _titles(lang: Lang) -> tuple[str, str]:
    return ("答案", "详细说明") if lang == "zh" else ("Answer", "Details")


def _lower_first(lang: Lang, text: str) -> str:
    # Only common sentence starters: lower-casing "Jupiter" or "Excel" would read as a typo.
    first = text.split(" ", 1)[0]
    if lang == "en" and first in style.LOWERABLE:
        return text[0].lower() + text[1:]
    return text
