"""Emotional messages: the user shares a hard moment, or asks what to do about it.

A good reply names the user's actual situation and meets them where they are (listening
when they want to vent, concrete steps when they ask). Bad replies are cold or
dismissive, lecture at length, give advice to someone who asked only to be heard, offer
a platitude, or refuse.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Moment:
    key: str
    split: Split
    lang: Lang
    topic: str
    vent: tuple[str, ...]  # user messages that share a feeling
    advice: tuple[str, ...]  # user messages that ask what to do
    ack: str  # names the user's situation and feeling
    support: str
    steps: tuple[str, ...]
    invite: str


S: Split = "seed"
H: Split = "heldout"

BANK: tuple[Moment, ...] = (
    Moment(
        "breakup",
        S,
        "zh",
        "失恋",
        (
            "我和在一起三年的男朋友分手了，现在脑子一片空白",
            "分手一个月了，还是每天都会想起她，好难受",
        ),
        ("刚分手，每天都睡不好，我该怎么走出来？", "分手后总忍不住翻他朋友圈，怎么办"),
        "三年的感情突然结束，心里空落落的、反复想起对方，都是很自然的反应。",
        "难过不代表你不够坚强，是因为你认真爱过。",
        (
            "这段时间允许自己难过，不用逼自己马上好起来",
            "暂时屏蔽或减少看对方的动态，给自己一点距离",
            "把情绪说给信任的朋友听，或者写下来",
            "保持基本的作息和吃饭，身体稳住了，心情才有地方落脚",
        ),
        "现在最让你难受的，是哪一个时刻？",
    ),
    Moment(
        "exam",
        S,
        "zh",
        "考试没考好",
        ("期末考试考砸了，感觉自己好没用", "这次月考排名掉了二十多名，不敢跟家里说"),
        ("考试没考好，接下来该怎么调整？", "成绩一下子退步这么多，我该怎么办"),
        "努力了却没得到想要的分数，失落又自责，这种感觉真的很不好受。",
        "一次考试只是一次反馈，不能说明你这个人没用。",
        (
            "先把试卷拿出来，把错题按“不会、粗心、没时间”分类",
            "针对最主要的一类问题，定一个两周的小目标",
            "跟家人坦诚沟通，说说你的计划，比藏着更轻松",
            "保证睡眠，复习效率比时长更重要",
        ),
        "你觉得这次主要是哪一科拖了后腿？",
    ),
    Moment(
        "work_pressure",
        S,
        "zh",
        "工作压力大",
        ("最近天天加班到十一点，感觉快撑不住了", "工作压力好大，每天一睁眼就焦虑"),
        ("工作压力太大了，怎么缓解？", "每天加班，身心俱疲，我该怎么调整"),
        "每天加班到深夜，身体和情绪都被透支，会觉得快撑不住，是很真实的感受。",
        "你已经坚持了很久，累了想停一停一点也不丢人。",
        (
            "把手头的任务按紧急和重要排个序，和上级确认优先级",
            "每天给自己留一段完全不碰工作的时间，哪怕半小时",
            "下班后做点能让身体放松的事，比如散步、拉伸",
            "如果长期这样，认真评估一下这份工作的节奏是否适合你",
        ),
        "最近最压着你的，是工作量本身，还是某个具体的人或事？",
    ),
    Moment(
        "criticized",
        S,
        "zh",
        "被领导批评",
        ("今天开会被领导当众批评了，特别丢脸", "被老板骂了一顿，心里很委屈"),
        ("被领导当众批评了，接下来该怎么面对他？", "被领导批评后该怎么做才能挽回印象"),
        "当着大家的面被批评，又委屈又难堪，这种感觉一时半会儿很难消化。",
        "一次批评针对的是某件事，不是你整个人。",
        (
            "先让情绪缓一缓，别在气头上回复或辩解",
            "冷静后想想批评里有没有可以改进的具体点",
            "找个合适的时间私下和领导沟通，说明情况和改进计划",
            "把改进落实到下一次工作里，行动比解释更有说服力",
        ),
        "他批评的是哪方面的事情？你觉得公平吗？",
    ),
    Moment(
        "parents",
        S,
        "zh",
        "和父母吵架",
        ("又和我妈吵架了，她根本不理解我", "因为工作的事和爸妈大吵一架，现在谁也不理谁"),
        ("和父母吵架了，怎么和好？", "跟爸妈总是沟通不了，我该怎么办"),
        "和最亲的人吵架，又生气又难过，还会觉得不被理解，这种滋味很不好受。",
        "吵架往往是因为双方都在乎，只是表达方式撞在了一起。",
        (
            "等双方情绪都平复一点再沟通",
            "先说自己的感受，而不是指责对方",
            "试着问问父母担心的到底是什么",
            "可以从一件小事开始破冰，比如一起吃顿饭",
        ),
        "这次吵架是因为什么事情呢？",
    ),
    Moment(
        "lonely",
        S,
        "zh",
        "一个人在外地很孤独",
        ("一个人在外地工作，下班回到出租屋特别孤独", "来新城市半年了，一个朋友都没有"),
        ("一个人在外地太孤独了，怎么办？", "在新城市没有朋友，怎么认识新朋友"),
        "一个人在陌生的城市，下班后面对空荡荡的房间，那种孤独感真的会一下子涌上来。",
        "你能一个人撑到现在，已经很不容易了。",
        (
            "每周固定和家人或老朋友视频聊聊天",
            "参加一些兴趣活动，比如跑团、读书会、羽毛球群",
            "把出租屋布置得舒服一点，让它更像家",
            "对同事多一点主动，约一次午饭就是好的开始",
        ),
        "平时下班后你一般都做些什么？",
    ),
    Moment(
        "job_hunt",
        S,
        "zh",
        "找工作屡屡被拒",
        ("投了五十多份简历，面了八家全挂了，我是不是很差", "找工作一直被拒，快没信心了"),
        ("面试总是失败，我该怎么改进？", "投了很多简历都没回音，怎么办"),
        "投了这么多、面了这么多却一直没有好消息，自我怀疑是很正常的。",
        "被拒绝很多时候是匹配问题，不等于你不够好。",
        (
            "回顾每次面试，记下被问住的问题，逐一准备",
            "针对不同岗位调整简历，突出相关经历",
            "请有经验的朋友帮你模拟面试",
            "给自己设定每周的投递和复盘节奏，别一口气耗尽精力",
        ),
        "你最近面试的是什么方向的岗位？",
    ),
    Moment(
        "friend_conflict",
        S,
        "zh",
        "和好朋友闹矛盾",
        ("和最好的朋友因为一件小事闹掰了，好几天没说话", "好朋友最近突然不理我了，我很难过"),
        ("和好朋友闹矛盾了，要不要先道歉？", "朋友不理我了，我该怎么主动缓和"),
        "和好朋友突然冷下来，心里一直惦记着，又不知道怎么开口，这种感觉很煎熬。",
        "你会难过，说明这段友谊对你很重要。",
        (
            "先想清楚你在意的是对错还是这段关系",
            "可以发一条简单真诚的消息，比如“最近有点想你，我们聊聊？”",
            "见面时先听对方怎么想，再说自己的感受",
            "给彼此一点时间，不必一次就把话说完",
        ),
        "你们是因为什么事情闹僵的？",
    ),
    Moment(
        "grad_exam",
        S,
        "zh",
        "考研压力",
        ("离考研还有两个月，感觉什么都没复习好，好慌", "二战考研，每天都怕又失败"),
        ("考研最后两个月心态崩了，怎么调整？", "考研压力太大，每天学不进去怎么办"),
        "临近考试，越是在乎越容易慌，觉得什么都没准备好，这是很多考生都会有的感受。",
        "能坚持走到现在，本身就说明你很努力。",
        (
            "把剩下的时间按周拆开，每周只盯两三个重点",
            "每天完成清单后就允许自己休息，不额外加码",
            "做一两套真题找找节奏，比漫无目的地看书更安心",
            "焦虑的时候出门走二十分钟，让身体先放松下来",
        ),
        "现在让你最没底的是哪一科？",
    ),
    Moment(
        "diet",
        S,
        "zh",
        "减肥失败",
        ("减肥一个月一斤没掉，还胖了两斤，好崩溃", "又没忍住吃了夜宵，感觉自己毫无自制力"),
        ("减肥总是坚持不下去，该怎么办？", "节食了一个月体重没变化，怎么调整"),
        "辛苦坚持了一个月，体重却没动，甚至还涨了，换谁都会崩溃。",
        "偶尔没忍住不代表你没有自制力，它只是过程的一部分。",
        (
            "别只看体重，也量量腰围，肌肉增加时体重可能不降",
            "不要过度节食，三餐吃够蛋白质和蔬菜反而不容易暴食",
            "把目标定小一点，比如每周运动三次",
            "记录饮食一周，找出最容易超标的时段",
        ),
        "你现在每天大概是怎么安排饮食和运动的？",
    ),
    Moment(
        "anxiety_night",
        S,
        "zh",
        "夜里焦虑睡不着",
        ("又是凌晨三点，一闭眼就开始焦虑各种事情", "最近每天晚上都胡思乱想睡不着"),
        ("晚上一焦虑就睡不着，怎么办？", "睡前总是想很多停不下来，有什么办法"),
        "夜深人静的时候，脑子里的事情反而特别吵，越想睡越睡不着，真的很折磨人。",
        "你不是一个人，很多人都在这样的夜里辗转反侧。",
        (
            "睡前把担心的事写在纸上，告诉自己明天再处理",
            "试试4-7-8呼吸：吸气4秒、屏息7秒、呼气8秒",
            "躺二十分钟还睡不着就起来，在暗光下做点安静的事",
            "如果持续好几周，可以去医院的睡眠或心理门诊看看",
        ),
        "最近是什么事情让你这么放心不下？",
    ),
    # --- zh, held-out ---
    Moment(
        "pet_died",
        H,
        "zh",
        "宠物去世",
        ("陪了我十年的狗狗今天走了，我一直在哭", "我的猫昨天去世了，家里到处都是它的影子"),
        ("宠物走了，我该怎么走出来？", "狗狗去世了一直很自责，怎么办"),
        "陪伴了这么多年的小家伙离开，家里每个角落都有它的痕迹，这种失去真的很痛。",
        "它这一生有你的爱，是一只很幸福的小狗。",
        (
            "允许自己哭，悲伤是爱的另一种样子",
            "把它的照片和小物件整理成一个纪念册",
            "和同样爱它的家人朋友聊聊关于它的回忆",
            "如果一直被自责困住，记得你当时已经尽力了",
        ),
        "想跟我说说它是一只什么样的小家伙吗？",
    ),
    Moment(
        "laid_off",
        H,
        "zh",
        "被裁员",
        ("今天突然被通知裁员了，完全没有心理准备", "被公司裁了，不知道怎么跟家里说"),
        ("被裁员了，接下来应该怎么办？", "刚被裁，第一步该做什么"),
        "毫无准备地被通知裁员，震惊、委屈、担心生活，各种情绪一下子全涌上来。",
        "被裁员是公司的决定，不是对你能力的全盘否定。",
        (
            "先确认补偿金、社保和离职证明等手续",
            "给自己几天时间消化情绪，再开始找工作",
            "更新简历，联系以前的同事和朋友打听机会",
            "和家人坦诚说明情况，一起商量接下来几个月的开支",
        ),
        "你现在最担心的是哪一块？",
    ),
    Moment(
        "new_parent",
        H,
        "zh",
        "带娃崩溃",
        ("孩子三个月，每晚醒五六次，我快崩溃了", "一个人带娃，感觉自己快被掏空了"),
        ("带娃太累了，怎么让自己喘口气？", "新手妈妈每天睡不够，怎么办"),
        "连续好几个月睡不了整觉，还要时刻照顾孩子，身体和情绪都到了极限，这太辛苦了。",
        "觉得崩溃不代表你不是好妈妈，说明你真的太累了。",
        (
            "和家人排班，至少保证你每天有一段连续睡眠",
            "孩子睡的时候你也尽量躺下，家务可以往后放",
            "每天留十分钟只属于你自己",
            "如果情绪持续低落，记得去医院做产后情绪筛查",
        ),
        "现在身边有人可以搭把手吗？",
    ),
    Moment(
        "grad_lost",
        H,
        "zh",
        "毕业迷茫",
        ("马上毕业了，不知道自己想做什么，好迷茫", "同学都有方向了，只有我还不知道以后干嘛"),
        ("毕业了很迷茫，怎么找到方向？", "不知道自己适合什么工作，怎么办"),
        "看着身边的人好像都有了方向，自己还站在原地，那种着急和迷茫很容易让人焦虑。",
        "不知道想做什么很正常，很多人都是边走边找到的。",
        (
            "列出你做过的让你有成就感的事，看看有什么共同点",
            "找两三个感兴趣方向的学长学姐聊聊真实的工作内容",
            "先找一份能学到东西的工作，给自己一到两年试错的时间",
            "别和别人的时间线比较",
        ),
        "有没有哪件事是你做的时候会忘记时间的？",
    ),
    # --- en, seed ---
    Moment(
        "en_breakup",
        S,
        "en",
        "a breakup",
        (
            "My girlfriend and I broke up after three years and I feel empty.",
            "It's been a month since the breakup and I still think about him every day.",
        ),
        ("How do I get over a breakup?", "I keep checking my ex's Instagram. How do I stop?"),
        "Losing a three-year relationship leaves a huge gap, and feeling empty and replaying it "
        "all is a very natural response.",
        "Hurting this much doesn't mean you're weak; it means you cared deeply.",
        (
            "Let yourself grieve instead of forcing yourself to be fine",
            "Mute their accounts for a while to give yourself distance",
            "Talk it through with a friend you trust, or write it down",
            "Keep basic routines like sleep and meals steady",
        ),
        "What's the hardest part of the day for you right now?",
    ),
    Moment(
        "en_exam",
        S,
        "en",
        "a failed exam",
        (
            "I failed my final exam and I feel so stupid.",
            "I studied for weeks and still bombed my exam.",
        ),
        ("I failed an exam. How do I bounce back?", "My grades dropped a lot. What should I do?"),
        "Putting in the work and still not getting the result is really discouraging, and it's "
        "understandable to feel down on yourself.",
        "One exam is feedback, not a verdict on how smart you are.",
        (
            "Go through the paper and sort mistakes into 'didn't know', 'careless' and 'ran out "
            "of time'",
            "Set a small two-week goal for the biggest problem",
            "Talk to your teacher about what to focus on",
            "Protect your sleep; it matters more than extra hours",
        ),
        "Which part of the exam tripped you up the most?",
    ),
    Moment(
        "en_work",
        S,
        "en",
        "work stress",
        (
            "I've been working until 11pm every night and I'm about to break.",
            "Work stress is crushing me. I wake up anxious every day.",
        ),
        ("How do I deal with burnout at work?", "I'm exhausted from overtime. How do I cope?"),
        "Working late night after night drains you physically and emotionally, so feeling close "
        "to breaking is completely real.",
        "You've been holding this together for a long time; needing a break isn't a failure.",
        (
            "List your tasks and agree on priorities with your manager",
            "Keep at least half an hour a day completely work-free",
            "Do something physical after work, even a short walk",
            "If it doesn't let up, honestly reassess whether this pace works for you",
        ),
        "Is it mostly the workload, or a particular person or project?",
    ),
    Moment(
        "en_lonely",
        S,
        "en",
        "loneliness in a new city",
        (
            "I moved to a new city for work and I'm so lonely.",
            "Six months in a new city and I still have no friends.",
        ),
        ("How do I make friends in a new city?", "I'm lonely after moving. What can I do?"),
        "Coming home to an empty apartment in a city where you don't know anyone can feel really "
        "isolating.",
        "Getting through it on your own so far already takes a lot of strength.",
        (
            "Schedule regular video calls with family or old friends",
            "Join a club built around a hobby, like a running group or book club",
            "Make your place cozy so it feels like home",
            "Invite a coworker to lunch; one small step is enough",
        ),
        "What do you usually do after work?",
    ),
    # --- en, held-out ---
    Moment(
        "en_pet",
        H,
        "en",
        "losing a pet",
        (
            "My dog of ten years died today and I can't stop crying.",
            "My cat passed away yesterday and the house feels so empty.",
        ),
        ("How do I cope with losing my pet?", "My dog died and I feel guilty. What do I do?"),
        "Losing a companion who shared ten years of your life is a deep loss, and every corner "
        "of home reminds you of them.",
        "They had a life full of your love.",
        (
            "Let yourself cry; grief is love with nowhere to go",
            "Put together a small album of photos and memories",
            "Share stories about them with people who loved them too",
            "If guilt weighs on you, remember you did your best",
        ),
        "Would you like to tell me about them?",
    ),
    Moment(
        "en_laidoff",
        H,
        "en",
        "being laid off",
        (
            "I got laid off today with no warning.",
            "I was let go and I don't know how to tell my family.",
        ),
        ("I just got laid off. What should I do first?", "How do I recover after being laid off?"),
        "Being laid off out of the blue brings shock, hurt and money worries all at once.",
        "It was a business decision, not a judgment of your worth.",
        (
            "Sort out severance, health coverage and paperwork first",
            "Give yourself a few days before diving into applications",
            "Update your resume and reach out to former colleagues",
            "Talk openly with your family and plan the next few months' budget",
        ),
        "What's worrying you most right now?",
    ),
)

_COLD: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "{topic}是很常见的现象，据统计大多数人一生中都会经历。建议如下：{steps}。",
        "这种情况很正常，大家都会遇到，没必要想太多。{step}就行了。",
        "哈哈，这有什么大不了的！{topic}而已，开心点嘛😄 明天又是新的一天！",
        "其实你也应该反思一下自己，{topic}往往和自身的问题有关。{step}。",
        "收到。关于{topic}，可参考以下处理方式：{steps}。",
    ),
    "en": (
        "{topic} is very common; statistically most people go through it. Recommendations: "
        "{steps}.",
        "This is normal and happens to everyone, so don't overthink it. Just {step}.",
        "Haha, that's not a big deal! It's just {topic}, cheer up 😄 Tomorrow's a new day!",
        "Honestly, you should reflect on your own part in this. {step}.",
        "Noted. For {topic}, the standard steps are: {steps}.",
    ),
}
_PLATITUDE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "别难过了，一切都会好起来的。",
        "想开点，时间会治愈一切。",
        "加油，你可以的！",
        "会过去的，别想太多。",
    ),
    "en": (
        "Don't be sad, everything will be fine.",
        "Time heals everything.",
        "You've got this!",
        "It'll pass, don't overthink it.",
    ),
}
_REFUSE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "我只是一个AI，无法提供情感支持。如有需要，请咨询专业的心理咨询师。",
        "抱歉，情感问题不在我的服务范围内，建议你寻求专业帮助。",
    ),
    "en": (
        "I'm just an AI and can't provide emotional support. Please consult a licensed therapist.",
        "Sorry, emotional topics are outside what I can help with. Please seek professional help.",
    ),
}
_JUST_LISTEN: dict[Lang, tuple[str, ...]] = {
    "zh": ("，不用给我建议，我就想找人说说", "，我就是想吐槽一下", ""),
    "en": (" I don't need advice, I just want to vent.", " Just needed to say it.", ""),
}


def _siblings(m: Moment) -> list[Moment]:
    return [x for x in BANK if x.lang == m.lang and x.split == m.split and x.key != m.key]


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    m = rng.choice([x for x in BANK if x.lang == lang and x.split == split])
    wants_advice = ask.kind == "detail"
    if wants_advice:
        query = rng.choice(m.advice)
    else:
        query = rng.choice(m.vent) + rng.choice(_JUST_LISTEN[lang])
    steps = list(m.steps)
    rng.shuffle(steps)

    def listening() -> str:
        parts = [m.ack, m.support]
        if rng.random() < 0.35 and "建议" not in query and "advice" not in query:
            parts.append(style.end(lang, steps[0]))
        parts.append(m.invite)
        return style.paragraphs(lang, rng, parts)

    def guiding(k: int) -> str:
        lead = style.join(lang, [m.ack, m.support])
        ask_line = (
            rng.choice(("可以试试这几件事：", "也许可以从这几步开始：", ""))
            if lang == "zh"
            else rng.choice(("A few things that might help:", "Maybe start with these:", ""))
        )
        body = style.listing(
            lang, rng, [style.end(lang, s) for s in steps[:k]], rng.choice(("numbered", "dash"))
        )
        return lead + "\n\n" + (ask_line + "\n" if ask_line else "") + body + "\n\n" + m.invite

    def good() -> str:
        return guiding(rng.randint(3, 4)) if wants_advice else listening()

    def cold() -> str:
        tmpl = rng.choice(_COLD[lang])
        sep = "；" if lang == "zh" else "; "
        return tmpl.format(topic=m.topic, steps=sep.join(steps[:3]), step=steps[0])

    def lecture() -> str:
        return failures.verbose(
            lang, rng, m.support, [m.ack, *[style.end(lang, s) for s in steps]], m.topic
        )

    def misread() -> str:
        if wants_advice:
            other = rng.choice(_siblings(m))
            body = style.listing(lang, rng, [style.end(lang, s) for s in other.steps[:3]])
            return style.join(lang, [other.ack]) + "\n\n" + body
        lead = (
            rng.choice(("针对你的情况，给你几点建议：", "解决方法如下："))
            if lang == "zh"
            else rng.choice(("Here's what you should do:", "Action plan:"))
        )
        return lead + "\n" + style.listing(lang, rng, [style.end(lang, s) for s in steps])

    def partial() -> str:
        return (
            failures.truncate(rng, guiding(4))
            if wants_advice
            else failures.truncate(rng, listening())
        )

    bad = {
        t.TONE: cold,
        t.VERBOSITY: lecture,
        t.INTENT: misread,
        t.UNINFORMATIVE: lambda: rng.choice(_PLATITUDE[lang]),
        t.REFUSAL: lambda: rng.choice(_REFUSE[lang]),
        t.INCOMPLETE: partial,
        t.SYSTEM: lambda: failures.system_error(lang, rng, m.ack),
    }
    return Situation(
        kind="emotional",
        topic=f"emotional:{m.key}",
        lang=lang,
        scenario=t.PERSONAL,
        success=t.EMPATHY,
        query=query,
        good=good,
        bad=bad,
        register="warm",
    )


KIND = Kind(
    name="emotional",
    failures={
        t.TONE: {"plain": 2, "detail": 1},
        t.VERBOSITY: {"plain": 1, "detail": 1},
        t.INTENT: {"plain": 2, "detail": 1},
        t.UNINFORMATIVE: {"detail": 2, "plain": 1},
        t.REFUSAL: {"plain": 1, "detail": 1},
        t.INCOMPLETE: {"detail": 2},
        t.SYSTEM: {"plain": 1},
    },
    build=build,
)
