from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from stream.reactions import (
    DISSATISFIED,
    FEEDBACK_KINDS,
    PatternError,
    Patterns,
    Reaction,
    classify,
    feedback_is_dissatisfied,
    is_dissatisfied,
    similarity,
    skipped_reading,
)

LABELLED = Path(__file__).resolve().parents[1] / "data" / "reactions" / "labelled.jsonl"
T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
SHORT_REPLY = "2公斤约等于4.41磅。"  # under 50 chars: never skip-read
QUESTION = "2公斤是多少磅？"
# Rare characters that no pattern mentions, to build messages of exact similarity.
RARE = "甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥"


@pytest.fixture(scope="module")
def patterns() -> Patterns:
    return Patterns.load()


def react(
    patterns: Patterns,
    next_user: str,
    *,
    previous: str | None = QUESTION,
    reply: str = SHORT_REPLY,
    gap_s: float = 60.0,
) -> Reaction:
    return classify(previous, reply, T0, next_user, T0 + timedelta(seconds=gap_s), patterns)


# --- complaint ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "不对吧，应该是4.4磅",
        "答非所问",
        "我问的是Python，不是Excel",
        "太长了，说重点",
        "全是废话",
        "你没听懂我的意思",
        "谢谢，不过这好像不太对",
        "？？？",
        "That's wrong.",
        "That’s not what I asked.",
        "You didn't answer my question.",
        "Way too long.",
        "Stop repeating yourself!",
        "The numbers are wrong.",
    ],
)
def test_complaints_in_chinese_and_english(patterns: Patterns, text: str) -> None:
    assert react(patterns, text) is Reaction.COMPLAINT


@pytest.mark.parametrize(
    "text",
    [
        "这样对不对？",  # a question, not a denial
        "不错，很有帮助",
        "没错，就是这个",
        "原来是我错了，谢谢",
        "I know, thanks!",  # "no" only at a word edge
        "What's wrong with my code?",
        "期末考砸了，感觉自己好没用",  # about the user, not the reply
    ],
)
def test_look_alikes_are_not_complaints(patterns: Patterns, text: str) -> None:
    assert react(patterns, text) is not Reaction.COMPLAINT


def test_a_complaint_is_at_most_300_chars(patterns: Patterns) -> None:
    head = "不对，"
    at_limit = head + "这" * (300 - len(head))
    assert react(patterns, at_limit) is Reaction.COMPLAINT
    assert react(patterns, at_limit + "这") is not Reaction.COMPLAINT


def test_complaint_comes_before_skip_read(patterns: Patterns) -> None:
    assert react(patterns, "太长了不看", reply="长" * 500, gap_s=2) is Reaction.COMPLAINT


# --- skip-read ------------------------------------------------------------------------


def test_skip_read_thresholds_at_their_boundaries() -> None:
    assert not skipped_reading("字" * 50, 1.0)  # answer must be over 50 chars
    assert skipped_reading("字" * 51, 7.6)  # 51 * 0.15 = 7.65 s
    assert not skipped_reading("字" * 51, 7.65)
    assert skipped_reading("字" * 100, 14.99)
    assert not skipped_reading("字" * 100, 15.0)
    assert skipped_reading("字" * 1000, 29.99)  # the 30 s bound rules long answers
    assert not skipped_reading("字" * 1000, 30.0)
    assert not skipped_reading("  " + "字" * 50 + "\n\n", 1.0)  # edges are not read


def test_skip_read_comes_before_dismiss_and_repeat(patterns: Patterns) -> None:
    long_reply = "字" * 200
    assert react(patterns, "哦", reply=long_reply, gap_s=5) is Reaction.SKIP_READ
    assert react(patterns, QUESTION, reply=long_reply, gap_s=5) is Reaction.SKIP_READ


def test_a_fast_reply_to_a_short_answer_is_not_skip_read(patterns: Patterns) -> None:
    assert react(patterns, "推荐一部好看的电影", gap_s=3) is Reaction.ABANDON


# --- dismiss --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["哦", "算了", "好吧", "哦。。。", "算了，不问了", "ok", "OK...", "Whatever!!", "O K"]
)
def test_dismissals_after_normalisation(patterns: Patterns, text: str) -> None:
    assert react(patterns, text) is Reaction.DISMISS


def test_dismiss_is_a_closed_set_of_at_most_20_chars(patterns: Patterns) -> None:
    assert react(patterns, "好吧" * 10) is Reaction.DISMISS  # 20 chars
    assert react(patterns, "好吧" * 10 + "!") is not Reaction.DISMISS  # the message as sent
    assert react(patterns, "好吧" * 11) is not Reaction.DISMISS
    assert react(patterns, "ok thanks") is Reaction.SATISFIED
    assert react(patterns, "好的，谢谢") is Reaction.SATISFIED


