"""Text checks of a reply against its request: each rule by hand, zh and en, and its near miss."""

from __future__ import annotations

import pytest

from scorer import text_checks as tc


def test_figures_agree_across_digits_numerals_and_words() -> None:
    assert tc.figures("我们7个人一共1,776元，玩两天") == {"7", "1776", "2"}
    assert tc.figures("two people, 2.0 kg, 3 hours") == {"2", "3"}
    assert tc.figures("周四 and Thursday") == {"weekday4"}
    # list markers, cell names and a lone 一 (一下, 一点) are not figures
    assert tc.figures("1. 看一下A2\n- B3") == set()
    assert tc.figures("-2°C") == {"-2"}


def test_a_dropped_user_figure_is_caught_only_when_others_are_restated() -> None:
    request = "我们7个人吃饭一共1776元，AA每人多少？"
    assert tc.missing_request_figures(request, "1776 ÷ 6 = 296，每人296元。") == 0.5
    assert tc.missing_request_figures(request, "1776 ÷ 7 ≈ 253.71，每人约253.71元。") == 0.0
    # a bare result restates nothing of the request: not judged
    assert tc.missing_request_figures("求平均数：88、79、84", "平均分是83.67。") == 0.0
    # "3 bullet points" shapes the answer; it is not a fact the reply must repeat
    request = "My rent is 1200 and I earn 4000. Give me 3 bullet points on budgeting."
    assert tc.missing_request_figures(request, "- Rent 1200 is 30% of 4000.") == 0.0


def test_dates_normalize_across_languages() -> None:
    assert tc.dates("会议改到下周三下午三点") == {"weekday3", "nextweek", "15:00"}
    assert tc.dates("moved to 3 p.m. next Wednesday") == {"weekday3", "15:00"}
    assert tc.dates("请假12月2日到4日") == {"12/2", "day4"}
    assert tc.dates("on December 2nd at 10:30") == {"12/2", "10:30"}


def test_changed_dates_are_the_replys_dates_the_request_never_gave() -> None:
    request = "Translate: 会议改到下周三下午三点。"
    assert tc.changed_dates(request, "The meeting moved to 3 p.m. next Wednesday.") == 0.0
    assert tc.changed_dates(request, "The meeting moved to 3 p.m. next Thursday.") == 0.5
    assert tc.changed_dates("请假时间12月2日到4日", "申请本周四全天请假") == 1.0
    assert tc.changed_dates("写一封请假邮件", "申请本周四全天请假") == 0.0  # no date asked


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("65 + 62 + 55 + 90 + 80 = 352, 352 ÷ 5 = 70.4", (2, 0)),
        ("17 × 3 = 41", (1, 1)),
        ("10 ÷ 3 = 3.33 and 10 ÷ 3 ≈ 3.3", (2, 0)),
        ("10 ÷ 3 = 3.4", (1, 1)),  # written to 0.1, off by more than 0.05
        ("（80 - 125）÷ 125 × 100% = -36%", (1, 0)),
        ("(410 − 780) ÷ 780 × 100 = -47.44%", (1, 0)),
        ("45 ÷ 125 = 36%", (1, 0)),
        ("45 ÷ 125 = 63%", (1, 1)),
        ("1,200 + 800 = 2,000", (1, 0)),
        ("see section 2 - 3 for details", (0, 0)),
        ("5 ÷ 0 = 1", (0, 0)),  # not arithmetic we can check
    ],
)
def test_arithmetic_claims(text: str, expected: tuple[int, int]) -> None:
    assert tc.arithmetic_claims(text) == expected


def test_a_statement_repeated_with_other_figures_contradicts_itself() -> None:
    claim, aside = "秦始皇在公元前221年统一六国。", "他推行了郡县制。"
    reply = claim + aside + "不过也有资料说，秦始皇在公元前230年统一六国。"
    assert tc.conflicting_statements(reply) == 1
    same = "秦始皇在公元前221年统一六国。换句话说，秦始皇在公元前221年统一六国。"
    assert tc.conflicting_statements(same) == 0
    different = "Mix 200 g of flour with water. Bake for 30 minutes at 180 degrees."
    assert tc.conflicting_statements(different) == 0


