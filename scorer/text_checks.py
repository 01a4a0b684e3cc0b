"""Pure-text checks of a reply against its request, for failures an encoder cannot see.

A sentence encoder tells whether a reply is *about* the request; it cannot tell that the
reply changed the date the user gave, that `7 x 8 = 54`, that it offers two different
answers to one question, hedges every claim, refuses, or ignores "in a table" / "three
points" / "just the answer". Each function here measures one such thing in Chinese and
English with a hand-written lexicon or a small parser, returns a plain number, and never
raises on odd input: the UX-Judge feeds them to its head as features.
"""

from __future__ import annotations

import ast
import itertools
import json
import operator
import re
from collections.abc import Callable, Iterable
from difflib import SequenceMatcher

_MAX_SENTENCES = 40  # pairwise sentence comparisons stay cheap on long replies

# --- figures: numbers, number words, weekdays ---------------------------------------------

_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}  # fmt: skip
_EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "hundred": 100,
}  # fmt: skip
_WEEKDAYS_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_ZH = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "日": 7, "天": 7}
_NUMBER = re.compile(r"(?<![A-Za-z0-9.])-?\d[\d,]*(?:\.\d+)?(?![\d])")
_ZH_NUMERAL = re.compile(
    r"[零一二两三四五六七八九十百千万]+(?=[个位名本条点句天月年日号岁次元块分小时周])"
)
_ZH_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")
_EN_WORD = re.compile(r"[a-z]+")
_LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:\d+[.)、](?!\d)|[-*•](?=[ \t]))[ \t]*")


def _zh_numeral(text: str) -> int | None:
    """Value of a Chinese numeral below 100,000 (十二, 二十, 三百五十, 两千); None if not one."""
    total, current = 0, 0
    for ch in text:
        if ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch in "十百千万":
            unit = {"十": 10, "百": 100, "千": 1000, "万": 10_000}[ch]
            total += (current or 1) * unit
            current = 0
        else:
            return None
    return total + current


def _canonical(number: str) -> str:
    value = float(number.replace(",", ""))
    return str(int(value)) if value.is_integer() else repr(round(value, 6))


def figures(text: str) -> set[str]:
    """Numbers (digits, Chinese numerals, English number words) and weekdays in `text`,
    normalized so that 两, 2, two and 2.0 agree and 周四 matches Thursday. List markers
    ("1.", "- ") are not figures."""
    text = _LIST_MARKER.sub("", text.lower())
    found: set[str] = set()
    for m in _NUMBER.finditer(text):
        try:
            found.add(_canonical(m.group()))
        except ValueError:
            continue
    for m in _ZH_NUMERAL.finditer(text):
        value = _zh_numeral(m.group())
        if value is not None and m.group() != "一":  # 一下, 一点, 一个: rarely a figure
            found.add(str(value))
    for m in _ZH_WEEKDAY.finditer(text):
        found.add(f"weekday{_WEEKDAY_ZH[m.group(1)]}")
    for word in _EN_WORD.findall(text):
        if word in _EN_NUMBERS:
            found.add(str(_EN_NUMBERS[word]))
        elif word in _WEEKDAYS_EN:
            found.add(f"weekday{_WEEKDAYS_EN.index(word) + 1}")
    return found


# --- arithmetic stated in the reply ---------------------------------------------------------

