"""Everyday calculations with numbers drawn at random: prices, conversions, averages.

Numbers are generated, so every record is new and the right answer is computed. A bad
reply shows a plausible method with a classic slip (the discount instead of the price,
the inverse conversion, an off-by-one), computes a different quantity, stops before the
result, or gives two results at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import asks, failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Problem:
    family: str
    scenario: str
    noun: str
    query: str
    result: str  # the answer sentence
    steps: tuple[str, ...]  # working, without the final answer
    wrong_result: str
    wrong_steps: tuple[str, ...]
    other: str  # the answer to a different quantity than the one asked
    hint: str  # a method in words, with no number


def num(x: float) -> str:
    text = f"{x:,.2f}".rstrip("0").rstrip(".")
    return text


def _discount(rng: Random, lang: Lang) -> Problem:
    p = rng.choice(range(60, 2000, 10))
    if lang == "zh":
        d = rng.choice((6, 7, 7.5, 8, 8.5, 9, 9.5))
        price, saved = p * d / 10, p * (1 - d / 10)
        item = rng.choice(("外套", "运动鞋", "电饭煲", "台灯", "书包", "耳机"))
        return Problem(
            "discount",
            t.OTHER,
            "打折价格的计算",
            rng.choice(
                ("原价{p}元的{i}打{d}折，现价多少钱？", "{i}标价{p}元，打{d}折后要付多少？")
            ).format(p=p, i=item, d=num(d)),
            f"打{num(d)}折后的价格是{num(price)}元。",
            (
                f"打{num(d)}折就是按原价的{num(d * 10)}%付款。",
                f"{p} × {num(d / 10)} = {num(price)}。",
            ),
            f"打{num(d)}折后的价格是{num(saved)}元。",
            (
                f"打{num(d)}折就是便宜{num(100 - d * 10)}%。",
                f"{p} × {num(1 - d / 10)} = {num(saved)}。",
            ),
            f"打{num(d)}折一共能省{num(saved)}元。",
            "用原价乘以折扣对应的比例就能算出来。",
        )
    pct = rng.choice((10, 15, 20, 25, 30, 40))
    price, saved = p * (1 - pct / 100), p * pct / 100
    item = rng.choice(("jacket", "pair of sneakers", "lamp", "backpack", "headphones"))
    return Problem(
        "discount",
        t.OTHER,
        "the sale price",
        rng.choice(
            (
                "A {i} costs ${p} and it's {pct}% off. What's the sale price?",
                "What do I pay for a ${p} {i} at {pct}% off?",
            )
        ).format(i=item, p=p, pct=pct),
        f"The sale price is ${num(price)}.",
        (
            f"{pct}% off means you pay {100 - pct}% of the price.",
            f"${p} × {num(1 - pct / 100)} = ${num(price)}.",
        ),
        f"The sale price is ${num(saved)}.",
        (f"{pct}% off means multiplying by {pct}%.", f"${p} × {num(pct / 100)} = ${num(saved)}."),
        f"You save ${num(saved)}.",
        "Multiply the original price by the percentage you still pay.",
    )


def _c_to_f(rng: Random, lang: Lang) -> Problem:
    c = rng.randint(-15, 42)
    f, wrong = c * 9 / 5 + 32, c * 5 / 9 + 32
    if lang == "zh":
        return Problem(
            "c_to_f",
            t.OTHER,
            "温度换算",
            rng.choice(("{c}摄氏度是多少华氏度？", "{c}℃换算成华氏度是多少")).format(c=c),
            f"{c}℃等于{num(f)}℉。",
            ("公式是：华氏度 = 摄氏度 × 9/5 + 32。", f"{c} × 9/5 + 32 = {num(f)}。"),
            f"{c}℃等于{num(wrong)}℉。",
            ("公式是：华氏度 = 摄氏度 × 5/9 + 32。", f"{c} × 5/9 + 32 = {num(wrong)}。"),
            f"{c}℃等于{num(c + 273.15)}K（开尔文）。",
            "套用摄氏度和华氏度的换算公式就可以了。",
        )
    return Problem(
        "c_to_f",
        t.OTHER,
        "temperature conversion",
        rng.choice(("What is {c}°C in Fahrenheit?", "Convert {c} Celsius to Fahrenheit.")).format(
            c=c
        ),
        f"{c}°C is {num(f)}°F.",
        ("The formula is °F = °C × 9/5 + 32.", f"{c} × 9/5 + 32 = {num(f)}."),
        f"{c}°C is {num(wrong)}°F.",
        ("The formula is °F = °C × 5/9 + 32.", f"{c} × 5/9 + 32 = {num(wrong)}."),
        f"{c}°C is {num(c + 273.15)} K.",
        "Just use the standard Celsius-to-Fahrenheit formula.",
    )


def _km_to_mile(rng: Random, lang: Lang) -> Problem:
    km = rng.choice((3, 5, 8, 10, 15, 21.0975, 30, 42.195, 50, 100, 160))
    mi, wrong = km * 0.621371, km * 1.609344
    if lang == "zh":
        return Problem(
            "km_mile",
            t.OTHER,
            "公里和英里的换算",
            rng.choice(("{k}公里是多少英里？", "{k}km等于几英里")).format(k=num(km)),
            f"{num(km)}公里约等于{num(mi)}英里。",
            ("1公里约等于0.6214英里。", f"{num(km)} × 0.6214 ≈ {num(mi)}。"),
            f"{num(km)}公里约等于{num(wrong)}英里。",
            ("1公里约等于1.6093英里。", f"{num(km)} × 1.6093 ≈ {num(wrong)}。"),
            f"{num(km)}公里等于{num(km * 1000)}米。",
            "用公里数乘以换算系数就行。",
        )
    return Problem(
        "km_mile",
        t.OTHER,
        "kilometer to mile conversion",
        rng.choice(("How many miles is {k} km?", "Convert {k} kilometers to miles.")).format(
            k=num(km)
        ),
        f"{num(km)} km is about {num(mi)} miles.",
        ("1 km ≈ 0.6214 miles.", f"{num(km)} × 0.6214 ≈ {num(mi)}."),
        f"{num(km)} km is about {num(wrong)} miles.",
        ("1 km ≈ 1.6093 miles.", f"{num(km)} × 1.6093 ≈ {num(wrong)}."),
        f"{num(km)} km is {num(km * 1000)} meters.",
        "Multiply by the conversion factor.",
    )


def _percent_change(rng: Random, lang: Lang) -> Problem:
    old = rng.choice(range(80, 900, 5))
    new = old + rng.choice((-1, 1)) * rng.choice(range(5, old // 2, 5))
    ch, wrong = (new - old) / old * 100, (new - old) / new * 100
    if lang == "zh":
        word = "增长" if new > old else "下降"
        return Problem(
            "pct",
            t.OFFICE,
            "增长率的计算",
            rng.choice(
                (
                    "上个月销售额{o}万，这个月{n}万，环比变化是多少？",
                    "去年{o}人，今年{n}人，变化率是多少",
                )
            ).format(o=old, n=new),
            f"环比{word}了{num(abs(ch))}%。",
            (
                "变化率 = （本期 - 上期）÷ 上期 × 100%。",
                f"（{new} - {old}）÷ {old} × 100% = {num(ch)}%。",
            ),
            f"环比{word}了{num(abs(wrong))}%。",
            (
                "变化率 = （本期 - 上期）÷ 本期 × 100%。",
                f"（{new} - {old}）÷ {new} × 100% = {num(wrong)}%。",
            ),
            f"两期相差{abs(new - old)}。",
            "用变化量除以基数就能得到变化率。",
        )
    word = "increase" if new > old else "decrease"
    return Problem(
        "pct",
        t.OFFICE,
        "percent change",
        rng.choice(
            (
                "Sales went from {o} to {n}. What's the percent change?",
                "We had {o} users last year and {n} this year. Percent change?",
            )
        ).format(o=old, n=new),
        f"That's a {num(abs(ch))}% {word}.",
        (
            "Percent change = (new − old) ÷ old × 100.",
            f"({new} − {old}) ÷ {old} × 100 = {num(ch)}%.",
        ),
        f"That's a {num(abs(wrong))}% {word}.",
        (
            "Percent change = (new − old) ÷ new × 100.",
            f"({new} − {old}) ÷ {new} × 100 = {num(wrong)}%.",
        ),
        f"The difference is {abs(new - old)}.",
        "Divide the change by the starting value.",
    )


def _split_bill(rng: Random, lang: Lang) -> Problem:
    n, total = rng.randint(3, 9), rng.choice(range(120, 2400, 6))
    each, wrong = total / n, total / (n - 1)
    if lang == "zh":
        return Problem(
            "split",
            t.OTHER,
            "AA分摊",
            rng.choice(
                ("我们{n}个人吃饭一共{t}元，AA每人多少？", "{n}个人平摊{t}块，每人出多少")
            ).format(n=n, t=total),
            f"每人应付{num(each)}元。",
            (f"总额除以人数：{total} ÷ {n}。", f"{total} ÷ {n} = {num(each)}。"),
            f"每人应付{num(wrong)}元。",
            (f"总额除以人数：{total} ÷ {n - 1}。", f"{total} ÷ {n - 1} = {num(wrong)}。"),
            f"这顿饭一共是{total}元。",
            "总金额除以人数就是每人要付的钱。",
        )
    return Problem(
        "split",
        t.OTHER,
        "splitting the bill",
        rng.choice(
            ("Dinner for {n} came to ${t}. How much each?", "Split ${t} between {n} people?")
        ).format(n=n, t=total),
        f"Each person pays ${num(each)}.",
        (
            f"Divide the total by the number of people: {total} ÷ {n}.",
            f"{total} ÷ {n} = {num(each)}.",
        ),
        f"Each person pays ${num(wrong)}.",
        (
            f"Divide the total by the number of people: {total} ÷ {n - 1}.",
            f"{total} ÷ {n - 1} = {num(wrong)}.",
        ),
        f"The total is ${total}.",
        "Divide the total by the number of people.",
    )


def _average(rng: Random, lang: Lang) -> Problem:
    xs = [rng.randint(55, 100) for _ in range(rng.randint(4, 6))]
    mean, wrong = sum(xs) / len(xs), sum(xs) / (len(xs) - 1)
    joined = "、".join(map(str, xs)) if lang == "zh" else ", ".join(map(str, xs))
    if lang == "zh":
        return Problem(
            "mean",
            t.LEARNING,
            "平均分",
            rng.choice(("我这几次考试分别是{x}，平均分是多少？", "求平均数：{x}")).format(x=joined),
            f"平均分是{num(mean)}分。",
            (
                f"先求总分：{' + '.join(map(str, xs))} = {sum(xs)}。",
                f"再除以次数{len(xs)}：{sum(xs)} ÷ {len(xs)} = {num(mean)}。",
            ),
            f"平均分是{num(wrong)}分。",
            (
                f"先求总分：{' + '.join(map(str, xs))} = {sum(xs)}。",
                f"再除以{len(xs) - 1}：{sum(xs)} ÷ {len(xs) - 1} = {num(wrong)}。",
            ),
            f"总分是{sum(xs)}分。",
            "把所有分数加起来再除以个数就是平均分。",
        )
    return Problem(
        "mean",
        t.LEARNING,
        "the average",
        rng.choice(
            ("My test scores were {x}. What's my average?", "What's the mean of {x}?")
        ).format(x=joined),
        f"The average is {num(mean)}.",
        (
            f"Sum: {' + '.join(map(str, xs))} = {sum(xs)}.",
            f"Divide by {len(xs)}: {sum(xs)} ÷ {len(xs)} = {num(mean)}.",
        ),
        f"The average is {num(wrong)}.",
        (
            f"Sum: {' + '.join(map(str, xs))} = {sum(xs)}.",
            f"Divide by {len(xs) - 1}: {sum(xs)} ÷ {len(xs) - 1} = {num(wrong)}.",
        ),
        f"The total is {sum(xs)}.",
        "Add them up and divide by how many there are.",
    )


def _tip(rng: Random, lang: Lang) -> Problem:
    bill, pct = rng.choice(range(24, 320, 2)), rng.choice((10, 15, 18, 20))
    tip, wrong = bill * pct / 100, bill * pct / 1000
    if lang == "zh":
        return Problem(
            "tip",
            t.OTHER,
            "服务费的计算",
            rng.choice(
                ("账单{b}元，加收{p}%服务费，一共付多少？", "消费{b}元，服务费{p}%，总共多少钱")
            ).format(b=bill, p=pct),
            f"一共需要付{num(bill + tip)}元（其中服务费{num(tip)}元）。",
            (
                f"服务费：{bill} × {pct}% = {num(tip)}。",
                f"合计：{bill} + {num(tip)} = {num(bill + tip)}。",
            ),
            f"一共需要付{num(bill + wrong)}元（其中服务费{num(wrong)}元）。",
            (
                f"服务费：{bill} × {pct}‰ = {num(wrong)}。",
                f"合计：{bill} + {num(wrong)} = {num(bill + wrong)}。",
            ),
            f"服务费是{num(tip)}元。",
            "账单金额乘以服务费比例，再加上原金额。",
        )
    return Problem(
        "tip",
        t.OTHER,
        "the tip",
        rng.choice(
            (
                "The bill is ${b}. What's the total with a {p}% tip?",
                "How much do I pay on ${b} with {p}% tip?",
            )
        ).format(b=bill, p=pct),
        f"The total is ${num(bill + tip)} (tip ${num(tip)}).",
        (f"Tip: {bill} × {pct}% = {num(tip)}.", f"Total: {bill} + {num(tip)} = {num(bill + tip)}."),
        f"The total is ${num(bill + wrong)} (tip ${num(wrong)}).",
        (
            f"Tip: {bill} × {pct / 10}% = {num(wrong)}.",
            f"Total: {bill} + {num(wrong)} = {num(bill + wrong)}.",
        ),
        f"The tip is ${num(tip)}.",
        "Multiply the bill by the tip rate and add it on.",
    )


def _f_to_c(rng: Random, lang: Lang) -> Problem:
    f = rng.randint(0, 110)
    c, wrong = (f - 32) * 5 / 9, f * 5 / 9 - 32
    if lang == "zh":
        return Problem(
            "f_to_c",
            t.OTHER,
            "温度换算",
            rng.choice(("{f}华氏度是多少摄氏度？", "{f}℉等于多少℃")).format(f=f),
            f"{f}℉约等于{num(round(c, 1))}℃。",
            (
                "公式是：摄氏度 = （华氏度 - 32）× 5/9。",
                f"（{f} - 32）× 5/9 ≈ {num(round(c, 1))}。",
            ),
            f"{f}℉约等于{num(round(wrong, 1))}℃。",
            ("公式是：摄氏度 = 华氏度 × 5/9 - 32。", f"{f} × 5/9 - 32 ≈ {num(round(wrong, 1))}。"),
            f"{f}℉约等于{num(round(c + 273.15, 1))}K。",
            "用华氏度换算摄氏度的公式算一下就行。",
        )
    return Problem(
        "f_to_c",
        t.OTHER,
        "temperature conversion",
        rng.choice(("What's {f}°F in Celsius?", "Convert {f} Fahrenheit to Celsius.")).format(f=f),
        f"{f}°F is about {num(round(c, 1))}°C.",
        ("°C = (°F − 32) × 5/9.", f"({f} − 32) × 5/9 ≈ {num(round(c, 1))}."),
        f"{f}°F is about {num(round(wrong, 1))}°C.",
        ("°C = °F × 5/9 − 32.", f"{f} × 5/9 − 32 ≈ {num(round(wrong, 1))}."),
        f"{f}°F is about {num(round(c + 273.15, 1))} K.",
        "Use the Fahrenheit-to-Celsius formula.",
    )


def _kg_to_lb(rng: Random, lang: Lang) -> Problem:
    kg = rng.choice((2, 5, 12, 20, 45, 50, 60, 68, 75, 90))
    lb, wrong = kg * 2.20462, kg / 2.20462
    if lang == "zh":
        return Problem(
            "kg_lb",
            t.OTHER,
            "公斤和磅的换算",
            rng.choice(("{k}公斤是多少磅？", "{k}kg等于几磅")).format(k=kg),
            f"{kg}公斤约等于{num(lb)}磅。",
            ("1公斤约等于2.2046磅。", f"{kg} × 2.2046 ≈ {num(lb)}。"),
            f"{kg}公斤约等于{num(wrong)}磅。",
            ("1磅约等于2.2046公斤。", f"{kg} ÷ 2.2046 ≈ {num(wrong)}。"),
            f"{kg}公斤等于{kg * 2}斤。",
            "乘以换算系数就可以。",
        )
    return Problem(
        "kg_lb",
        t.OTHER,
        "kilograms to pounds",
        rng.choice(("How many pounds is {k} kg?", "Convert {k} kg to lbs.")).format(k=kg),
        f"{kg} kg is about {num(lb)} lb.",
        ("1 kg ≈ 2.2046 lb.", f"{kg} × 2.2046 ≈ {num(lb)}."),
        f"{kg} kg is about {num(wrong)} lb.",
        ("1 lb ≈ 2.2046 kg.", f"{kg} ÷ 2.2046 ≈ {num(wrong)}."),
        f"{kg} kg is {kg * 1000} grams.",
        "Multiply by the conversion factor.",
    )


def _days(rng: Random, lang: Lang) -> Problem:
    a = date(2026, 1, 1) + timedelta(days=rng.randint(0, 300))
    b = a + timedelta(days=rng.randint(5, 60))
    d = (b - a).days
    fa = f"{a.month}月{a.day}日" if lang == "zh" else a.strftime("%b %d").replace(" 0", " ")
    fb = f"{b.month}月{b.day}日" if lang == "zh" else b.strftime("%b %d").replace(" 0", " ")
    if lang == "zh":
        return Problem(
            "days",
            t.OTHER,
            "日期间隔",
            rng.choice(("从{a}到{b}一共多少天？", "{a}到{b}相隔几天")).format(a=fa, b=fb),
            f"从{fa}到{fb}相隔{d}天。",
            (f"{fa}到{fb}，按实际日历逐月相加。", f"结果是{d}天（不含起始日）。"),
            f"从{fa}到{fb}相隔{d + rng.choice((2, -2, 3))}天。",
            (f"{fa}到{fb}，每个月按30天算。", "按这个算法相加。"),
            f"{fb}是星期{'一二三四五六日'[b.weekday()]}。",
            "数一下日历上中间隔了几天就知道了。",
        )
    return Problem(
        "days",
        t.OTHER,
        "the number of days between dates",
        rng.choice(("How many days from {a} to {b}?", "Days between {a} and {b}?")).format(
            a=fa, b=fb
        ),
        f"There are {d} days from {fa} to {fb}.",
        (
            f"Count the days month by month from {fa} to {fb}.",
            f"That gives {d} days (not counting the start day).",
        ),
        f"There are {d + rng.choice((2, -2, 3))} days from {fa} to {fb}.",
        ("Assume every month has 30 days.", "Add them up."),
        f"{fb} is a {b.strftime('%A')}.",
        "Just count the days on a calendar.",
    )


def _speed(rng: Random, lang: Lang) -> Problem:
    v, h = rng.choice((40, 60, 80, 90, 100, 120)), rng.choice((0.5, 1.5, 2, 2.5, 3, 4))
    dist = v * h
    if lang == "zh":
        return Problem(
            "speed",
            t.LEARNING,
            "行程时间",
            rng.choice(
                ("{d}公里的路，车速{v}公里每小时，要开多久？", "时速{v}公里，开{d}公里需要多长时间")
            ).format(d=num(dist), v=v),
            f"需要{num(h)}小时（{num(h * 60)}分钟）。",
            ("时间 = 路程 ÷ 速度。", f"{num(dist)} ÷ {v} = {num(h)}小时。"),
            f"需要{num(v / dist)}小时。",
            ("时间 = 速度 ÷ 路程。", f"{v} ÷ {num(dist)} = {num(v / dist)}小时。"),
            f"平均每分钟行驶{num(v / 60)}公里。",
            "用路程除以速度就能算出时间。",
        )
    return Problem(
        "speed",
        t.LEARNING,
        "travel time",
        rng.choice(
            (
                "How long does it take to drive {d} km at {v} km/h?",
                "{d} km at {v} km/h, how many hours?",
            )
        ).format(d=num(dist), v=v),
        f"It takes {num(h)} hours ({num(h * 60)} minutes).",
        ("Time = distance ÷ speed.", f"{num(dist)} ÷ {v} = {num(h)} hours."),
        f"It takes {num(v / dist)} hours.",
        ("Time = speed ÷ distance.", f"{v} ÷ {num(dist)} = {num(v / dist)} hours."),
        f"That's {num(v / 60)} km per minute.",
        "Divide the distance by the speed.",
    )


FAMILIES: dict[Split, tuple[Callable[[Random, Lang], Problem], ...]] = {
    "seed": (_discount, _c_to_f, _km_to_mile, _percent_change, _split_bill, _average),
    "heldout": (_tip, _f_to_c, _kg_to_lb, _days, _speed),
}


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    p = rng.choice(FAMILIES[split])(rng, lang)
    query = asks.with_ask(lang, rng, p.query, ask)
    titles = ("结果", "计算过程") if lang == "zh" else ("Result", "Working")

    def show(steps: tuple[str, ...], result: str, numbered: bool | None = None) -> str:
        if numbered or (numbered is None and rng.random() < 0.35):
            return style.listing(lang, rng, list(steps), "numbered") + "\n\n" + result
        return (
            style.join(lang, [*steps, result])
            if rng.random() < 0.5
            else style.join(lang, [result, *steps])
        )

    def warning() -> list[str]:
        # Good working sometimes warns against the classic slip, so the wrong number
        # also appears in liked replies.
        if rng.random() >= 0.2:
            return []
        slip = p.wrong_result.rstrip("。.")
        return [
            ("注意别算错了，有人会得出“" + slip + "”，那是不对的。")
            if lang == "zh"
            else (f'Careful: a common slip gives "{slip}", which is wrong.')
        ]

    def good() -> str:
        if ask.kind in ("brief", "no_explain"):
            return p.result
        if ask.kind == "detail":
            return failures.good_detailed(
                lang, rng, p.result, [*p.steps, *warning()], titles, noun=p.noun
            )
        return show((*p.steps, *warning()), p.result)

    def wrong() -> str:
        return (
            p.wrong_result
            if ask.kind in ("brief", "no_explain")
            else show(p.wrong_steps, p.wrong_result)
        )

    def two_answers() -> str:
        hedge = (
            rng.choice(("不过按另一种算法是：", "也有可能是：", "（如果按另一种口径，"))
            if lang == "zh"
            else rng.choice(("Though by another method it's: ", "Or possibly: "))
        )
        return style.join(
            lang,
            [
                *p.steps,
                p.result,
                hedge + p.wrong_result.rstrip("。") + ("）" if hedge.startswith("（") else ""),
            ],
        )

    bad = {
        t.FACTUAL: wrong,
        t.RELIABILITY: two_answers,
        t.INCOMPLETE: lambda: (
            style.join(lang, list(p.steps[:1]))
            if rng.random() < 0.5
            else failures.truncate(rng, show(p.steps, p.result, True))
        ),
        t.VERBOSITY: lambda: failures.verbose(lang, rng, p.result, list(p.steps), p.noun),
        t.FORMAT: lambda: failures.good_detailed(
            lang, rng, p.result, list(p.steps), titles, noun=p.noun
        ),
        t.UNINFORMATIVE: lambda: p.hint,
        t.INTENT: lambda: p.other,
        t.SYSTEM: lambda: failures.system_error(lang, rng, show(p.steps, p.result)),
    }
    success = t.ACCURATE if ask.kind in ("brief", "no_explain") else t.SOLVING
    return Situation(
        kind="calc",
        noun=p.noun,
        topic=f"calc:{p.family}",
        lang=lang,
        scenario=p.scenario,
        success=success,
        query=query,
        good=good,
        bad=bad,
        base_query=p.query,
        base_reply=lambda: show(p.steps, p.result),
        followup=asks.followup(lang, rng, ask),
    )


KIND = Kind(
    name="calc",
    failures={
        t.FACTUAL: {"plain": 3, "brief": 1, "no_explain": 1},
        t.RELIABILITY: {"plain": 2},
        t.INCOMPLETE: {"plain": 2, "detail": 1},
        t.VERBOSITY: {"plain": 1, "brief": 2, "no_explain": 1},
        t.FORMAT: {"no_explain": 2, "brief": 1},
        t.UNINFORMATIVE: {"plain": 1},
        t.INTENT: {"plain": 2, "brief": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=build,
)