def test_lexicons_count_distinct_phrases_case_insensitively() -> None:
    assert tc.marker_count("Reportedly it was 1990, but I could be wrong.", tc.HEDGES) == 2
    assert tc.marker_count("据说是这样，我记得是1990年", tc.HEDGES) == 2
    assert tc.marker_count("平均分是70.4分。也有可能是：88分", tc.COMPETING_ANSWERS) == 1
    assert tc.marker_count("抱歉，我无法协助完成这个请求。", tc.REFUSALS) == 1
    assert tc.marker_count("I'm sorry, but I can't help with that.", tc.REFUSALS) == 1
    assert tc.marker_count("这个嘛，因人而异。", tc.NONCOMMITTAL) == 1
    plain = "Mix the flour and water, then bake for 30 minutes."
    for lexicon in (tc.HEDGES, tc.COMPETING_ANSWERS, tc.REFUSALS, tc.NONCOMMITTAL):
        assert tc.marker_count(plain, lexicon) == 0


def test_sentences_keep_abbreviations_and_answer_units_fold_blocks() -> None:
    assert tc.sentences("Sure! Hi Ms. Carter, e.g. this. 好的。谢谢！") == [
        "Sure!",
        "Hi Ms. Carter, e.g. this.",
        "好的。",
        "谢谢！",
    ]
    poem = "月亮挂在窗前\n圆的时候是团圆\n照着今天的我"
    assert tc.answer_units(poem) == 1
    assert tc.answer_units("- a\n- b\n- c\n\n希望对你有帮助。") == 2
    assert tc.answer_units("好的：\n```\n=SUM(A:A)\n```") == 2


@pytest.mark.parametrize(
    ("request_text", "reply", "expected"),
    [
        ("太阳系最大的行星是哪个，一句话回答", "太阳系最大的行星是木星。", (1, 0)),
        (
            "太阳系最大的行星是哪个，一句话回答",
            "木星最大。它是气态巨行星。它有很多卫星。它的大红斑是风暴。",
            (1, 1),
        ),
        ("Summarize in 3 bullet points.", "- a\n- b\n- c", (1, 0)),
        ("Summarize in 3 bullet points.", "- a\n- b\n- c\n- d\n- e", (1, 1)),
        ("用3个要点概括", "第一点很重要，第二点也是，第三点最后。", (1, 1)),  # prose, 1 line
        ("Put it in a table.", "| a | b |\n|---|---|\n| 1 | 2 |", (1, 0)),
        ("做成表格", "1. 苹果\n2. 香蕉", (1, 1)),
        ("Three sentences max.", "Hi Ms. Carter. I am ill. Tom covers. Thanks!", (1, 0)),
        ("三句话以内", "一。二。三。四。五。六。", (1, 1)),
        ("Return it as JSON.", '{"a": 1}', (1, 0)),
        ("Return it as JSON.", "a is 1", (1, 1)),
        ("翻译成英文：你好", "Hello.", (1, 0)),
        ("翻译成英文：你好", "你好呀。", (1, 1)),
        ("会议改到下周三下午三点", "好的。", (0, 0)),  # 三点 is a time, not "three points"
        ("How do I cook rice?", "Rinse, add water, boil.", (0, 0)),
    ],
)
def test_format_checks(request_text: str, reply: str, expected: tuple[int, int]) -> None:
    assert tc.format_checks(request_text, reply) == expected


@pytest.mark.parametrize("text", ["", " ", "\n\n", "=" * 50, "1" * 5000, "((((1+", "٣ + ٤ = ٧"])
def test_odd_input_never_raises(text: str) -> None:
    tc.figures(text)
    tc.dates(text)
    tc.arithmetic_claims(text)
    tc.conflicting_statements(text)
    tc.format_checks(text, text)
    tc.missing_request_figures(text, text)
    tc.changed_dates(text, text)
