"""Book recommendations: a count, a genre, titles with their authors.

Bad replies attach the wrong author to a real title, slip in a book that does not
exist, list fewer books than asked, or recommend from another genre.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Book:
    title: str
    author: str
    blurb: str


@dataclass(frozen=True, slots=True)
class Shelf:
    key: str
    split: Split
    lang: Lang
    genre: str
    books: tuple[Book, ...]


S: Split = "seed"
H: Split = "heldout"

SHELVES: tuple[Shelf, ...] = (
    Shelf(
        "cn_novel",
        S,
        "zh",
        "中国当代小说",
        (
            Book("《活着》", "余华", "讲述福贵一生的苦难与坚韧，读来平静又震撼"),
            Book("《平凡的世界》", "路遥", "孙少安、孙少平兄弟在时代变迁中的奋斗"),
            Book("《白鹿原》", "陈忠实", "白鹿原上两大家族半个世纪的恩怨"),
            Book("《三体》", "刘慈欣", "硬核科幻，人类文明与三体文明的博弈"),
            Book("《围城》", "钱钟书", "方鸿渐的婚姻与职场，幽默又尖锐"),
            Book("《长安的荔枝》", "马伯庸", "小吏限期把新鲜荔枝从岭南运到长安"),
        ),
    ),
    Shelf(
        "world_novel",
        S,
        "zh",
        "外国小说",
        (
            Book("《百年孤独》", "加西亚·马尔克斯", "布恩迪亚家族七代人的魔幻故事"),
            Book("《小王子》", "圣埃克苏佩里", "写给大人的童话，关于爱与责任"),
            Book("《月亮与六便士》", "毛姆", "一个放弃一切去画画的人"),
            Book("《追风筝的人》", "卡勒德·胡赛尼", "关于友谊、背叛与救赎"),
            Book("《解忧杂货店》", "东野圭吾", "一家能回信解答烦恼的杂货店"),
            Book("《1984》", "乔治·奥威尔", "经典的反乌托邦小说"),
        ),
    ),
    Shelf(
        "growth",
        S,
        "zh",
        "心理学和个人成长",
        (
            Book("《被讨厌的勇气》", "岸见一郎、古贺史健", "用对话的形式讲阿德勒心理学"),
            Book("《非暴力沟通》", "马歇尔·卢森堡", "学会表达感受和需要，减少冲突"),
            Book("《思考，快与慢》", "丹尼尔·卡尼曼", "人脑的两套思考系统和各种认知偏差"),
            Book("《刻意练习》", "安德斯·艾利克森", "高手是怎样通过有效练习炼成的"),
            Book("《自卑与超越》", "阿尔弗雷德·阿德勒", "个体心理学的经典入门"),
        ),
    ),
    Shelf(
        "history",
        H,
        "zh",
        "历史",
        (
            Book("《万历十五年》", "黄仁宇", "从一个平淡的年份看明朝的制度困境"),
            Book("《明朝那些事儿》", "当年明月", "幽默好读的明朝历史"),
            Book("《人类简史》", "尤瓦尔·赫拉利", "从认知革命讲到人类的今天"),
            Book("《枪炮、病菌与钢铁》", "贾雷德·戴蒙德", "解释为什么各大陆的发展如此不同"),
        ),
    ),
    Shelf(
        "popsci",
        H,
        "zh",
        "科普",
        (
            Book("《时间简史》", "史蒂芬·霍金", "宇宙起源、黑洞和时间的本质"),
            Book("《自私的基因》", "理查德·道金斯", "从基因的视角理解进化"),
            Book("《万物简史》", "比尔·布莱森", "轻松有趣的科学发现史"),
            Book("《物种起源》", "查尔斯·达尔文", "进化论的奠基之作"),
        ),
    ),
    Shelf(
        "en_fiction",
        S,
        "en",
        "classic novels",
        (
            Book(
                "Pride and Prejudice", "Jane Austen", "wit, manners and a famous slow-burn romance"
            ),
            Book(
                "To Kill a Mockingbird",
                "Harper Lee",
                "justice and growing up in the American South",
            ),
            Book("The Great Gatsby", "F. Scott Fitzgerald", "wealth and longing in the Jazz Age"),
            Book("1984", "George Orwell", "the classic dystopia about surveillance"),
            Book("Jane Eyre", "Charlotte Brontë", "an orphan's fight for independence and love"),
        ),
    ),
    Shelf(
        "en_habits",
        S,
        "en",
        "productivity",
        (
            Book("Atomic Habits", "James Clear", "small habits that compound over time"),
            Book("Deep Work", "Cal Newport", "focusing without distraction in a noisy world"),
            Book(
                "Thinking, Fast and Slow", "Daniel Kahneman", "the two systems behind our decisions"
            ),
            Book("The Power of Habit", "Charles Duhigg", "how habits form and how to change them"),
        ),
    ),
    Shelf(
        "en_science",
        H,
        "en",
        "popular science",
        (
            Book(
                "A Brief History of Time",
                "Stephen Hawking",
                "black holes, the Big Bang and time itself",
            ),
            Book("The Selfish Gene", "Richard Dawkins", "evolution from the gene's point of view"),
            Book("The Gene", "Siddhartha Mukherjee", "an intimate history of heredity"),
            Book("Cosmos", "Carl Sagan", "a tour of the universe and our place in it"),
        ),
    ),
    Shelf(
        "en_history",
        H,
        "en",
        "history",
        (
            Book("Sapiens", "Yuval Noah Harari", "a brief history of humankind"),
            Book(
                "Guns, Germs, and Steel",
                "Jared Diamond",
                "why civilizations developed so differently",
            ),
            Book("The Silk Roads", "Peter Frankopan", "world history seen from the East"),
        ),
    ),
)

FAKE: dict[Lang, tuple[Book, ...]] = {
    "zh": (
        Book("《时间的褶皱》", "林远", "一本讲时间管理的畅销书"),
        Book("《沉默的河岸》", "周启明", "获得过多项文学大奖"),
        Book("《认知的边界》", "陈思远", "豆瓣评分9.5的心理学经典"),
    ),
    "en": (
        Book("The Quiet Algorithm", "Martin Hale", "a bestseller on focus"),
        Book("Rivers of Memory", "Claire Dunmore", "a prize-winning novel"),
    ),
}

_Q: dict[Lang, tuple[str, ...]] = {
    "zh": ("推荐{n}本{g}方面的书", "有没有好看的{g}？推荐{n}本", "想读点{g}，给我推荐{n}本"),
    "en": (
        "Recommend {n} {g} books.",
        "Can you suggest {n} good {g} books?",
        "I want to read some {g}. Give me {n} picks.",
    ),
}


def _line(lang: Lang, b: Book, with_blurb: bool) -> str:
    if lang == "zh":
        return f"{b.title}（{b.author}）" + (f"：{b.blurb}" if with_blurb else "")
    return f"*{b.title}* by {b.author}" + (f": {b.blurb}" if with_blurb else "")


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    shelf = rng.choice([s for s in SHELVES if s.lang == lang and s.split == split])
    n = min(ask.n or 3, len(shelf.books) - 1)
    query = rng.choice(_Q[lang]).format(n=n, g=shelf.genre)
    books = list(shelf.books)
    rng.shuffle(books)
    blurbs = rng.random() < 0.75

    def render(picks: list[Book]) -> str:
        return style.listing(
            lang,
            rng,
            [_line(lang, b, blurbs) for b in picks],
            rng.choice(("numbered", "dash", "bold") if lang == "zh" else ("numbered", "dash")),
        )

    def swapped() -> str:
        picks = books[:n]
        i = rng.randrange(n)
        others = [b.author for b in books + list(FAKE[lang]) if b.author != picks[i].author]
        picks[i] = Book(picks[i].title, rng.choice(others), picks[i].blurb)
        return render(picks)

    def invented() -> str:
        picks = books[: n - 1]
        picks.insert(rng.randint(0, n - 1), rng.choice(FAKE[lang]))
        return render(picks)

    def other_genre() -> str:
        other = rng.choice(
            [s for s in SHELVES if s.lang == lang and s.split == split and s.key != shelf.key]
        )
        return render(list(other.books[:n]))

    def padded() -> str:
        return (
            failures.preamble(lang, rng, shelf.genre)
            + "\n\n"
            + render(books[:n])
            + "\n\n"
            + style.join(lang, failures.fillers(lang, rng, 3))
        )

    vague = (
        "推荐你去豆瓣读书看看评分高的{g}，根据自己的兴趣来选就好。"
        if lang == "zh"
        else "I'd suggest browsing highly rated {g} books on Goodreads and picking "
        "what interests you."
    )
    bad = {
        t.FACTUAL: swapped,
        t.RELIABILITY: invented,
        t.INCOMPLETE: lambda: render(books[: max(1, n - rng.randint(1, 2))]),
        t.INTENT: other_genre,
        t.FORMAT: lambda: render(books[: min(len(books), n + 2)]),
        t.VERBOSITY: padded,
        t.UNINFORMATIVE: lambda: vague.format(g=shelf.genre),
        t.SYSTEM: lambda: failures.system_error(lang, rng, render(books[:n])),
    }
    return Situation(
        kind="books",
        topic=f"books:{shelf.key}",
        lang=lang,
        scenario=t.INFO,
        success=t.GUIDANCE,
        query=query,
        good=lambda: render(books[:n]),
        bad=bad,
    )


KIND = Kind(
    name="books",
    failures={
        t.FACTUAL: {"count": 1},
        t.RELIABILITY: {"count": 1},
        t.INCOMPLETE: {"count": 1},
        t.INTENT: {"count": 1},
        t.FORMAT: {"count": 1},
        t.VERBOSITY: {"count": 1},
        t.UNINFORMATIVE: {"count": 1},
        t.SYSTEM: {"count": 1},
    },
    build=build,
    counts={"count": (2, 4)},
)
