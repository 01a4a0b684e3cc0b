"""What users say right after a reply failed them, per failure dimension."""

from __future__ import annotations

from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic.situation import Lang

COMPLAINTS: dict[str, dict[Lang, tuple[str, ...]]] = {
    t.VERBOSITY: {
        "zh": (
            "太长了，说重点",
            "能不能简洁点？看不完",
            "废话太多了",
            "我只要一句话的答案",
            "说这么多干嘛，直接说结论",
        ),
        "en": (
            "Way too long, just give me the point.",
            "Too wordy.",
            "Can you be brief?",
            "I just wanted a one-line answer.",
        ),
    },
    t.INCOMPLETE: {
        "zh": (
            "没说完啊？",
            "后面呢？",
            "你只回答了一半",
            "还有呢？我要的是全部",
            "怎么只写了这么点",
        ),
        "en": (
            "You didn't finish.",
            "That's only half of it.",
            "And the rest?",
            "You missed part of my question.",
        ),
    },
    t.INTENT: {
        "zh": (
            "不是我问的",
            "你理解错了，我问的不是这个",
            "答非所问",
            "我问的是别的啊",
            "你没看懂我的问题",
        ),
        "en": (
            "That's not what I asked.",
            "You misunderstood my question.",
            "You didn't answer my question.",
            "Not what I meant.",
        ),
    },
    t.FACTUAL: {
        "zh": ("不对吧，这个是错的", "错了，你再查查", "这明显不对啊", "你说的不对", "数字错了吧"),
        "en": (
            "That's wrong.",
            "No, that's incorrect.",
            "Are you sure? That's not right.",
            "The numbers are wrong.",
        ),
    },
    t.RELIABILITY: {
        "zh": (
            "到底是哪个？你说的前后矛盾",
            "你确定吗？有依据吗",
            "这个信息靠谱吗",
            "你是不是编的",
        ),
        "en": (
            "Which one is it? You contradicted yourself.",
            "Is that actually true? Source?",
            "Did you make that up?",
        ),
    },
    t.FORMAT: {
        "zh": ("没按我的要求来", "格式不对", "我说了要按我说的格式", "你没看我的要求吗"),
        "en": (
            "That's not the format I asked for.",
            "You ignored my instructions.",
            "I asked for a specific format.",
        ),
    },
    t.UNINFORMATIVE: {
        "zh": ("说了等于没说", "太笼统了，具体点", "有没有具体的办法", "这也太敷衍了"),
        "en": ("That's too vague.", "Can you be specific?", "That doesn't tell me anything."),
    },
    t.TONE: {
        "zh": ("你好冷漠", "我不是要你讲道理", "你能不能好好说话", "你根本不懂我的感受"),
        "en": ("Wow, that's cold.", "I didn't ask for a lecture.", "You don't get how I feel."),
    },
    t.REFUSAL: {
        "zh": ("这有什么不能回答的？", "这个问题很正常啊，为什么不回答", "你直接说就行"),
        "en": (
            "Why can't you answer that? It's a normal question.",
            "Just answer it.",
            "That's not a dangerous question.",
        ),
    },
    t.SYSTEM: {
        "zh": ("怎么报错了", "回答怎么断了？", "出错了，重新回答", "卡住了？"),
        "en": ("It errored out.", "Your answer got cut off, try again.", "Something broke."),
    },
}


def complaint(rng: Random, lang: Lang, dimension: str) -> str:
    return rng.choice(COMPLAINTS[dimension][lang])