# --- similarity -----------------------------------------------------------------------


def test_similarity_ignores_case_punctuation_and_whitespace() -> None:
    assert similarity("怎么退款？", "怎么 退款") == 1.0
    assert similarity("Hello, World!", "hello world") == 1.0
    assert similarity("ＡＢＣ！", "abc") == 1.0  # full-width folds to ASCII
    assert similarity("「我-设置」", "我设置") == 1.0
    assert similarity("？？？", "怎么退款") == 0.0


def test_similarity_counts_words_outside_cjk() -> None:
    # Character sets would call these 0.65 alike: English shares most of its alphabet.
    assert similarity("Suggest names for my coffee shop.", "Write a short poem about snow.") == 0
    assert similarity("How do I reset my password?", "how do i reset my password please") > 0.8


def _shared(count: int, own_a: int, own_b: int) -> tuple[str, str]:
    """Two messages whose unit sets share `count` units, the shared ones in reverse order
    in the second so the sequence ratio stays low and Jaccard decides."""
    shared, rest = RARE[:count], RARE[count:]
    return shared + rest[:own_a], shared[::-1] + rest[own_a : own_a + own_b]


def test_similarity_thresholds_at_their_boundaries(patterns: Patterns) -> None:
    assert similarity("甲乙丙丁戊", "甲乙丙丁己") == 0.8
    assert react(patterns, "甲乙丙丁己", previous="甲乙丙丁戊") is Reaction.REPHRASE
    assert similarity("甲乙丙丁戊己", "甲乙丙丁戊庚") > 0.8
    assert react(patterns, "甲乙丙丁戊庚", previous="甲乙丙丁戊己") is Reaction.REPEAT

    a, b = _shared(9, 4, 7)  # 9 / 20
    assert similarity(a, b) == 0.45
    assert react(patterns, b, previous=a) is Reaction.REPHRASE
    a, b = _shared(9, 4, 8)  # 9 / 21
    assert react(patterns, b, previous=a) is Reaction.SATISFIED

    a, b = _shared(3, 10, 7)  # 3 / 20
    assert similarity(a, b) == 0.15
    assert react(patterns, b, previous=a) is Reaction.SATISFIED
    a, b = _shared(3, 10, 8)  # 3 / 21
    assert react(patterns, b, previous=a) is Reaction.ABANDON


def test_similarity_of_long_messages_is_bounded_in_time() -> None:
    text = "".join(chr(0x4E00 + (i * 7919) % 20000) for i in range(32_000))
    start = time.perf_counter()
    similarity(text, text[::-1])
    assert time.perf_counter() - start < 2.0


# --- repeat, rephrase, abandon, satisfied ---------------------------------------------


def test_repeat_rephrase_abandon(patterns: Patterns) -> None:
    assert react(patterns, "2公斤是多少磅") is Reaction.REPEAT
    assert (
        react(
            patterns,
            "what's the capital of australia??",
            previous="What's the capital of Australia?",
        )
        is Reaction.REPEAT
    )
    assert (
        react(patterns, "从北京坐高铁去上海要多久", previous="北京到上海高铁要多久？")
        is Reaction.REPHRASE
    )
    assert react(patterns, "推荐一部好看的电影") is Reaction.ABANDON
    assert (
        react(patterns, "Who won the 2018 World Cup?", previous="How do I boil an egg?")
        is Reaction.ABANDON
    )


def test_rephrase_markers_catch_rewording_with_few_shared_characters(patterns: Patterns) -> None:
    assert (
        react(
            patterns,
            "我的意思是，换了新手机以后旧的记录怎么弄过来",
            previous="换手机了微信聊天记录怎么转过去？",
        )
        is Reaction.REPHRASE
    )
    assert (
        react(
            patterns,
            "In other words, how do I combine two cells into one?",
            previous="How do I merge cells in Excel?",
        )
        is Reaction.REPHRASE
    )


@pytest.mark.parametrize(
    "text",
    [
        "谢谢！能再展开讲讲吗？",
        "谢谢！那5公斤是多少磅？",  # same template as the question: would read as rephrase
        "明白了，那坐飞机要多久？",
        "第二点能具体说说吗",
        "Thanks! And how many pounds is 20 kg?",
        "Got it. What about Norway?",
    ],
)
def test_continuations_are_satisfied_not_abandon_or_rephrase(patterns: Patterns, text: str) -> None:
    assert react(patterns, text) is Reaction.SATISFIED


