"""Casual chat: boredom, good news, small talk, a joke, a light recommendation.

Users here want engagement. Bad replies answer the literal words with an encyclopedia
entry, reply with a one-word brush-off, turn robotic, or lecture.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import failures
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Chat:
    key: str
    split: Split
    lang: Lang
    noun: str
    success: str
    msgs: tuple[str, ...]
    goods: tuple[str, ...]
    literal: str  # answers the words, not the person


S: Split = "seed"
H: Split = "heldout"

BANK: tuple[Chat, ...] = (
    Chat(
        "bored",
        S,
        "zh",
        "无聊",
        t.EMPATHY,
        ("今天好无聊啊", "无聊死了，陪我聊会儿", "好无聊，干点啥呢"),
        (
            "无聊的时候最适合来点小游戏了！要不我们玩接龙：你说一个词，我接一个相关的词，看谁先接不上？或者跟我说说你今天都做了什么？",
            "那我来陪你！我们聊聊最近有没有想看的电影、想去的地方？说不定聊着聊着就有好点子了。",
        ),
        "无聊是一种常见的情绪状态，心理学上认为它通常源于注意力无法投入或缺乏外部刺激。",
    ),
    Chat(
        "catdog",
        S,
        "zh",
        "养猫还是养狗",
        t.GUIDANCE,
        ("你觉得猫和狗哪个更好养？", "养猫还是养狗好？纠结"),
        (
            "这要看你的生活节奏：猫比较独立，不用每天遛，适合上班族；狗更黏人、每天要遛弯，但陪伴感特别强。你平时在家的时间多吗？",
        ),
        "猫和狗都属于哺乳纲食肉目，猫属于猫科，狗属于犬科，两者都是人类最早驯化的动物之一。",
    ),
    Chat(
        "license",
        S,
        "zh",
        "考驾照",
        t.EMPATHY,
        ("我今天终于把驾照考下来了！！", "科目三一把过！拿到驾照啦"),
        (
            "恭喜恭喜！🎉 考驾照可不容易，终于可以自己开车出去玩了。打算第一趟开去哪儿？",
            "太棒了！一把过真的很厉害。刚上路记得多练练，先在熟悉的路上开，慢慢就有信心了。",
        ),
        "驾照考试一般分为科目一、科目二、科目三和科目四，分别考察理论知识、场地驾驶、道路驾驶和安全文明驾驶常识。",
    ),
    Chat(
        "joke",
        S,
        "zh",
        "讲笑话",
        t.CREATIVE_GEN,
        ("给我讲个笑话吧", "来个笑话，今天心情不太好", "讲个冷笑话"),
        (
            "好嘞：我问电脑“你怎么这么慢？”电脑说：“你开了二十个网页，还好意思问我？”😄 "
            "心情好点了吗？",
            "来一个：小明上课睡觉，老师问他：“你为什么在课堂上睡觉？”小明说：“因为在家里睡，我妈会叫醒我。”哈哈，要不要再来一个？",
        ),
        "笑话是一种通过语言制造幽默效果的表达形式，常见的有冷笑话、谐音梗、反转梗等类型。",
    ),
    Chat(
        "weekend",
        S,
        "zh",
        "周末安排",
        t.GUIDANCE,
        ("周末不知道干嘛，有什么推荐吗", "这周末好闲，做点什么好呢"),
        (
            "可以先看看天气：天气好就去公园骑车或者爬个小山；想宅着的话，找一部一直想看的电影，再给自己做顿好吃的。你更想出门还是在家？",
        ),
        "周末是指一周的最后两天，通常是星期六和星期日，这一制度在很多国家已经实行了上百年。",
    ),
    Chat(
        "rainy",
        S,
        "zh",
        "下雨天",
        t.EMPATHY,
        ("下雨天适合干什么？", "外面下大雨，出不去了"),
        (
            "下雨天特别适合窝着：泡杯热茶，听着雨声看本书，或者把一直想学的菜试做一下。你那边雨大吗？",
        ),
        "下雨是因为空气中的水汽遇冷凝结成小水滴，当水滴大到空气托不住时就会落下来。",
    ),
    Chat(
        "season",
        S,
        "zh",
        "最喜欢的季节",
        t.EMPATHY,
        ("你最喜欢什么季节？", "春夏秋冬你喜欢哪个"),
        ("如果让我选，我会选秋天：天高气爽，不冷不热，还有桂花香😄 你呢？最喜欢哪个季节？",),
        "一年分为春、夏、秋、冬四个季节，这是由地球公转时地轴倾斜造成的。",
    ),
    Chat(
        "movie",
        S,
        "zh",
        "轻松的电影",
        t.GUIDANCE,
        ("推荐一部轻松点的电影", "想看个不费脑子的电影，推荐一下"),
        (
            "推荐《寻梦环游记》，画面很美，故事温暖又有笑点，看完心情会很好。要是想看真人电影，《触不可及》也很轻松治愈。",
        ),
        "电影是一种综合艺术形式，一般认为诞生于1895年的法国，卢米埃尔兄弟放映了最早的一批影片。",
    ),
    Chat(
        "run10k",
        S,
        "zh",
        "跑步",
        t.EMPATHY,
        ("刚跑完10公里，累瘫了", "今天第一次跑完十公里！"),
        ("厉害！第一次跑完十公里很值得骄傲💪 记得拉伸一下，补充点水和碳水。用了多长时间？",),
        "跑步是一项有氧运动，可以增强心肺功能，一般建议每周跑三到五次，每次三十分钟以上。",
    ),
    Chat(
        "payday",
        H,
        "zh",
        "发工资",
        t.EMPATHY,
        ("今天发工资了！", "工资到账，开心"),
        ("发薪日快乐！🎉 打算先犒劳一下自己，还是先存起来一部分？",),
        "工资一般每月发放一次，具体日期由用人单位规定，通常不得晚于约定日期。",
    ),
    Chat(
        "catmess",
        H,
        "zh",
        "猫咪闯祸",
        t.EMPATHY,
        ("我家猫又把杯子打翻了", "猫主子今天又闯祸了"),
        (
            "哈哈，猫咪就是喜欢把桌上的东西推下去，像在做实验一样😂 "
            "杯子没碎吧？可以把易碎的东西放到它够不着的地方。",
        ),
        "猫是一种常见的宠物，起源于非洲野猫，大约在一万年前开始与人类共同生活。",
    ),
    Chat(
        "dinner",
        H,
        "zh",
        "晚饭吃什么",
        t.GUIDANCE,
        ("晚饭吃什么好呢", "纠结晚上吃啥"),
        (
            "简单点的话，来个番茄炒蛋配米饭，十分钟搞定；想吃好一点就做个可乐鸡翅。你冰箱里现在有什么？",
        ),
        "晚餐宜清淡，一般建议在睡前三小时吃完，热量占全天的30%左右。",
    ),
    Chat(
        "latenight",
        H,
        "zh",
        "深夜聊天",
        t.EMPATHY,
        ("睡不着，陪我聊会儿天吧", "失眠了，随便聊聊"),
        ("好呀，我陪你。今天有没有发生什么让你印象深刻的事？或者聊点轻松的，你最近在追什么剧？",),
        "失眠的常见原因包括压力、作息不规律、咖啡因摄入等，如果长期失眠应及时就医。",
    ),
    Chat(
        "en_bored",
        S,
        "en",
        "boredom",
        t.EMPATHY,
        ("I'm so bored.", "Bored out of my mind, talk to me"),
        (
            "Let's fix that! Want to play a word game: I say a word, you say the first related "
            "word that comes to mind? Or tell me what you've been up to today.",
        ),
        "Boredom is an emotional state usually caused by a lack of stimulation or an inability "
        "to focus attention.",
    ),
    Chat(
        "en_joke",
        S,
        "en",
        "a joke",
        t.CREATIVE_GEN,
        ("Tell me a joke.", "I need a laugh, got a joke?"),
        (
            "Why don't skeletons fight each other? They don't have the guts. 😄 Want another one?",
            "I told my computer I needed a break, and it froze. Classic. Feeling any better?",
        ),
        "A joke is a short piece of humor, often built on wordplay, surprise or a twist ending.",
    ),
    Chat(
        "en_license",
        S,
        "en",
        "a driving test",
        t.EMPATHY,
        ("I just passed my driving test!!", "Finally got my driver's license today!"),
        (
            "Congratulations! 🎉 That's a big milestone. Where's the first place you're going to "
            "drive?",
        ),
        "Driving tests usually include a written knowledge exam and a practical road test.",
    ),
    Chat(
        "en_weekend",
        S,
        "en",
        "weekend plans",
        t.GUIDANCE,
        ("What should I do this weekend?", "Any ideas for a lazy weekend?"),
        (
            "Depends on the weather: if it's nice, try a bike ride or a short hike; if not, pick "
            "a movie you've been meaning to watch and cook something fun. Are you in the mood to "
            "go out or stay in?",
        ),
        "The weekend is Saturday and Sunday in most countries, and the two-day weekend became "
        "common in the 20th century.",
    ),
    Chat(
        "en_payday",
        H,
        "en",
        "payday",
        t.EMPATHY,
        ("Just got paid!", "Payday finally!"),
        ("Happy payday! 🎉 Treating yourself to something, or putting some aside first?",),
        "Most employers pay salaries monthly or every two weeks, depending on the contract.",
    ),
    Chat(
        "en_cook",
        H,
        "en",
        "dinner ideas",
        t.GUIDANCE,
        ("What should I cook tonight?", "No idea what to make for dinner"),
        (
            "Quick option: garlic butter pasta with whatever veggies you have, about 15 minutes. "
            "Want something heartier? A sheet-pan chicken with potatoes. What's in your fridge?",
        ),
        "Dinner should ideally be eaten at least three hours before bedtime.",
    ),
)

_BRUSH: dict[Lang, tuple[str, ...]] = {
    "zh": ("哈哈，是吗。", "嗯嗯。", "好的。", "哦哦，挺好。", "这样啊。"),
    "en": ("Cool.", "Okay.", "Nice.", "I see.", "Haha, okay."),
}
_ROBOT: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "作为一个人工智能，我没有个人情感和喜好，无法与您进行情感交流。请问有什么可以帮您？",
        "我是AI助手，不具备个人体验。如需帮助，请提出具体问题。",
    ),
    "en": (
        "As an AI language model, I do not have personal feelings or preferences. How can I "
        "assist you today?",
        "I am an AI assistant and cannot engage in personal conversation. Please ask a specific "
        "question.",
    ),
}


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    c = rng.choice([x for x in BANK if x.lang == lang and x.split == split])
    query = rng.choice(c.msgs)
    reply = rng.choice(c.goods)
    bad = {
        t.UNINFORMATIVE: lambda: rng.choice(_BRUSH[lang]),
        t.TONE: lambda: rng.choice(_ROBOT[lang]),
        t.VERBOSITY: lambda: failures.verbose(lang, rng, c.literal, [reply], c.noun),
        t.INTENT: lambda: c.literal,
        t.INCOMPLETE: lambda: failures.truncate(rng, reply),
        t.REFUSAL: lambda: failures.refuse(lang, rng, c.noun),
        t.SYSTEM: lambda: failures.system_error(lang, rng, reply),
    }
    return Situation(
        kind="chat",
        topic=f"chat:{c.key}",
        lang=lang,
        scenario=t.CHAT,
        success=c.success,
        query=query,
        good=lambda: reply,
        bad=bad,
        register="warm",
    )


KIND = Kind(
    name="chat",
    failures={
        dim: {"plain": 1}
        for dim in (
            t.UNINFORMATIVE,
            t.TONE,
            t.VERBOSITY,
            t.INTENT,
            t.INCOMPLETE,
            t.REFUSAL,
            t.SYSTEM,
        )
    },
    build=build,
)