_OPS = {"+": "+", "-": "-", "−": "-", "×": "*", "x": "*", "*": "*", "÷": "/", "/": "/"}
_OPERAND = r"\(?-?\d[\d,]*(?:\.\d+)?%?\)?"
_EQUATION = re.compile(
    rf"((?:{_OPERAND})(?:\s*[-+−×x*÷/]\s*(?:{_OPERAND}))+)\s*(=|≈|约等于|等于)\s*(-?\d[\d,]*(?:\.\d+)?)(%?)"
)
_AST_OPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _AST_OPS:
        return _AST_OPS[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    raise ValueError("not plain arithmetic")


def _expression(text: str) -> str:
    text = text.replace("（", "(").replace("）", ")").replace(",", "")
    text = re.sub(r"(\d+(?:\.\d+)?)%", r"(\1/100)", text)
    return "".join(_OPS.get(ch, ch) for ch in text)


def _decimals(number: str) -> int:
    return len(number.split(".", 1)[1]) if "." in number else 0


def arithmetic_claims(text: str) -> tuple[int, int]:
    """(checked, false) counts of `a op b [op c ...] = c` statements in `text`.

    A result counts as right when it matches the computed value to the precision it is
    written with (or within 1 % for "≈"), so "10 ÷ 3 = 3.33" is right and "17 × 3 = 41"
    is not. Unbalanced brackets and anything that is not plain arithmetic are skipped.
    """
    checked = wrong = 0
    for m in _EQUATION.finditer(text.replace("（", "(").replace("）", ")")):
        left, relation, result, percent = m.groups()
        if left.count("(") != left.count(")"):
            left = left.strip("()")
            if left.count("(") != left.count(")"):
                continue
        try:
            value = _evaluate(ast.parse(_expression(left), mode="eval"))
        except (SyntaxError, ValueError, ZeroDivisionError, RecursionError):
            continue
        number = float(result.replace(",", ""))
        # "x ÷ y × 100 = 25%" and "x ÷ y = 25%" are both usual ways to write a percentage
        scales = (1.0, 100.0) if percent else (1.0,)
        checked += 1
        if not any(_matches(value, number / scale, _decimals(result), scale, relation)
                   for scale in scales):  # fmt: skip
            wrong += 1
    return checked, wrong


def _matches(value: float, stated: float, decimals: int, scale: float, relation: str) -> bool:
    tolerance = 0.5 * 10**-decimals / scale + 1e-9  # the precision the result is written to
    if relation != "=":
        tolerance = max(tolerance, 0.01 * abs(value))
    return abs(value - stated) <= max(tolerance, 1e-6 * abs(value))


# --- lexicons: hedging, competing answers, refusal, non-committal, clarifying ---------------

# Uncertainty about the reply's own claim or hearsay instead of a source.
HEDGES = (
    "据说", "听说", "传闻", "好像是", "似乎", "也许", "大概是", "可能是", "不确定", "不太确定",
    "我记得", "印象中", "记不清", "可能记错", "说法不一", "众说纷纭", "网上说", "网上的说法",
    "有人说", "仅供参考", "再查证", "自己查一下", "无法保证准确",
    "i think", "i believe", "i'm not sure", "i am not sure", "not certain", "not 100%",
    "reportedly", "supposedly", "allegedly", "apparently", "rumor", "i've heard",
    "i heard", "if i recall", "i could be wrong", "misremember", "double-check",
    "don't quote me", "as far as i know",
)  # fmt: skip
# A second, different answer to the same question inside one reply.
COMPETING_ANSWERS = (
    "也有资料说", "也有资料显示", "也有人认为", "另一种说法", "也有说法", "另有说法",
    "也有可能是", "另一种算法", "另一种口径", "另一种结果", "更正一下", "纠正一下",
    "严格来说", "或者说是", "也可能是", "又有一说", "也有一种观点",
    "other sources say", "some sources say", "some say", "others say", "others claim",
    "or possibly", "alternatively, ", "by another method", "another way to count",
    "correction:", "actually, correction", "strictly speaking", "or it might be",
    "some argue", "on the other hand, some",
)  # fmt: skip
REFUSALS = (
    "无法回答", "无法协助", "无法提供", "无法帮你", "无法为你", "不能提供", "不能回答",
    "不便给出", "不便回答", "不在我的服务范围", "超出了我的能力", "作为ai", "作为一个ai",
    "作为人工智能", "根据相关规定", "请咨询专业", "请咨询相关", "寻求专业帮助", "通过官方渠道",
    "i can't help", "i cannot help", "i can't assist", "i cannot assist", "i'm not able to",
    "i am not able to", "i'm unable to", "i am unable to", "as an ai", "i can't provide",
    "i cannot provide", "i can't give", "i won't be able", "consult a qualified",
    "consult a professional", "against my guidelines", "not able to provide",
)  # fmt: skip
# Answers that commit to nothing: "it depends", "decide for yourself".
NONCOMMITTAL = (
    "因人而异", "具体问题具体分析", "具体情况具体分析", "要看具体情况", "看具体情况",
    "很难一概而论", "不能一概而论", "取决于很多因素", "涉及很多方面", "多参考", "多了解",
    "自己判断", "自己决定", "按照常规", "问题不大", "先试一试", "先试试看", "综合考虑",
    "it depends", "depends on your situation", "one-size-fits-all", "hard to say",
    "many factors", "decide for yourself", "do some research", "see what works",
    "the usual approach", "you should be fine", "varies from person to person",
    "check a reliable source", "look at a few sources",
)  # fmt: skip
# The reply asks the user to restate or narrow the request instead of answering it.
CLARIFYING = (
    "你是指", "你是说", "你指的是", "请问你想", "请问您想", "能具体说说", "能具体说一下",
    "能否提供更多", "可以提供更多", "请补充", "请说明一下", "你想了解哪", "您想了解哪",
    "do you mean", "could you clarify", "can you clarify", "could you provide more",
    "can you provide more", "could you tell me more", "what exactly", "which one do you",
    "could you specify", "can you be more specific", "please clarify",
)  # fmt: skip


def marker_count(text: str, lexicon: Iterable[str]) -> int:
    """How many distinct phrases of `lexicon` occur in `text` (case-insensitive)."""
    lowered = text.lower()
    return sum(1 for phrase in lexicon if phrase in lowered)


# --- self-contradiction --------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\.)\s+")
_DIGITS = re.compile(r"\d[\d,.]*")


_ABBREVIATION = re.compile(
    r"(?:\b(?:mr|mrs|ms|dr|prof|st|vs|etc|e\.g|i\.e|no|approx)|\b[a-z])\.$", re.I
)
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_FINAL_PUNCT = "。！？!?；;.…"


def sentences(text: str) -> list[str]:
    """Non-empty sentences, split at CJK and Latin sentence ends and at line breaks
    ("Ms. Carter" and "e.g. this" stay whole)."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(text):
        piece = piece.strip()
        if len(piece) <= 1:
            continue
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] += " " + piece
        else:
            out.append(piece)
    return out


def answer_units(text: str) -> int:
    """Sentences, counting a code block, a list or a block of unpunctuated lines (a poem,
    an address) as one unit: how much a reply says beyond its answer."""
    units = 0
    for block in re.split(r"\n\s*\n", _FENCE.sub("CODE.", text)):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        listed = [line for line in lines if LIST_ITEM.match(line)]
        unpunctuated = [line for line in lines if line[-1] not in _FINAL_PUNCT]
        if len(lines) >= 2 and len(listed) + len(unpunctuated) >= len(lines) - 1:
            units += 1 + sum(1 for line in lines if line not in listed and line[-1] in _FINAL_PUNCT)
        else:
            units += len(sentences(block))
    return units


def conflicting_statements(text: str) -> int:
    """Pairs of sentences that make the same statement with different figures
    ("X happened in 221 BC" ... "X happened in 230 BC"), the most common form of an
    answer that contradicts itself."""
    items = [s for s in sentences(text) if _DIGITS.search(s)][:_MAX_SENTENCES]
    count = 0
    for a, b in itertools.combinations(items, 2):
        shape_a, shape_b = _DIGITS.sub("#", a), _DIGITS.sub("#", b)
        if figures(a) == figures(b):
            continue
        matcher = SequenceMatcher(None, shape_a, shape_b, autojunk=False)
        if matcher.quick_ratio() >= 0.75 and matcher.ratio() >= 0.75:
            count += 1
    return count


# --- explicit format constraints in the request ---------------------------------------------

BREVITY = (
    "简单说", "简短", "一句话", "说重点", "别太长", "不要太长", "精简", "简单回答", "简要",
    "简单点", "短一点", "概括一下", "长话短说",
    "keep it short", "briefly", "brief answer", "one sentence", "short answer", "tl;dr",
    "shorter", "concise", "in a nutshell", "in short,", "quick answer",
)  # fmt: skip
ANSWER_ONLY = (
    "不用解释", "不要解释", "别解释", "无需解释", "只要结果", "只要答案", "只要译文",
    "只要结论", "只要最终", "直接给答案", "直接说答案", "直接告诉我", "直接给内容", "只给",
    "just the answer", "no explanation", "only the result", "skip the explanation",
    "answer only", "just give me the", "without explanation", "only the answer",
)  # fmt: skip
TABLE = ("表格", "table")
_COUNT_ZH = re.compile(
    r"(?:分|列|用|给我|推荐|写|来|举|说|列出|总结成|概括成|整理成|只要|要)\s*"
    r"([0-9]+|[一二两三四五六七八九十]+)\s*(?:个要点|点|条|本|个|首|句|种|步|项|件)"
)
_COUNT_EN = re.compile(
    r"\b([0-9]+|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?:bullet points|bullets|points|picks|items|tips|ideas|books|steps|ways|examples|"
    r"reasons|options)\b"
)
_SENTENCE_LIMIT_ZH = re.compile(
    r"([0-9]+|[一二两三四五六七八九十]+)\s*句话?(?:以内|之内|内|左右|就够)"
)
_SENTENCE_LIMIT_EN = re.compile(r"\b([0-9]+|one|two|three|four|five|six)\s+sentences?\b")
_WORD_LIMIT = re.compile(
    r"(?:([0-9]+)\s*字(?:以内|之内|内|左右)"
    r"|\b(?:under|within|at most|no more than)\s+([0-9]+)\s+words)"
)
_TABLE_ROW = re.compile(r"(?m)^\s*\|?[^|\n]+\|[^|\n]+")
# A list item at the start of a line: "- ", "* ", "• ", "1. ", "1) ", "1、" (also used by ux_judge)
LIST_ITEM = re.compile(r"(?m)^[ \t]*(?:(?:[-*•]|\d+[.)])[ \t]|\d+、)")
_ASKS_JSON = re.compile(r"\bjson\b", re.IGNORECASE)
_WANTS_ENGLISH = ("翻译成英文", "译成英文", "用英文", "用英语", "in english")
_WANTS_CHINESE = ("翻译成中文", "译成中文", "用中文", "in chinese")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_LONG_FOR_BRIEF = 3  # sentences: an answer asked to be short or bare may add one courtesy


def _count(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    if token in _EN_NUMBERS:
        return _EN_NUMBERS[token]
    return _zh_numeral(token)


def _cjk_ratio(text: str) -> float:
    cjk, latin = len(_CJK.findall(text)), len(_LATIN.findall(text))
    return cjk / (cjk + latin) if cjk + latin else 0.0


def format_checks(request: str, reply: str) -> tuple[int, int]:
    """(constraints, violations): explicit format requests found in `request` (brevity,
    answer only, N items, sentence or word limit, table, JSON, reply language) and how
    many of them `reply` breaks."""
    lowered = request.lower()
    n_sentences = len(sentences(reply))
    n_units = answer_units(reply)
    constraints = violations = 0

    def check(asked: bool, broken: bool) -> None:
        nonlocal constraints, violations
        if asked:
            constraints += 1
            violations += int(broken)

    check(marker_count(lowered, BREVITY) > 0, n_units > _LONG_FOR_BRIEF)
    check(marker_count(lowered, ANSWER_ONLY) > 0, n_units > _LONG_FOR_BRIEF)
    limit = _SENTENCE_LIMIT_ZH.search(lowered) or _SENTENCE_LIMIT_EN.search(lowered)
    if limit and (n := _count(limit.group(1))):
        check(True, n_sentences > n + 1)
    elif count := (_COUNT_ZH.search(lowered) or _COUNT_EN.search(lowered)):
        n = _count(count.group(1))
        if n and n > 1:
            listed = len(LIST_ITEM.findall(reply))
            lines = sum(1 for line in reply.splitlines() if line.strip())
            check(True, listed != n if listed else lines < n)
    words = _WORD_LIMIT.search(lowered)
    if words:
        n = int(words.group(1) or words.group(2))
        size = len(_CJK.findall(reply)) + len(re.findall(r"[A-Za-z]+", reply))
        check(True, size > n * 1.2)
    check(any(t in lowered for t in TABLE), len(_TABLE_ROW.findall(reply)) < 2)
    check(bool(_ASKS_JSON.search(request)), not _has_json(reply))
    check(any(t in lowered for t in _WANTS_ENGLISH), _cjk_ratio(reply) > 0.5)
    check(any(t in lowered for t in _WANTS_CHINESE), _cjk_ratio(reply) < 0.5)
    return constraints, violations


def _has_json(reply: str) -> bool:
    start = min((i for i in (reply.find("{"), reply.find("[")) if i >= 0), default=-1)
    if start < 0:
        return False
    end = max(reply.rfind("}"), reply.rfind("]"))
    try:
        json.loads(reply[start : end + 1])
    except ValueError:
        return False
    return True


# --- the user's own facts kept in the reply --------------------------------------------------

_MONTHS_EN = ("january", "february", "march", "april", "may", "june", "july", "august",
              "september", "october", "november", "december")  # fmt: skip
_ZH_DATE = re.compile(
    r"([0-9]{1,2}|[一二三四五六七八九十]+)月([0-9]{1,2}|[一二三四五六七八九十]+)[日号]?"
)
_ZH_DAY_AFTER = re.compile(r"(?:到|至|-|~)([0-9]{1,2})[日号]")
_ZH_CLOCK = re.compile(
    r"(上午|中午|下午|晚上|早上|凌晨)?([0-9]{1,2}|[一二两三四五六七八九十]+)点(半)?"
)
_CLOCK = re.compile(
    r"\b([0-9]{1,2})(?::([0-9]{2}))?\s*(a\.?m\.?|p\.?m\.?)|\b([0-9]{1,2}):([0-9]{2})\b"
)
_EN_DATE = re.compile(
    r"\b(" + "|".join(_MONTHS_EN) + r")\.?\s+([0-9]{1,2})(?:st|nd|rd|th)?\b"
    r"|\b([0-9]{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(" + "|".join(_MONTHS_EN) + r")\b"
)
_RELATIVE_DAYS = {
    "今天": "today", "today": "today", "明天": "tomorrow", "tomorrow": "tomorrow",
    "后天": "in2days", "昨天": "yesterday", "yesterday": "yesterday", "下周": "nextweek",
    "next week": "nextweek", "月底": "monthend", "end of the month": "monthend",
}  # fmt: skip


def _small_number(token: str) -> int | None:
    return int(token) if token.isdigit() else _zh_numeral(token)


def dates(text: str) -> set[str]:
    """Calendar dates, weekdays, clock times and relative days in `text`, normalized across
    Chinese and English ("12月2日" = "December 2", "下午三点" = "3 p.m.", 周四 = Thursday)."""
    lowered = text.lower()
    found = {f"weekday{_WEEKDAY_ZH[m.group(1)]}" for m in _ZH_WEEKDAY.finditer(lowered)}
    found |= {f"weekday{i + 1}" for i, day in enumerate(_WEEKDAYS_EN) if day in lowered}
    found |= {tag for phrase, tag in _RELATIVE_DAYS.items() if phrase in lowered}
    for m in _ZH_DATE.finditer(lowered):
        found.add(f"{_small_number(m.group(1))}/{_small_number(m.group(2))}")
    found |= {f"day{m.group(1)}" for m in _ZH_DAY_AFTER.finditer(lowered)}
    for m in _EN_DATE.finditer(lowered):
        month = m.group(1) or m.group(4)
        day = m.group(2) or m.group(3)
        found.add(f"{_MONTHS_EN.index(month) + 1}/{int(day)}")
    for m in _ZH_CLOCK.finditer(lowered):
        hour = _small_number(m.group(2))
        if hour is None or hour > 24:
            continue
        if m.group(1) in ("下午", "晚上") and hour < 12:
            hour += 12
        found.add(f"{hour}:{30 if m.group(3) else 0:02d}")
    for m in _CLOCK.finditer(lowered):
        if m.group(3):
            hour = int(m.group(1)) % 12 + (12 if m.group(3).startswith("p") else 0)
            found.add(f"{hour}:{int(m.group(2) or 0):02d}")
        else:
            found.add(f"{int(m.group(4))}:{int(m.group(5)):02d}")
    return found


def changed_dates(request: str, reply: str) -> float:
    """Share of the reply's dates and times that the request, which gave dates of its own,
    never mentioned: a meeting moved to another day, a leave request for the wrong dates."""
    asked, said = dates(request), dates(reply)
    if not asked or not said:
        return 0.0
    return len(said - asked) / len(said)


_FORMAT_QUANTITIES = (_COUNT_ZH, _COUNT_EN, _SENTENCE_LIMIT_ZH, _SENTENCE_LIMIT_EN, _WORD_LIMIT)


def missing_request_figures(request: str, reply: str) -> float:
    """Share of the request's figures that a reply restating some of them leaves out.

    Given "7 people, 1776 yuan", a reply computing with 1776 but not 7 has dropped or
    changed one of the user's facts. A reply that restates none of them (a bare result,
    prose advice, a poem) is not judged here: 0.0. Quantities that only shape the answer
    ("3 bullet points", "两句话以内") are not facts of the request.
    """
    lowered = request.lower()
    for pattern in _FORMAT_QUANTITIES:
        lowered = pattern.sub(" ", lowered)
    asked, said = figures(lowered), figures(reply)
    kept = asked & said
    if not kept:
        return 0.0
    return len(asked - said) / len(asked)
