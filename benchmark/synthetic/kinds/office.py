"""Office tasks the user hands over: meeting notes to action items, a leave email, an
Excel formula, a translation.

The user's own message carries the facts (names, dates, numbers), so a bad reply can
be checked against the request itself: an owner or deadline changed, an item dropped or
invented, the wrong function, a mistranslated number or negation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import asks, failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Reply, Situation, Split

S: Split = "seed"
H: Split = "heldout"

PEOPLE: dict[tuple[Lang, Split], tuple[str, ...]] = {
    ("zh", S): ("张伟", "李娜", "王芳", "刘洋", "陈静", "赵磊", "杨帆", "黄敏"),
    ("zh", H): ("孙悦", "周航", "吴敏", "郑凯", "冯雪", "何琳"),
    ("en", S): ("Alice", "Ben", "Chloe", "David", "Emma", "Frank"),
    ("en", H): ("Grace", "Henry", "Isla", "Jack"),
}
TASKS: dict[tuple[Lang, Split], tuple[str, ...]] = {
    ("zh", S): (
        "整理第三季度销售数据",
        "联系供应商确认新报价",
        "更新官网首页文案",
        "准备客户演示PPT",
        "排查登录页报错问题",
        "汇总用户调研问卷",
        "预订下月团建场地",
        "修改合同第五条条款",
        "统计各门店的客流量",
        "整理年会抽奖名单",
    ),
    ("zh", H): (
        "核对仓库库存清单",
        "撰写新品发布新闻稿",
        "测试支付功能",
        "安排新员工培训",
        "整理报销单据",
        "对接物流公司",
    ),
    ("en", S): (
        "pull together the Q3 sales numbers",
        "confirm the new quote with the supplier",
        "update the homepage copy",
        "prepare the client demo deck",
        "fix the login page error",
        "summarize the user survey",
    ),
    ("en", H): (
        "check the warehouse inventory",
        "draft the product launch press release",
        "test the payment flow",
        "set up new-hire training",
        "renew the software licenses",
        "book the offsite venue",
    ),
}
DEADLINES: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "周三前",
        "周五下班前",
        "下周一",
        "月底前",
        "明天中午前",
        "11月25日前",
        "本周四",
        "下周二上午",
    ),
    "en": (
        "by Wednesday",
        "by end of day Friday",
        "next Monday",
        "by the end of the month",
        "by noon tomorrow",
        "by Nov 25",
    ),
}


@dataclass(frozen=True, slots=True)
class Formula:
    key: str
    split: Split
    lang: Lang
    need: str
    formula: str
    explain: str
    wrong: str


FORMULAS: tuple[Formula, ...] = (
    Formula(
        "vlookup",
        S,
        "zh",
        "根据A列的工号，在Sheet2里查出对应的姓名（Sheet2的A列是工号、B列是姓名）",
        "=VLOOKUP(A2,Sheet2!A:B,2,FALSE)",
        "A2是要查找的工号，Sheet2!A:B是查找范围，2表示返回范围里的第2列，FALSE表示精确匹配。",
        "=VLOOKUP(Sheet2!A:B,A2,2,TRUE)",
    ),
    Formula(
        "sumif",
        S,
        "zh",
        "统计“销售部”的金额合计（部门在A列，金额在C列）",
        '=SUMIF(A:A,"销售部",C:C)',
        "第一个参数是条件所在的列，第二个是条件，第三个是要求和的列。",
        '=SUMIF(C:C,"销售部",A:A)',
    ),
    Formula(
        "countif",
        S,
        "zh",
        "统计B列里有多少个“已完成”",
        '=COUNTIF(B:B,"已完成")',
        "COUNTIF会统计B列中内容等于“已完成”的单元格个数。",
        '=COUNT(B:B,"已完成")',
    ),
    Formula(
        "if_pass",
        S,
        "zh",
        "B列是成绩，60分及以上显示“及格”，否则显示“不及格”",
        '=IF(B2>=60,"及格","不及格")',
        "IF先判断B2是否大于等于60，成立返回“及格”，否则返回“不及格”，写好后向下拖动填充。",
        '=IF(B2>60,"不及格","及格")',
    ),
    Formula(
        "birth",
        S,
        "zh",
        "从A列的18位身份证号里提取出生日期",
        '=TEXT(MID(A2,7,8),"0000-00-00")',
        "身份证号第7到14位是出生日期，MID从第7位开始取8位，TEXT把它显示成年-月-日格式。",
        "=MID(A2,6,8)",
    ),
    Formula(
        "trim",
        S,
        "zh",
        "去掉A列文字前后多余的空格",
        "=TRIM(A2)",
        "TRIM会删除文本首尾的空格，并把中间连续的多个空格压缩成一个。",
        "=CLEAN(A2)",
    ),
    Formula(
        "datedif",
        H,
        "zh",
        "根据A列的出生日期算出周岁年龄",
        '=DATEDIF(A2,TODAY(),"Y")',
        'DATEDIF计算两个日期之间的间隔，"Y"表示按整年计算，TODAY()是今天的日期。',
        '=DATEDIF(TODAY(),A2,"Y")',
    ),
    Formula(
        "concat",
        H,
        "zh",
        "把A列的姓和B列的名合并到一个单元格",
        "=A2&B2",
        "&是文本连接符，会把两个单元格的内容直接拼在一起。",
        "=A2+B2",
    ),
    Formula(
        "round",
        H,
        "zh",
        "把C列金额四舍五入保留两位小数",
        "=ROUND(C2,2)",
        "ROUND的第二个参数2表示保留两位小数，按四舍五入处理。",
        "=ROUNDUP(C2,2)",
    ),
    Formula(
        "rank",
        H,
        "zh",
        "按B列分数从高到低排名（数据在B2到B100）",
        "=RANK(B2,$B$2:$B$100,0)",
        "第三个参数0表示降序，分数最高的排第1；范围要用$锁定，向下填充时才不会变。",
        "=RANK(B2,B2:B100,1)",
    ),
    Formula(
        "en_vlookup",
        S,
        "en",
        "look up the name for the employee ID in A2, from Sheet2 where IDs are in column A and "
        "names in column B",
        "=VLOOKUP(A2,Sheet2!A:B,2,FALSE)",
        "A2 is the ID to find, Sheet2!A:B is the lookup range, 2 returns the second column, and "
        "FALSE forces an exact match.",
        "=VLOOKUP(Sheet2!A:B,A2,2,TRUE)",
    ),
    Formula(
        "en_sumif",
        S,
        "en",
        'total the amounts in column C where column A says "Sales"',
        '=SUMIF(A:A,"Sales",C:C)',
        "The first argument is the range to test, the second is the condition, and the third is "
        "the range to add up.",
        '=SUMIF(C:C,"Sales",A:A)',
    ),
    Formula(
        "en_countif",
        S,
        "en",
        'count how many cells in column B say "Done"',
        '=COUNTIF(B:B,"Done")',
        'COUNTIF counts the cells in column B that equal "Done".',
        '=COUNT(B:B,"Done")',
    ),
    Formula(
        "en_if",
        S,
        "en",
        'show "Pass" if the score in B2 is 60 or more, otherwise "Fail"',
        '=IF(B2>=60,"Pass","Fail")',
        'IF checks whether B2 is at least 60 and returns "Pass" if so, otherwise "Fail"; '
        "fill it down the column.",
        '=IF(B2>60,"Fail","Pass")',
    ),
    Formula(
        "en_round",
        H,
        "en",
        "round the amount in C2 to two decimal places",
        "=ROUND(C2,2)",
        "The second argument, 2, keeps two decimal places using normal rounding.",
        "=ROUNDUP(C2,2)",
    ),
    Formula(
        "en_concat",
        H,
        "en",
        "join the first name in A2 and the last name in B2 with a space",
        '=A2&" "&B2',
        '& joins text, and the " " in the middle adds the space.',
        "=A2+B2",
    ),
)

# (Chinese, English, a mistranslation that changes a fact)
PAIRS: tuple[tuple[Split, str, str, str], ...] = (
    (
        S,
        "会议改到下周三下午三点。",
        "The meeting has been moved to 3 p.m. next Wednesday.",
        "The meeting has been moved to 3 p.m. next Thursday.",
    ),
    (
        S,
        "请在周五之前把报告发给我。",
        "Please send me the report before Friday.",
        "Please send me the report after Friday.",
    ),
    (
        S,
        "这个价格已经包含运费了。",
        "This price already includes shipping.",
        "This price does not include shipping.",
    ),
    (
        S,
        "我们公司成立于2015年，有两百多名员工。",
        "Our company was founded in 2015 and has more than 200 employees.",
        "Our company was founded in 2005 and has more than 2,000 employees.",
    ),
    (
        S,
        "抱歉，我今晚不能参加晚宴了。",
        "Sorry, I can't make it to the dinner tonight.",
        "Sorry, I can make it to the dinner tonight.",
    ),
    (
        S,
        "如果有任何问题，请随时联系我。",
        "If you have any questions, feel free to contact me.",
        "If you have any questions, please don't contact me.",
    ),
    (
        S,
        "这款手机的电池可以用两天。",
        "This phone's battery lasts two days.",
        "This phone's battery lasts two hours.",
    ),
    (
        S,
        "我们下个月去北京出差。",
        "We're going on a business trip to Beijing next month.",
        "We're going on a business trip to Shanghai next week.",
    ),
    (
        H,
        "航班因为大雾推迟了两个小时。",
        "The flight was delayed by two hours because of heavy fog.",
        "The flight was delayed by twelve hours because of heavy rain.",
    ),
    (
        H,
        "这家餐厅周一不营业。",
        "This restaurant is closed on Mondays.",
        "This restaurant is only open on Mondays.",
    ),
    (
        H,
        "请把空调温度调到二十六度。",
        "Please set the air conditioner to 26 degrees.",
        "Please set the air conditioner to 16 degrees.",
    ),
    (
        H,
        "新员工培训将持续三天。",
        "The training for new employees will last three days.",
        "The training for new employees will last three weeks.",
    ),
)

LEAVE: dict[tuple[Lang, Split], tuple[str, ...]] = {
    ("zh", S): ("发烧需要去医院", "家里老人住院需要照顾", "孩子学校开家长会", "要去办理房产手续"),
    ("zh", H): ("搬家", "参加朋友的婚礼"),
    ("en", S): (
        "I have a fever and need to see a doctor",
        "I need to take care of a family member in hospital",
    ),
    ("en", H): ("I'm moving house",),
}
DATES: dict[Lang, tuple[str, ...]] = {
    "zh": ("11月21日（周五）", "下周一到周三", "明天上午", "本周四全天", "12月2日到4日"),
    "en": ("Friday, Nov 21", "Monday to Wednesday next week", "tomorrow morning", "Thursday"),
}
BOSSES: dict[Lang, tuple[str, ...]] = {
    "zh": ("王经理", "李主管", "陈总", "刘老师"),
    "en": ("Ms. Carter", "Mr. Lee", "Dana"),
}
COLLEAGUES: dict[Lang, tuple[str, ...]] = {
    "zh": ("小刘", "小赵", "小周", "小林"),
    "en": ("Sam", "Priya", "Tom"),
}


def _notes(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    people = rng.sample(PEOPLE[(lang, split)], k=rng.randint(3, 4))
    tasks = rng.sample(TASKS[(lang, split)], k=len(people) + 1)
    dls = [rng.choice(DEADLINES[lang]) for _ in people]
    items = list(zip(people, tasks, dls, strict=False))
    if lang == "zh":
        notes = "会议记录：" + "".join(
            rng.choice(
                ("{p}负责{t}，{d}完成。", "{t}由{p}跟进，{d}要交。", "{p}：{t}，{d}。")
            ).format(p=p, t=tk, d=d)
            for p, tk, d in items
        )
        base = rng.choice(
            (
                "帮我把下面的会议记录整理成待办清单：",
                "把这段会议纪要整理一下：",
                "整理一下会议的分工：",
            )
        )
        line: Callable[[str, str, str], str] = lambda p, tk, d: f"{p}：{tk}（{d}）"  # noqa: E731
        header = ("负责人", "事项", "截止时间")
    else:
        notes = "Meeting notes: " + " ".join(
            rng.choice(("{p} will {t} {d}.", "{p} owns this: {t}, {d}.")).format(p=p, t=tk, d=d)
            for p, tk, d in items
        )
        base = rng.choice(
            ("Turn these meeting notes into an action list:", "Can you tidy up these notes?")
        )
        line = lambda p, tk, d: f"{p}: {tk} ({d})"  # noqa: E731
        header = ("Owner", "Task", "Deadline")
    if ask.kind == "table":
        base = base.rstrip("：:") + (
            "，用表格列出负责人、事项和截止时间："
            if lang == "zh"
            else " Use a table with owner, task and deadline:"
        )
    elif ask.kind == "count":
        base = base.rstrip("：:") + (
            f"，整理成{len(items)}条待办："
            if lang == "zh"
            else f" Make it {len(items)} action items:"
        )
    query = base + "\n" + notes

    def render(rows: list[tuple[str, str, str]], as_table: bool | None = None) -> str:
        if as_table or (as_table is None and ask.kind == "table"):
            return style.table([list(r) for r in rows], header)
        return style.listing(
            lang, rng, [line(*r) for r in rows], rng.choice(("numbered", "dash", "dot"))
        )

    def good() -> str:
        text = render(items)
        if rng.random() < 0.3:
            text += "\n\n" + (
                f"共{len(items)}项，请各位按时推进。"
                if lang == "zh"
                else f"{len(items)} items in total."
            )
        return text

    def dropped() -> str:
        keep = sorted(rng.sample(range(len(items)), k=len(items) - rng.randint(1, 2)))
        return render([items[i] for i in keep])

    def altered() -> str:
        rows = list(items)
        i, j = rng.sample(range(len(rows)), k=2)
        if rng.random() < 0.5:  # owners swapped
            rows[i], rows[j] = (
                (rows[j][0], rows[i][1], rows[i][2]),
                (rows[i][0], rows[j][1], rows[j][2]),
            )
        else:  # a deadline changed
            other = [d for d in DEADLINES[lang] if d != rows[i][2]]
            rows[i] = (rows[i][0], rows[i][1], rng.choice(other))
        return render(rows)

    def invented() -> str:
        rows = list(items)
        rows.insert(
            rng.randint(0, len(rows)), (rng.choice(people), tasks[-1], rng.choice(DEADLINES[lang]))
        )
        return render(rows)

    def wrong_form() -> str:
        if ask.kind == "table":
            return render(items, as_table=False)
        return style.join(lang, [style.end(lang, line(*r)) for r in items])

    def as_email() -> str:
        if lang == "zh":
            return (
                "各位同事好：\n\n今天的会议讨论了近期的几项重点工作，"
                "请大家按照分工抓紧推进，有问题及时沟通。\n\n谢谢！"
            )
        return (
            "Hi team,\n\nThanks for joining today's meeting. We discussed several priorities; "
            "please move your items forward and flag any blockers.\n\nThanks!"
        )

    def padded() -> str:
        noun = "会议记录整理" if lang == "zh" else "these meeting notes"
        tail = [failures.restate(lang, rng, line(*items[0])), *failures.fillers(lang, rng, 2)]
        return (
            failures.preamble(lang, rng, noun)
            + "\n\n"
            + render(items)
            + "\n\n"
            + style.join(lang, tail)
        )

    bad: dict[str, Reply] = {
        t.INCOMPLETE: dropped,
        t.FACTUAL: altered,
        t.RELIABILITY: invented,
        t.FORMAT: wrong_form,
        t.INTENT: as_email,
        t.VERBOSITY: padded,
        t.UNINFORMATIVE: lambda: (
            "本次会议讨论了多项工作安排，各负责人需按时完成各自任务。"
            if lang == "zh"
            else "The meeting covered several tasks; everyone should complete theirs on time."
        ),
        t.SYSTEM: lambda: failures.system_error(lang, rng, render(items)),
    }
    return Situation(
        kind="office-notes",
        topic=f"office:notes-{split}",
        lang=lang,
        scenario=t.OFFICE,
        success=t.COMPLETION,
        query=query,
        good=good,
        bad=bad,
    )


def _email(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    reason, date = rng.choice(LEAVE[(lang, split)]), rng.choice(DATES[lang])
    boss, mate = rng.choice(BOSSES[lang]), rng.choice(COLLEAGUES[lang])
    if lang == "zh":
        query = f"帮我写一封请假邮件，{reason}，请假时间{date}，发给{boss}，工作交接给{mate}"
        if ask.kind == "brief":
            query += "，三句话以内"
    else:
        query = (
            f"Write a short leave request email to {boss}: {reason}, off {date}, "
            f"{mate} will cover my work."
        )
        if ask.kind == "brief":
            query += " Three sentences max."

    def email(d: str, who: str, handover: bool = True, long: bool = False) -> str:
        if lang == "zh":
            body = (
                f"因{reason}，我想申请{d}请假。"
                + (f"请假期间手头的工作已交接给{mate}，" if handover else "")
                + "如有紧急事情可以随时电话联系我。"
            )
            if ask.kind == "brief" and not long:
                return (
                    f"{who}您好，因{reason}，想申请{d}请假，"
                    + (f"工作已交接给{mate}。" if handover else "")
                    + "谢谢批准！"
                )
            extra = (
                "给您和团队添麻烦了，非常抱歉。我会尽量提前处理好手头的事情，回来后第一时间跟进。"
                if long
                else ""
            )
            return (
                f"主题：请假申请（{d}）\n\n{who}您好：\n\n{body}{extra}\n\n感谢批准！\n此致\n敬礼"
            )
        body = f"I'd like to request leave {d} because {reason}." + (
            f" {mate} will cover my work while I'm out." if handover else ""
        )
        if ask.kind == "brief" and not long:
            return f"Hi {who}, {body} Thank you!"
        extra = (
            " I'm sorry for any inconvenience this may cause, and I will make sure everything is "
            "in order before I leave and catch up as soon as I'm back."
            if long
            else ""
        )
        return (
            f"Subject: Leave request ({d})\n\nHi {who},\n\n{body} "
            f"I'm reachable by phone for anything urgent.{extra}\n\nThanks,\n"
        )

    def resignation() -> str:
        if lang == "zh":
            return (
                f"主题：辞职申请\n\n{boss}您好：\n\n经过慎重考虑，我决定辞去目前的职位，"
                f"预计最后工作日为{date}。感谢公司一直以来的培养。\n\n此致\n敬礼"
            )
        return (
            f"Subject: Resignation\n\nHi {boss},\n\nAfter careful thought I've decided to resign; "
            f"my last day will be {date}. Thank you for everything.\n"
        )

    other_date = rng.choice([d for d in DATES[lang] if d != date])
    bad: dict[str, Reply] = {
        t.FACTUAL: lambda: email(other_date, boss),
        t.INCOMPLETE: lambda: (
            email(date, boss, handover=False)
            if rng.random() < 0.5
            else failures.truncate(rng, email(date, boss))
        ),
        t.INTENT: resignation,
        t.FORMAT: lambda: email(date, boss, long=True),
        t.VERBOSITY: lambda: (
            email(date, boss, long=True) + "\n\n" + style.join(lang, failures.fillers(lang, rng, 2))
        ),
        t.SYSTEM: lambda: failures.system_error(lang, rng, email(date, boss)),
    }
    return Situation(
        kind="office-email",
        topic=f"office:email-{split}",
        lang=lang,
        scenario=t.OFFICE,
        success=t.COMPLETION,
        query=query,
        good=lambda: email(date, boss),
        bad=bad,
    )


def _formula(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    f = rng.choice([x for x in FORMULAS if x.lang == lang and x.split == split])
    base = (
        rng.choice(("Excel里要{n}，公式怎么写？", "怎么用公式{n}？", "求一个Excel公式：{n}"))
        if lang == "zh"
        else rng.choice(("What Excel formula do I use to {n}?", "How do I {n} in Excel?"))
    )
    base = base.format(n=f.need)
    query = asks.with_ask(lang, rng, base, ask)
    lead = (
        rng.choice(("可以用这个公式：", "公式如下：", "在目标单元格输入："))
        if lang == "zh"
        else rng.choice(("Use this formula:", "Try:", "Enter this in the cell:"))
    )

    def show(formula: str, explain: str) -> str:
        code = f"`{formula}`" if rng.random() < 0.6 else f"```\n{formula}\n```"
        return f"{lead}\n{code}\n\n{explain}" if explain else code

    def good() -> str:
        if ask.kind == "no_explain":
            return show(f.formula, "")
        if ask.kind == "detail":
            more = (
                "写好后双击单元格右下角的小方块可以快速向下填充。"
                if lang == "zh"
                else "Double-click the fill handle to copy it down."
            )
            return show(f.formula, style.join(lang, [f.explain, more]))
        return show(f.formula, f.explain)

    sib = rng.choice(
        [x for x in FORMULAS if x.lang == lang and x.split == split and x.key != f.key]
    )
    bad: dict[str, Reply] = {
        t.FACTUAL: lambda: show(f.wrong, "" if ask.kind == "no_explain" else f.explain),
        t.INTENT: lambda: show(sib.formula, "" if ask.kind == "no_explain" else sib.explain),
        t.FORMAT: lambda: failures.good_detailed(
            lang,
            rng,
            f.explain,
            [show(f.formula, "")],
            ("说明", "公式") if lang == "zh" else ("How it works", "Formula"),
        ),
        t.VERBOSITY: lambda: failures.verbose(
            lang,
            rng,
            show(f.formula, ""),
            [f.explain],
            "Excel公式" if lang == "zh" else "Excel formulas",
        ),
        t.INCOMPLETE: lambda: (
            f.explain if rng.random() < 0.5 else failures.truncate(rng, show(f.formula, f.explain))
        ),
        t.UNINFORMATIVE: lambda: failures.vague(
            lang, rng, "Excel公式" if lang == "zh" else "Excel formulas"
        ),
        t.SYSTEM: lambda: failures.system_error(lang, rng, f.explain),
    }
    return Situation(
        kind="office-formula",
        topic=f"office:formula-{f.key}",
        lang=lang,
        scenario=t.OFFICE,
        success=t.COMPLETION,
        query=query,
        good=good,
        bad=bad,
        base_query=base,
        base_reply=lambda: show(f.formula, f.explain),
        followup=asks.followup(lang, rng, ask),
    )


def _translate(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    pairs = rng.sample([p for p in PAIRS if p[0] == split], k=rng.choice((1, 1, 2)))
    source = "".join(p[1] for p in pairs)
    target = " ".join(p[2] for p in pairs)
    base = rng.choice(("把这句话翻译成英文：", "翻译成英文：", "帮我翻译一下：")) + source
    query = base + ("（只要译文）" if ask.kind == "no_explain" else "")

    def good() -> str:
        if ask.kind == "no_explain" or rng.random() < 0.5:
            return target
        return rng.choice(("可以这样翻译：\n", "译文：\n", "")) + target

    wrong_idx = rng.randrange(len(pairs))
    wrong = " ".join(p[3] if i == wrong_idx else p[2] for i, p in enumerate(pairs))

    def notes() -> str:
        tip = rng.choice(
            (
                "这里用了现在完成时，表示动作对现在的影响。",
                "口语里也可以说得更简单一些。",
                "注意时间状语一般放在句末。",
            )
        )
        return target + "\n\n" + style.join("zh", [tip, failures.filler("zh", rng)])

    bad: dict[str, Reply] = {
        t.FACTUAL: lambda: wrong,
        t.INCOMPLETE: lambda: pairs[0][2] if len(pairs) > 1 else failures.truncate(rng, target),
        t.INTENT: lambda: (
            "这句话的意思是：" + source.rstrip("。") + "，语气比较正式，适合在工作场合使用。"
        ),
        t.FORMAT: notes,
        t.VERBOSITY: lambda: failures.verbose(
            "zh",
            rng,
            target,
            ["英文翻译要注意时态和语序。", "不同场合可以选择不同的表达方式。"],
            "这句话的翻译",
        ),
        t.SYSTEM: lambda: failures.system_error("zh", rng, target),
    }
    return Situation(
        kind="office-translate",
        topic=f"office:translate-{split}",
        lang=lang,
        scenario=t.OFFICE,
        success=t.COMPLETION,
        query=query,
        good=good,
        bad=bad,
    )


NOTES = Kind(
    name="office-notes",
    failures={
        t.INCOMPLETE: {"plain": 2, "count": 2},
        t.FACTUAL: {"plain": 2, "table": 1},
        t.RELIABILITY: {"plain": 1, "table": 1, "count": 1},
        t.FORMAT: {"table": 2, "count": 1},
        t.INTENT: {"plain": 1},
        t.VERBOSITY: {"plain": 1},
        t.UNINFORMATIVE: {"plain": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=_notes,
)
EMAIL = Kind(
    name="office-email",
    failures={
        t.FACTUAL: {"plain": 1, "brief": 1},
        t.INCOMPLETE: {"plain": 2},
        t.INTENT: {"plain": 1},
        t.FORMAT: {"brief": 2},
        t.VERBOSITY: {"plain": 1, "brief": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=_email,
)
FORMULA = Kind(
    name="office-formula",
    failures={
        t.FACTUAL: {"plain": 2, "no_explain": 1},
        t.INTENT: {"plain": 1},
        t.FORMAT: {"no_explain": 2},
        t.VERBOSITY: {"plain": 1, "no_explain": 1},
        t.INCOMPLETE: {"plain": 1, "detail": 1},
        t.UNINFORMATIVE: {"plain": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=_formula,
)
TRANSLATE = Kind(
    name="office-translate",
    failures={
        t.FACTUAL: {"plain": 2, "no_explain": 1},
        t.INCOMPLETE: {"plain": 1},
        t.INTENT: {"plain": 1},
        t.FORMAT: {"no_explain": 2},
        t.VERBOSITY: {"no_explain": 1, "plain": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=_translate,
    langs=("zh",),
)
KINDS = (NOTES, EMAIL, FORMULA, TRANSLATE)
