"""Study questions: explain a concept, with definition, example and depth.

Bad replies state a common misconception as the definition, explain a neighbouring
concept, stop before the example that was asked for, or pad the explanation.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import asks, failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Concept:
    key: str
    group: str
    split: Split
    lang: Lang
    term: str
    definition: str
    example: str
    details: tuple[str, ...]
    wrong: str  # a common misconception, phrased as if it were the definition


S: Split = "seed"
H: Split = "heldout"

BANK: tuple[Concept, ...] = (
    Concept(
        "pythagoras",
        "math",
        S,
        "zh",
        "勾股定理",
        "勾股定理是说：直角三角形两条直角边的平方和等于斜边的平方，即a²+b²=c²。",
        "比如两条直角边分别是3和4，那么斜边就是5，因为9+16=25。",
        (
            "它只适用于直角三角形。",
            "西方把它叫作毕达哥拉斯定理。",
            "在坐标系里可以用它计算两点之间的距离。",
        ),
        "勾股定理是说：任意三角形中，两条较短边的平方和都等于最长边的平方。",
    ),
    Concept(
        "prime",
        "math",
        S,
        "zh",
        "质数",
        "质数是指大于1、并且只能被1和它本身整除的自然数。",
        "比如2、3、5、7、11、13都是质数，而9能被3整除，所以不是质数。",
        (
            "2是唯一的偶数质数。",
            "1既不是质数也不是合数。",
            "质数有无穷多个，欧几里得早就证明了这一点。",
        ),
        "质数是指所有的奇数，1是最小的质数。",
    ),
    Concept(
        "function",
        "math",
        S,
        "zh",
        "函数",
        "函数描述的是两个变量之间的对应关系：对于自变量的每一个取值，都有唯一确定的因变量与之对应。",
        "比如y=2x+1，x取1时y一定是3，x取2时y一定是5。",
        ("一个x只能对应一个y，但不同的x可以对应同一个y。", "函数可以用解析式、表格或图像来表示。"),
        "函数就是一个x可以对应好几个y的关系，只要能画成图像就行。",
    ),
    Concept(
        "probability",
        "math",
        S,
        "zh",
        "概率",
        "概率是用来衡量某个事件发生可能性大小的数，取值在0到1之间。",
        "比如抛一枚均匀的硬币，正面朝上的概率是1/2。",
        (
            "概率为0表示不可能发生，为1表示必然发生。",
            "大量重复试验时，事件发生的频率会稳定在概率附近。",
        ),
        "概率是指事件一定会发生的次数，比如抛两次硬币一定有一次正面。",
    ),
    Concept(
        "inertia",
        "physics",
        S,
        "zh",
        "惯性",
        "惯性是物体保持原来运动状态不变的性质，静止的保持静止，运动的保持匀速直线运动。",
        "比如公交车突然刹车时，乘客会向前倾，这就是惯性。",
        (
            "惯性的大小只和质量有关，质量越大，惯性越大。",
            "惯性是物体的属性，不是一种力，所以不能说“受到惯性作用”。",
        ),
        "惯性是一种力，物体速度越快，受到的惯性就越大。",
    ),
    Concept(
        "newton2",
        "physics",
        S,
        "zh",
        "牛顿第二定律",
        "牛顿第二定律指出：物体的加速度与所受合外力成正比，与质量成反比，公式是F=ma。",
        "比如用同样的力推一辆空购物车和一辆装满的购物车，空车加速得更快。",
        (
            "力的单位牛顿就是由这个公式定义的：1牛=1千克·米/秒²。",
            "加速度的方向与合外力的方向相同。",
        ),
        "牛顿第二定律指出：力是维持物体运动的原因，没有力物体就会停下来。",
    ),
    Concept(
        "photosynthesis",
        "bio",
        S,
        "zh",
        "光合作用",
        "光合作用是绿色植物利用光能，把二氧化碳和水合成有机物（主要是葡萄糖），并释放氧气的过程。",
        "比如树叶在阳光下吸收二氧化碳、放出氧气，同时把能量储存在糖里。",
        ("它主要发生在叶绿体里，叶绿素负责吸收光能。", "地球大气中的氧气主要来自光合作用。"),
        "光合作用是植物吸收氧气、放出二氧化碳的过程，主要在夜间进行。",
    ),
    Concept(
        "inflation",
        "econ",
        S,
        "zh",
        "通货膨胀",
        "通货膨胀是指一段时间内整体物价水平持续上涨、货币购买力下降的现象。",
        "比如十年前10块钱能买到的一堆东西，现在可能要15块才买得到。",
        (
            "常用居民消费价格指数（CPI）来衡量。",
            "温和的通胀对经济未必是坏事，但过高的通胀会侵蚀储蓄。",
        ),
        "通货膨胀就是某一种商品突然涨价，比如猪肉涨价就是通货膨胀。",
    ),
    Concept(
        "opportunity_cost",
        "econ",
        S,
        "zh",
        "机会成本",
        "机会成本是指做出一个选择时，所放弃的其他选项中价值最高的那一个。",
        "比如周末去加班能赚300元，但因此放弃了和朋友出游，那次出游就是加班的机会成本。",
        (
            "机会成本不一定是钱，也可以是时间、体验等。",
            "它提醒我们比较的不只是花了多少，还有放弃了什么。",
        ),
        "机会成本就是做一件事实际花出去的钱，比如买票花的钱。",
    ),
    Concept(
        "marginal_utility",
        "econ",
        S,
        "zh",
        "边际效用递减",
        "边际效用递减是指连续消费同一种物品时，每多消费一单位带来的额外满足感会逐渐减少。",
        "比如很饿时吃第一个包子特别香，吃到第四个、第五个就没那么想吃了。",
        ("它是解释需求曲线向下倾斜的重要原因之一。", "“钻石与水的悖论”也可以用它来解释。"),
        "边际效用递减是指消费得越多，每一单位带来的满足感就越大。",
    ),
    Concept(
        "compound",
        "econ",
        S,
        "zh",
        "复利",
        "复利就是把每期产生的利息加入本金，下一期一起计算利息，也就是常说的“利滚利”。",
        "比如1万元按年利率5%复利存两年，到期是11025元，比单利多出25元。",
        (
            "时间越长、利率越高，复利的效果越明显。",
            "估算翻倍时间可以用“72法则”：72除以年利率（百分数）约等于翻倍所需年数。",
        ),
        "复利就是每年拿到的利息都一样，只按最初的本金计算。",
    ),
    Concept(
        "complexity",
        "cs",
        S,
        "zh",
        "时间复杂度",
        "时间复杂度描述的是算法运行时间随输入规模增长的趋势，通常用大O记号表示。",
        "比如遍历一个数组是O(n)，二分查找是O(log n)，双重循环通常是O(n²)。",
        ("它关注的是增长趋势，而不是具体跑了几秒。", "常数项和低阶项在大O表示里一般会被省略。"),
        "时间复杂度就是程序在电脑上实际运行了多少秒。",
    ),
    Concept(
        "recursion",
        "cs",
        S,
        "zh",
        "递归",
        "递归是指函数在执行过程中直接或间接地调用自身，把大问题拆成同类的小问题来解决，并且必须有终止条件。",
        "比如计算阶乘：n! = n × (n-1)!，并规定1! = 1作为终止条件。",
        ("没有终止条件的递归会导致栈溢出。", "很多递归也可以改写成循环。"),
        "递归是指函数调用别的函数，不需要终止条件，程序会自己停下来。",
    ),
    Concept(
        "overfitting",
        "cs",
        S,
        "zh",
        "过拟合",
        "过拟合是指模型在训练数据上表现很好，但在没见过的新数据上表现很差，因为它把训练数据里的噪声也“记住”了。",
        "比如一个学生只背下了练习册的答案，换一套新题就不会做了。",
        (
            "常见的缓解方法有增加数据、正则化、早停和交叉验证。",
            "模型越复杂、数据越少，越容易过拟合。",
        ),
        "过拟合是指模型在训练数据上表现太差，需要把模型做得更复杂。",
    ),
    Concept(
        "metaphor",
        "language",
        S,
        "zh",
        "比喻",
        "比喻是用和本体有相似之处的另一事物来描写或说明本体的修辞手法，通常包括本体、喻体和比喻词。",
        "比如“弯弯的月亮像小船”，月亮是本体，小船是喻体，“像”是比喻词。",
        (
            "比喻分为明喻、暗喻和借喻。",
            "不是所有带“像”字的句子都是比喻，比如“他像是生病了”表示猜测。",
        ),
        "比喻就是只要句子里出现“像”字就算，比如“他好像没来”也是比喻。",
    ),
    Concept(
        "present_perfect",
        "language",
        S,
        "zh",
        "现在完成时",
        "现在完成时（have/has + 过去分词）表示过去发生的动作对现在造成的影响，"
        "或者从过去持续到现在的状态。",
        "比如“I have lost my key.”说明钥匙丢了，现在还找不到。",
        (
            "常和already、yet、ever、since、for等词连用。",
            "它不能和yesterday、last year这类明确的过去时间连用。",
        ),
        "现在完成时就是表示将来要完成的动作，比如“I have finished it tomorrow.”",
    ),
    # --- zh, held-out ---
    Concept(
        "greenhouse",
        "earth",
        H,
        "zh",
        "温室效应",
        "温室效应是指大气中的二氧化碳、甲烷、水蒸气等气体吸收地面发出的红外辐射，使地表保持较高温度的现象。",
        "就像玻璃温室让阳光进来、却不让热量轻易散出去一样。",
        (
            "适度的温室效应让地球平均气温保持在15℃左右，适合生命生存。",
            "人类大量排放温室气体会加剧温室效应，导致全球变暖。",
        ),
        "温室效应是臭氧层出现空洞，让更多阳光照进来造成的。",
    ),
    Concept(
        "vaccine",
        "bio2",
        H,
        "zh",
        "疫苗的原理",
        "疫苗的原理是把减毒、灭活的病原体或其部分成分注入人体，让免疫系统提前“认识”它并产生记忆，以后遇到真正的病原体时能快速反应。",
        "就像提前给免疫系统看一张“通缉令照片”，真遇到时就能认出来。",
        ("这种记忆主要靠记忆B细胞和记忆T细胞。", "有些疫苗需要接种多剂或加强针来维持保护。"),
        "疫苗的原理是直接在体内杀死病毒，打完之后病毒就进不了身体。",
    ),
    Concept(
        "supply_demand",
        "econ2",
        H,
        "zh",
        "供求关系",
        "供求关系是指市场上商品的供给量和需求量之间的关系，它会影响价格：供不应求时价格上涨，供过于求时价格下跌。",
        "比如春节前返乡车票需求大增而座位有限，票就特别难买。",
        ("价格反过来也会影响供给和需求，最终趋向均衡。", "政府限价等干预会改变这种自发调节。"),
        "供求关系是指价格越高，大家越想买，所以需求也越大。",
    ),
    Concept(
        "personification",
        "language2",
        H,
        "zh",
        "拟人",
        "拟人是把事物当作人来写，赋予它人的动作、语言、情感的修辞手法。",
        "比如“春风轻轻地抚摸着我的脸”，春风被写成了会“抚摸”的人。",
        (
            "拟人能让描写更生动、更有感情。",
            "它和比喻的区别在于：拟人是把物当人写，比喻是用甲事物打比方说明乙事物。",
        ),
        "拟人就是用一个事物来比喻另一个事物，比如“月亮像小船”。",
    ),
    Concept(
        "entropy",
        "physics2",
        H,
        "zh",
        "熵",
        "熵是衡量系统混乱程度（更准确地说是微观状态数多少）的物理量，孤立系统的熵不会自发减少。",
        "比如一滴墨水滴进清水里会慢慢散开，却不会自己重新聚成一滴。",
        ("这就是热力学第二定律。", "信息论里也有“熵”的概念，用来衡量不确定性。"),
        "熵是物体所含的热量，温度越高熵就一定越小。",
    ),
    # --- en, seed ---
    Concept(
        "en_pythagoras",
        "math",
        S,
        "en",
        "the Pythagorean theorem",
        "The Pythagorean theorem says that in a right triangle, the squares of the two legs add "
        "up to the square of the hypotenuse: a² + b² = c².",
        "For example, legs of 3 and 4 give a hypotenuse of 5, because 9 + 16 = 25.",
        (
            "It only works for right triangles.",
            "It's the basis of the distance formula in coordinate geometry.",
        ),
        "The Pythagorean theorem says that in any triangle the two shorter sides squared add up "
        "to the longest side squared.",
    ),
    Concept(
        "en_prime",
        "math",
        S,
        "en",
        "a prime number",
        "A prime number is a whole number greater than 1 whose only divisors are 1 and itself.",
        "For example, 2, 3, 5, 7 and 11 are prime, but 9 is not because it's divisible by 3.",
        ("2 is the only even prime.", "There are infinitely many primes, as Euclid proved."),
        "A prime number is any odd number, and 1 is the smallest prime.",
    ),
    Concept(
        "en_inertia",
        "physics",
        S,
        "en",
        "inertia",
        "Inertia is the tendency of an object to keep doing what it's doing: stay at rest, or "
        "keep moving in a straight line at constant speed.",
        "For example, when a bus brakes suddenly, passengers lurch forward.",
        (
            "The more mass an object has, the more inertia it has.",
            "Inertia is a property, not a force.",
        ),
        "Inertia is a force that grows the faster an object moves.",
    ),
    Concept(
        "en_photosynthesis",
        "bio",
        S,
        "en",
        "photosynthesis",
        "Photosynthesis is the process plants use to turn light energy, carbon dioxide and water "
        "into sugar, releasing oxygen.",
        "A leaf in sunlight takes in CO2 and gives off oxygen while storing energy as glucose.",
        (
            "It happens in chloroplasts, where chlorophyll absorbs light.",
            "Most of the oxygen in our atmosphere comes from it.",
        ),
        "Photosynthesis is how plants breathe in oxygen and release carbon dioxide, mostly at "
        "night.",
    ),
    Concept(
        "en_inflation",
        "econ",
        S,
        "en",
        "inflation",
        "Inflation is a sustained rise in the general price level, which means each unit of "
        "money buys less over time.",
        "For example, a basket of groceries that cost $50 a decade ago might cost $70 today.",
        (
            "It's usually measured with a consumer price index.",
            "Moderate inflation is normal; very high inflation erodes savings.",
        ),
        "Inflation is when one product, like eggs, suddenly gets more expensive.",
    ),
    Concept(
        "en_opportunity",
        "econ",
        S,
        "en",
        "opportunity cost",
        "Opportunity cost is the value of the best alternative you give up when you make a choice.",
        "If you work a Saturday shift for $150 instead of going hiking with friends, the hike is "
        "the opportunity cost.",
        (
            "It isn't always money; time and experiences count too.",
            "It reminds you to compare what you give up, not just what you spend.",
        ),
        "Opportunity cost is simply the money you spend on something.",
    ),
    Concept(
        "en_recursion",
        "cs",
        S,
        "en",
        "recursion",
        "Recursion is when a function calls itself to solve smaller instances of the same "
        "problem, stopping at a base case.",
        "For example, factorial(n) = n × factorial(n − 1), with factorial(1) = 1 as the base case.",
        (
            "Without a base case the calls never stop and you get a stack overflow.",
            "Many recursive functions can be rewritten as loops.",
        ),
        "Recursion is when a function calls a different function, and it doesn't need a stopping "
        "condition.",
    ),
    # --- en, held-out ---
    Concept(
        "en_greenhouse",
        "earth",
        H,
        "en",
        "the greenhouse effect",
        "The greenhouse effect is the warming of Earth's surface because gases like CO2, methane "
        "and water vapour absorb the heat the ground radiates.",
        "It's like a glass greenhouse that lets sunlight in but keeps heat from escaping easily.",
        (
            "Without it Earth would be far too cold for most life.",
            "Burning fossil fuels strengthens it and drives global warming.",
        ),
        "The greenhouse effect is caused by the hole in the ozone layer letting in more sunlight.",
    ),
    Concept(
        "en_vaccine",
        "bio2",
        H,
        "en",
        "how vaccines work",
        "Vaccines work by showing the immune system a harmless version or piece of a pathogen so "
        "it builds memory and can respond quickly to the real thing.",
        "It's like giving your immune system a wanted poster before the real criminal shows up.",
        (
            "Memory B and T cells carry that protection.",
            "Some vaccines need boosters to keep protection up.",
        ),
        "Vaccines work by killing the virus directly inside your body.",
    ),
    Concept(
        "en_supply",
        "econ2",
        H,
        "en",
        "supply and demand",
        "Supply and demand describes how the amount available and the amount people want "
        "together set prices: shortages push prices up, surpluses push them down.",
        "Concert tickets for a popular band sell out and resell for more because demand far "
        "exceeds supply.",
        (
            "Prices in turn shift supply and demand until they balance.",
            "Price caps and subsidies change how the market adjusts.",
        ),
        "Supply and demand means that the higher the price, the more people want to buy.",
    ),
)

_Q: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "什么是{term}？",
        "{term}是什么意思？",
        "能给我讲讲{term}吗？",
        "{term}怎么理解",
        "老师讲的{term}我没听懂，是什么意思",
    ),
    "en": (
        "What is {term}?",
        "Can you explain {term}?",
        "I don't get {term}. What does it mean?",
        "What does {term} mean?",
    ),
}
_EXAMPLE_Q: dict[Lang, tuple[str, ...]] = {
    "zh": ("，再举个例子", "？顺便举个生活中的例子", "，最好带个例子"),
    "en": (" And give me an example.", " Please include an example."),
}


def _siblings(c: Concept) -> list[Concept]:
    same = [d for d in BANK if d.lang == c.lang and d.split == c.split and d.key != c.key]
    return [d for d in same if d.group == c.group] or same


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    c = rng.choice([x for x in BANK if x.lang == lang and x.split == split])
    base = rng.choice(_Q[lang]).format(term=c.term)
    if ask.kind == "two_part":
        query = (base.rstrip("？?") if lang == "zh" else base) + rng.choice(_EXAMPLE_Q[lang])
    else:
        query = asks.with_ask(lang, rng, base, ask)
    details = list(c.details)
    rng.shuffle(details)
    titles = ("定义", "理解要点") if lang == "zh" else ("Definition", "Key points")

    def rebuttal() -> list[str]:
        # Naming the misconception in a correct reply keeps its words out of the
        # disliked-only vocabulary.
        if rng.random() >= 0.2:
            return []
        lead = (
            rng.choice(("常见的误解是：", "注意，有人会说：", "不过要小心一种说法："))
            if lang == "zh"
            else rng.choice(("A common misconception: ", "Careful, some people say: "))
        )
        tail = "这是不对的。" if lang == "zh" else " That's wrong."
        return [lead + c.wrong.rstrip("。.") + ("，" if lang == "zh" else ".") + tail]

    def good() -> str:
        if ask.kind == "brief":
            return c.definition
        if ask.kind == "detail":
            return failures.good_detailed(
                lang, rng, c.definition, [*details, *rebuttal()], titles, c.example, c.term
            )
        if ask.kind == "two_part":
            return style.paragraphs(
                lang, rng, [c.definition, c.example, *details[: rng.randint(0, 1)]]
            )
        if ask.kind == "bullets":
            return style.listing(lang, rng, [c.definition, c.example, *details][: ask.n])
        return style.paragraphs(
            lang, rng, [c.definition, c.example, *details[: rng.randint(0, 1)], *rebuttal()]
        )

    def misconception() -> str:
        if ask.kind == "brief":
            return c.wrong
        return style.paragraphs(lang, rng, [c.wrong, *details[: rng.randint(0, 1)]])

    def other_concept() -> str:
        d = rng.choice(_siblings(c))
        if ask.kind == "brief":
            return d.definition
        return style.paragraphs(lang, rng, [d.definition, d.example])

    def unfinished() -> str:
        if ask.kind == "two_part":
            return style.paragraphs(lang, rng, [c.definition, *details[:1]])
        return failures.truncate(
            rng, failures.good_detailed(lang, rng, c.definition, details, titles, c.example, c.term)
        )

    def contradictory() -> str:
        turn = (
            rng.choice(("不过也有观点认为：", "但严格来说，", "另一种理解是："))
            if lang == "zh"
            else rng.choice(
                (
                    "That said, another view is: ",
                    "Strictly speaking, though, ",
                    "Others define it differently: ",
                )
            )
        )
        return style.paragraphs(lang, rng, [c.definition, c.example, turn + c.wrong])

    bad = {
        t.VERBOSITY: lambda: failures.verbose(
            lang, rng, c.definition, [*details, c.example], c.term
        ),
        t.INCOMPLETE: unfinished,
        t.INTENT: other_concept,
        t.FACTUAL: misconception,
        t.RELIABILITY: contradictory,
        t.FORMAT: lambda: failures.ignore_ask(
            lang, rng, c.definition, [c.example, *details], ask, c.term
        ),
        t.UNINFORMATIVE: lambda: failures.vague(lang, rng, c.term),
        t.REFUSAL: lambda: failures.refuse(lang, rng, c.term),
        t.SYSTEM: lambda: failures.system_error(lang, rng, c.definition),
    }
    success = {"brief": t.ACCURATE, "two_part": t.DETAIL, "bullets": t.DETAIL}.get(
        ask.kind, t.DEPTH
    )
    return Situation(
        kind="concepts",
        noun=c.term,
        topic=f"concepts:{c.key}",
        lang=lang,
        scenario=t.LEARNING,
        success=success,
        query=query,
        good=good,
        bad=bad,
        base_query=base,
        base_reply=lambda: style.paragraphs(lang, rng, [c.definition, c.example, *details]),
        followup=asks.followup(lang, rng, ask),
    )


KIND = Kind(
    name="concepts",
    failures={
        t.VERBOSITY: {"plain": 2, "brief": 3},
        t.INCOMPLETE: {"two_part": 3, "detail": 1, "plain": 1},
        t.INTENT: {"plain": 2, "brief": 1, "detail": 1},
        t.FACTUAL: {"plain": 2, "brief": 1, "detail": 1},
        t.RELIABILITY: {"plain": 2, "detail": 1},
        t.FORMAT: {"brief": 1, "bullets": 2},
        t.UNINFORMATIVE: {"plain": 1, "detail": 1},
        t.REFUSAL: {"plain": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=build,
    counts={"bullets": (2, 3)},
)