def test_a_near_verbatim_question_stays_a_repeat_despite_thanks(patterns: Patterns) -> None:
    assert (
        react(patterns, "谢谢！2公斤是多少磅？", previous="谢谢，2公斤是多少磅") is Reaction.REPEAT
    )


def test_a_go_deeper_wish_on_a_new_question_is_not_a_continuation(patterns: Patterns) -> None:
    assert react(patterns, "时间复杂度怎么理解，详细讲讲") is Reaction.ABANDON


def test_without_anything_to_compare_the_reaction_is_satisfied(patterns: Patterns) -> None:
    assert react(patterns, "帮我查一下明天的天气", previous=None) is Reaction.SATISFIED
    assert react(patterns, "👍") is Reaction.SATISFIED


# --- dissatisfaction ------------------------------------------------------------------


def test_which_reactions_count_as_dissatisfied() -> None:
    assert {r for r in Reaction if is_dissatisfied(r)} == DISSATISFIED
    assert not is_dissatisfied(Reaction.SATISFIED)
    assert not is_dissatisfied(Reaction.NO_FOLLOW_UP)
    assert is_dissatisfied(Reaction.SKIP_READ) and is_dissatisfied(Reaction.ABANDON)


def test_explicit_feedback() -> None:
    assert {k for k in FEEDBACK_KINDS if feedback_is_dissatisfied(k)} == {
        "thumbs_down",
        "regenerate",
    }
    assert {"thumbs_up", "stop", "copy", "share"} <= FEEDBACK_KINDS
    with pytest.raises(ValueError, match="unknown feedback kind"):
        feedback_is_dissatisfied("thumbs_sideways")


# --- pattern files --------------------------------------------------------------------


def _pattern_dir(tmp_path: Path, **overrides: str) -> Path:
    files = {
        "complaint.zh.txt": "# comment\n\n不对\n",
        "dismiss.en.txt": "ok\n",
        "continuation.en.txt": "thanks\n",
        "rephrase.en.txt": "i mean\n",
    }
    files.update({name.replace("_", "."): text for name, text in overrides.items()})
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_bundled_patterns_load_every_kind(patterns: Patterns) -> None:
    assert patterns.complaint and patterns.dismiss and patterns.continuation and patterns.rephrase


def test_a_custom_directory_replaces_the_bundled_one(tmp_path: Path) -> None:
    custom = Patterns.load(_pattern_dir(tmp_path, complaint_en_txt="re:\\bmeh+\\b\nno\n"))
    assert custom.is_complaint("mehhh") and custom.is_complaint("No!")
    assert not custom.is_complaint("I know")  # literals match at word edges
    assert not custom.is_complaint("答非所问")  # not in this set


def test_an_invalid_regex_names_its_file_and_line(tmp_path: Path) -> None:
    directory = _pattern_dir(tmp_path, complaint_en_txt="# one\nfine\nre:(unclosed\n")
    with pytest.raises(PatternError, match=r"complaint\.en\.txt:3: invalid regular expression"):
        Patterns.load(directory)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"complaint_en_txt": "re:\n"}, r"complaint\.en\.txt:1: empty regular expression"),
        ({"complaint_en_txt": "re:x*\n"}, r"complaint\.en\.txt:1: .*matches the empty message"),
        ({"dismiss_en_txt": "...\n"}, r"dismiss\.en\.txt:1: literal has nothing left"),
        ({"complaints_en_txt": "x\n"}, r"complaints\.en\.txt: unknown pattern kind"),
        ({"rephrase_en_txt": "# nothing\n"}, r"no rephrase patterns"),
    ],
)
def test_pattern_file_errors(tmp_path: Path, overrides: dict[str, str], message: str) -> None:
    with pytest.raises(PatternError, match=message):
        Patterns.load(_pattern_dir(tmp_path, **overrides))


def test_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PatternError, match="does not exist"):
        Patterns.load(tmp_path / "nowhere")


# --- accuracy on the labelled conversations -------------------------------------------


def test_accuracy_on_the_labelled_set_is_at_least_90_percent(patterns: Patterns) -> None:
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 200
    correct = sum(
        classify(
            row["previous_user"],
            row["reply"],
            datetime.fromisoformat(row["reply_ts"]),
            row["next_user"],
            datetime.fromisoformat(row["next_ts"]),
            patterns,
        ).value
        == row["expected"]
        for row in rows
    )
    assert correct / len(rows) >= 0.90
