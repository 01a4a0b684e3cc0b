"""Creative writing requests: short poems, greetings, names, social-media captions.

The request fixes a subject and usually a count; a bad reply writes about another
subject, delivers fewer or more pieces than asked, explains instead of writing, or
buries the text in commentary. Good and bad replies draw from the same line banks.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Piece:
    key: str
    split: Split
    lang: Lang
    family: str  # poem | greeting | names | caption
    subject: str
    lines: tuple[str, ...]


S: Split = "seed"
H: Split = "heldout"


def _p(key: str, split: Split, lang: Lang, family: str, subject: str, *lines: str) -> Piece:
    return Piece(key, split, lang, family, subject, lines)


BANK: tuple[Piece, ...] = (
    _p(
        "spring",
        S,
        "zh",
        "poem",
        "春天",
        "风把柳枝吹成了绿色的诗行",
        "桃花在墙角悄悄红了脸",
        "燕子衔来去年的旧消息",
        "田埂上的泥土翻出新的香气",
        "细雨落在伞面上，轻得像一句问候",
        "孩子们的风筝把天空拉得很远",
        "冰河松开了握了一冬的拳头",
        "每一片新叶都在练习说你好",
    ),
    _p(
        "autumn",
        S,
        "zh",
        "poem",
        "秋天",
        "银杏把整条街铺成了金色",
        "风一吹，树叶就学会了告别",
        "稻田弯下腰，向土地道谢",
        "桂花香躲在傍晚的巷口",
        "天空被洗得又高又蓝",
        "大雁排着队飞向南方",
        "一杯热茶，暖住渐凉的黄昏",
        "落叶在脚下沙沙地讲故事",
    ),
    _p(
        "moonpoem",
        S,
        "zh",
        "poem",
        "月亮",
        "月亮挂在窗前，像一盏不熄的灯",
        "它把清辉洒在每一条回家的路上",
        "圆的时候，是远方的团圆",
        "弯的时候，是一只小小的船",
        "照过古人的诗，也照着今天的我",
        "夜越深，它越温柔",
        "把思念折成月光寄给你",
        "抬头的人，都被它悄悄安慰",
    ),
    _p(
        "hometown",
        S,
        "zh",
        "poem",
        "故乡",
        "村口的老槐树还在等我",
        "炊烟是母亲写给天空的信",
        "青石板路记得我小时候的脚步",
        "乡音一开口，眼眶就湿了",
        "门前的小河流着旧时光",
        "每一次离开，都把故乡装进行囊",
        "梦里总有一盏为我留的灯",
        "故乡很远，也很近，就在心口",
    ),
    _p(
        "friendship",
        S,
        "zh",
        "poem",
        "友情",
        "我们在同一盏路灯下说过很多心事",
        "你是我难过时第一个想起的名字",
        "不常联系，却从未走远",
        "一起淋过的雨，后来都成了彩虹",
        "你笑起来的样子，像夏天的汽水",
        "隔着千里，也能心照不宣",
        "谢谢你在我沉默时读懂我",
        "愿我们老了还能一起晒太阳",
    ),
    _p(
        "sea",
        S,
        "zh",
        "poem",
        "大海",
        "海浪一遍遍抚平沙滩的褶皱",
        "海鸥在风里写下白色的句子",
        "蓝色一直铺到天的尽头",
        "贝壳里藏着潮水的秘密",
        "渔船载着清晨的光出发",
        "站在海边，烦恼都变得很小",
        "潮起潮落，是大海的呼吸",
        "夕阳把海面烫成了金色",
    ),
    _p(
        "rain",
        S,
        "zh",
        "poem",
        "雨",
        "雨点敲着窗，像在弹一首慢歌",
        "屋檐下挂起一串透明的珠帘",
        "街上的伞开成一朵朵花",
        "泥土的味道被雨唤醒",
        "路灯在水洼里摇晃",
        "这样的天气适合想念一个人",
        "雨停了，空气干净得发亮",
        "一只小猫躲在檐下看雨",
    ),
    _p(
        "mother",
        S,
        "zh",
        "poem",
        "母亲",
        "你的手不再光滑，却依旧温暖",
        "饭桌上总有我爱吃的那道菜",
        "电话那头的叮嘱，一句比一句长",
        "你把青春缝进了我的衣襟",
        "我走多远，都走不出你的牵挂",
        "你的白发里藏着我的成长",
        "灯下等我回家的，永远是你",
        "谢谢你，把最好的都给了我",
    ),
    _p(
        "birthday",
        S,
        "zh",
        "greeting",
        "朋友的生日",
        "祝你生日快乐，新的一岁万事顺意！",
        "愿你永远保持热爱，奔赴下一场山海。",
        "愿所有的好运都如约而至，所有的努力都不被辜负。",
        "希望你每天都有开心的理由。",
        "蛋糕要甜，日子更要甜。",
        "愿你被这个世界温柔以待。",
    ),
    _p(
        "newyear",
        S,
        "zh",
        "greeting",
        "新年",
        "新年快乐，愿新的一年平安喜乐、万事胜意！",
        "愿你在新的一年里身体健康、阖家幸福。",
        "辞旧迎新，愿所有的美好都如期而至。",
        "祝来年事业顺利，心想事成。",
        "愿你的新年充满欢笑与温暖。",
        "新岁启封，愿你步步生花。",
    ),
    _p(
        "wedding",
        S,
        "zh",
        "greeting",
        "同事的婚礼",
        "祝新婚快乐，百年好合，永结同心！",
        "愿你们往后余生相互扶持，携手白头。",
        "愿爱情常新，日子温暖而明亮。",
        "从此一屋两人三餐四季，平安喜乐。",
        "祝你们相亲相爱，幸福美满。",
        "今天是你们最美的一天，愿幸福长长久久。",
    ),
    _p(
        "retire",
        S,
        "zh",
        "greeting",
        "领导退休",
        "祝您退休生活愉快，身体健康！",
        "感谢您多年来的悉心指导与关照。",
        "愿您从此有更多时间陪伴家人、享受生活。",
        "您的敬业精神会一直激励着我们。",
        "祝您福寿安康，万事如意。",
        "期待您常回来看看大家。",
    ),
    _p(
        "cat",
        S,
        "zh",
        "names",
        "小猫",
        "年糕：软软白白的，很适合白猫",
        "橘子：适合橘猫，听着就很温暖",
        "芝麻：小小一只，适合黑猫或花猫",
        "豆包：圆滚滚的，很可爱",
        "奶盖：适合奶白色的猫",
        "可乐：活泼好动的猫很合适",
        "团子：喜欢缩成一团睡觉的猫",
        "布丁：软萌又好记",
        "栗子：适合棕色毛的猫",
    ),
    _p(
        "teashop",
        S,
        "zh",
        "names",
        "奶茶店",
        "半糖时光：轻松的感觉，也点出少糖健康的理念",
        "茶语小巷：有街巷里的烟火气",
        "一杯晴天：听起来心情就很好",
        "柚见：谐音“遇见”，适合主打水果茶",
        "慢茶铺：强调慢慢享受一杯茶",
        "甜度满分：直白好记",
        "云朵茶事：给人轻盈柔软的印象",
        "拾叶茶：自然清新",
        "小满茶舍：取自节气“小满”，寓意刚刚好",
    ),
    _p(
        "camping",
        S,
        "zh",
        "caption",
        "周末露营",
        "把周末交给山野和晚风。",
        "帐篷、星空和一壶热咖啡，刚刚好。",
        "离开信号，找回自己。",
        "今天的烦恼，被篝火烧掉了。",
        "在草地上躺平，也是一种生活方式。",
        "风很轻，云很慢，我们很快乐。",
    ),
    _p(
        "overtime",
        S,
        "zh",
        "caption",
        "加班",
        "城市的灯，有一盏是我点亮的。",
        "今天也是和电脑相依为命的一天。",
        "咖啡续命，明天一定早下班。",
        "深夜的写字楼，见证了打工人的坚持。",
        "加完这个班，就去吃顿好的。",
        "努力的人，运气都不会太差。",
    ),
    _p(
        "gym",
        S,
        "zh",
        "caption",
        "健身打卡",
        "流过的汗，都会变成更好的自己。",
        "今天的我，比昨天更强一点。",
        "自律给我自由。",
        "练完腿，下楼梯要扶墙了。",
        "和健身房的约会，从不迟到。",
        "目标不远，一步一步来。",
    ),
    # --- zh, held-out ---
    _p(
        "snow",
        H,
        "zh",
        "poem",
        "雪",
        "雪花轻轻落在睫毛上",
        "整座城安静得像一封未拆的信",
        "屋顶戴上了白色的帽子",
        "脚印一串串写在雪地里",
        "孩子们堆起一个胖胖的雪人",
        "呼出的白气飘成小小的云",
        "松枝托着一捧洁白",
        "窗外下雪，屋里煮着热汤",
    ),
    _p(
        "graduation",
        H,
        "zh",
        "poem",
        "毕业",
        "教室的黑板还留着最后一道题",
        "操场的风吹过我们的青春",
        "把名字写在彼此的留言册上",
        "学士帽抛向六月的天空",
        "说好的再见，其实是各自出发",
        "那些熬过的夜，都成了光",
        "母校的钟声会一直记得我们",
        "愿我们前程似锦，归来仍是少年",
    ),
    _p(
        "oldstreet",
        H,
        "zh",
        "poem",
        "老街",
        "青砖灰瓦，藏着旧时的光阴",
        "巷口的糖画摊冒着甜甜的热气",
        "木门吱呀一声，推开了童年",
        "墙上的爬山虎绿了一年又一年",
        "老人坐在门口，慢慢摇着蒲扇",
        "石板路被岁月磨得发亮",
        "卖豆花的吆喝声穿过小巷",
        "老街不说话，却什么都记得",
    ),
    _p(
        "stars",
        H,
        "zh",
        "poem",
        "星空",
        "夜空把星星撒成一条河",
        "每一颗星都在很远的地方眨眼",
        "躺在草地上，数到第一百颗",
        "流星划过时，心愿悄悄出发",
        "银河是天空最长的诗句",
        "城市的灯火让星星害羞地躲起来",
        "抬头看星，人就变得很小很轻",
        "愿你的梦里也有一片星空",
    ),
    _p(
        "newhome",
        H,
        "zh",
        "greeting",
        "朋友乔迁",
        "恭喜乔迁新居，祝新家温馨美满！",
        "愿新居带来新气象，日子越过越红火。",
        "乔迁之喜，福满新家。",
        "愿你在新家的每一天都舒心自在。",
        "祝家宅平安，幸福满堂。",
        "新家新起点，一切顺顺利利。",
    ),
    _p(
        "college",
        H,
        "zh",
        "greeting",
        "表弟考上大学",
        "恭喜金榜题名，前程似锦！",
        "愿你在大学里遇见更好的自己。",
        "十年寒窗终有回报，为你骄傲！",
        "愿你保持好奇，勇敢探索新世界。",
        "祝学业顺利，收获满满的青春。",
        "新的起点，愿你乘风破浪。",
    ),
    _p(
        "dog",
        H,
        "zh",
        "names",
        "小狗",
        "旺财：传统又喜庆",
        "豆豆：简单好叫",
        "奥利奥：适合黑白花色",
        "馒头：适合白色胖乎乎的小狗",
        "阿黄：适合黄色的田园犬",
        "球球：适合爱玩球的小狗",
        "可可：适合巧克力色的毛",
        "元宝：寓意招财进宝",
    ),
    _p(
        "studio",
        H,
        "zh",
        "names",
        "设计工作室",
        "方寸设计：小空间里做大创意",
        "拾光工作室：记录美好时光",
        "白纸设计：一切从空白开始",
        "一隅创意：专注而有温度",
        "有间设计：亲切好记",
        "木子工作室：简洁有质感",
        "留白设计：强调克制与呼吸感",
    ),
    _p(
        "seaside",
        H,
        "zh",
        "caption",
        "海边度假",
        "把心事丢给大海，它会替我保管。",
        "海风吹散了所有的不开心。",
        "今天的蓝，是大海给的。",
        "浪花一朵朵，心情一片片晴。",
        "在海边，时间会慢下来。",
        "和喜欢的人看海，是人间值得。",
    ),
    _p(
        "rainyday",
        H,
        "zh",
        "caption",
        "下雨天",
        "雨天适合窝在家里发呆。",
        "听雨声，喝热茶，什么都不想。",
        "下雨了，城市也学会了温柔。",
        "被雨困住的午后，刚好读完一本书。",
        "雨滴在窗上写诗。",
        "晴天是礼物，雨天也是。",
    ),
    # --- en, seed ---
    _p(
        "en_autumn",
        S,
        "en",
        "poem",
        "autumn",
        "The maples blush along the quiet street",
        "Each leaf lets go without a word",
        "The air smells faintly of smoke and apples",
        "Geese draw a long line across the sky",
        "Evenings arrive a little earlier, a little softer",
        "Warm tea fogs up the kitchen window",
        "Fields bow low after the harvest",
        "Footsteps crunch on golden paths",
    ),
    _p(
        "en_sea",
        S,
        "en",
        "poem",
        "the sea",
        "Waves keep smoothing the creases of the sand",
        "Gulls write white sentences on the wind",
        "Blue runs all the way to the edge of the sky",
        "Shells hold the secrets of the tide",
        "Boats leave at dawn carrying the first light",
        "Standing here, my worries feel small",
        "The tide goes out and comes back like breathing",
        "Sunset turns the water into gold",
    ),
    _p(
        "en_home",
        S,
        "en",
        "poem",
        "home",
        "The porch light is always on for me",
        "The kitchen smells like Sunday mornings",
        "Creaky stairs remember every step I took",
        "My name sounds softer in my mother's voice",
        "The old oak still shades the yard",
        "Every road I take leads somewhere back here",
        "Home is less a place than a feeling",
        "I carry it with me wherever I go",
    ),
    _p(
        "en_birthday",
        S,
        "en",
        "greeting",
        "a friend's birthday",
        "Happy birthday! Wishing you a year full of good surprises.",
        "May this year bring you as much joy as you bring everyone around you.",
        "Here's to new adventures and old friends.",
        "Hope your day is as wonderful as you are.",
        "Eat the cake, make the wish, enjoy every minute.",
        "Cheers to another year of you being awesome.",
    ),
    _p(
        "en_cat",
        S,
        "en",
        "names",
        "a kitten",
        "Mochi: soft and round, great for a white cat",
        "Pepper: for a black or speckled cat",
        "Biscuit: warm and cozy, good for a tan cat",
        "Luna: classic for a calm, night-loving cat",
        "Ziggy: for a playful one",
        "Noodle: for a long, wiggly cat",
        "Marmalade: made for a ginger cat",
        "Olive: short, sweet and easy to call",
    ),
    _p(
        "en_hiking",
        S,
        "en",
        "caption",
        "a weekend hike",
        "Left my worries at the trailhead.",
        "Fresh air, tired legs, full heart.",
        "The view was worth every step.",
        "Weekend plans: get lost, on purpose.",
        "Mountains calling, and I answered.",
        "Happiness is a long trail and a good snack.",
    ),
    _p(
        "en_farewell",
        S,
        "en",
        "greeting",
        "a coworker's farewell",
        "It's been a joy working with you; you'll be missed.",
        "Thank you for every bit of help and every laugh.",
        "Your new team is lucky to have you.",
        "Wishing you success in this next chapter.",
        "Don't be a stranger; keep in touch!",
        "Go show them what you can do.",
    ),
    _p(
        "en_beach",
        S,
        "en",
        "caption",
        "a beach day",
        "Salt in the air, sand in my shoes.",
        "Vitamin sea, fully recharged.",
        "Sunkissed and stress-free.",
        "Happiness comes in waves.",
        "Collecting sunsets, not things.",
        "Low tide, high spirits.",
    ),
    # --- en, held-out ---
    _p(
        "en_baby",
        H,
        "en",
        "greeting",
        "a friend's new baby",
        "Congratulations on your beautiful new arrival!",
        "Wishing your little one a lifetime of love and laughter.",
        "Welcome to the world, little one!",
        "May your days be full of cuddles and your nights full of sleep.",
        "So happy for your growing family.",
        "Can't wait to meet the newest member of the family.",
    ),
    _p(
        "en_cafe",
        H,
        "en",
        "names",
        "a coffee shop",
        "Morning Ritual: cozy, and hints at the daily habit",
        "Common Grounds: a pun on coffee grounds and community",
        "Slow Pour: suits a specialty pour-over place",
        "The Daily Grind: classic and easy to remember",
        "Bean There: playful and light",
        "Steam & Story: good if you host readings",
    ),
    _p(
        "en_citynight",
        H,
        "en",
        "caption",
        "a night out in the city",
        "City lights and good company.",
        "Tonight's forecast: 100% fun.",
        "Out past my bedtime, no regrets.",
        "The skyline never gets old.",
        "Made memories, lost my voice.",
        "Neon nights, easy vibes.",
    ),
    _p(
        "en_snow",
        H,
        "en",
        "poem",
        "snow",
        "Snow settles softly on my eyelashes",
        "The whole town goes quiet as an unopened letter",
        "Rooftops wear white hats",
        "Footprints write a trail across the yard",
        "Kids roll a snowman with a crooked smile",
        "My breath drifts up like a tiny cloud",
        "Pine branches hold handfuls of white",
        "Soup simmers while the flakes keep falling",
    ),
    _p(
        "en_graduation",
        H,
        "en",
        "poem",
        "graduation",
        "The last equation still fades on the board",
        "Caps fly up into the June sky",
        "We sign each other's yearbooks with promises",
        "The hallways echo with our laughter",
        "Goodbye is really just a different start",
        "All those late nights turned into light",
        "The campus bell will remember our names",
        "May we go far and still come home young",
    ),
    _p(
        "en_retire",
        H,
        "en",
        "greeting",
        "my manager's retirement",
        "Congratulations on your retirement!",
        "Thank you for years of guidance and kindness.",
        "Enjoy the well-earned freedom and time with family.",
        "Your dedication inspired all of us.",
        "Wishing you good health and many happy adventures.",
        "Please come back and visit us often.",
    ),
    _p(
        "en_dog",
        H,
        "en",
        "names",
        "a puppy",
        "Buddy: friendly and classic",
        "Maple: warm, good for a reddish coat",
        "Rocket: for an energetic pup",
        "Oreo: for black and white fur",
        "Bean: for a small dog",
        "Scout: for a curious explorer",
        "Waffles: goofy and lovable",
    ),
)

_Q: dict[tuple[Lang, str], tuple[str, ...]] = {
    ("zh", "poem"): ("写一首关于{s}的小诗", "帮我写几句关于{s}的现代诗", "以{s}为主题写首短诗"),
    ("zh", "greeting"): (
        "帮我写一段{s}的祝福语",
        "{s}，帮我想几句祝福的话",
        "写几句祝福，场合是{s}",
    ),
    ("zh", "names"): ("给我的{s}起几个名字", "帮我想几个{s}的名字", "{s}取什么名字好？"),
    ("zh", "caption"): (
        "帮我写几条{s}的朋友圈文案",
        "{s}发朋友圈配什么文案好？",
        "来几句{s}的文案",
    ),
    ("en", "poem"): (
        "Write a short poem about {s}.",
        "Can you write me a few lines of poetry about {s}?",
    ),
    ("en", "greeting"): ("Write a short message for {s}.", "Help me write a few lines for {s}."),
    ("en", "names"): ("Suggest some names for {s}.", "What should I name {s}?"),
    ("en", "caption"): ("Give me some Instagram captions for {s}.", "Caption ideas for {s}?"),
}
_COUNT: dict[tuple[Lang, str], tuple[str, ...]] = {
    ("zh", "poem"): ("，{n}行", "，只要{n}句", "，写{n}行就好"),
    ("zh", "greeting"): (
        "，{n}句话",
        "，不超过{n}句",
    ),
    ("zh", "names"): ("，给{n}个", "，要{n}个"),
    ("zh", "caption"): ("，{n}条", "，给我{n}条"),
    ("en", "poem"): (" Exactly {n} lines.", " {n} lines please."),
    ("en", "greeting"): (" {n} sentences.", " Keep it to {n} sentences."),
    ("en", "names"): (" Give me {n}.", " I need {n} options."),
    ("en", "caption"): (" Give me {n}.", " {n} options please."),
}
_NO_EXPLAIN: dict[Lang, tuple[str, ...]] = {
    "zh": ("，直接给内容，不用解释", "，不要分析，直接写"),
    "en": (" No explanation, just the text.", " Just the text please."),
}
_COMMENT: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "这几句从{s}的细节入手，表达了对生活的热爱。",
        "其中运用了拟人的手法，让画面更生动。",
        "整体风格清新自然，适合发朋友圈或写在贺卡上。",
        "你也可以根据自己的情况替换其中的词语。",
        "这样写的好处是既有画面感又不会太长。",
        "每一句都围绕{s}展开，读起来很有节奏感。",
    ),
    "en": (
        "These lines start from small details of {s} to show a love of everyday life.",
        "Personification makes the images more vivid.",
        "The overall tone is light and natural, good for a card or a post.",
        "Feel free to swap in your own words.",
        "Each line stays close to {s}, which gives it a steady rhythm.",
    ),
}
_HOWTO_WRITE: dict[Lang, tuple[str, ...]] = {
    "zh": (
        "写{s}相关的内容，可以先想想它给你最深的印象是什么，再围绕这个印象展开。注意用具体的细节代替空泛的形容词，语言尽量简洁，最后读一遍调整节奏就可以了。",
        "建议你从自己的真实感受出发来写{s}，这样写出来的东西最打动人。可以参考一些优秀作品，多读多写自然就会越来越好。",
    ),
    "en": (
        "When writing about {s}, start from the strongest impression it leaves on you and build "
        "around it. Use concrete details instead of vague adjectives and read it aloud to adjust "
        "the rhythm.",
        "I'd suggest writing about {s} from your own feelings, since that is what moves readers "
        "most. Reading good examples helps a lot too.",
    ),
}
_DEFAULT_N = {"poem": 4, "greeting": 3, "names": 5, "caption": 3}


def _render(p: Piece, items: list[str], rng: Random, bare: bool = False) -> str:
    lang = p.lang
    if p.family == "poem":
        title = f"《{p.subject}》\n" if lang == "zh" and rng.random() < 0.4 else ""
        return title + "\n".join(items)
    if p.family == "greeting":
        return style.join(lang, items)
    if p.family == "names" and bare:
        items = [i.split("：")[0].split(":")[0] for i in items]
        return ("、" if lang == "zh" else ", ").join(items)
    return style.listing(lang, rng, items, rng.choice(("numbered", "dash", "dot")))


def _sibling(p: Piece, rng: Random) -> Piece:
    same = [q for q in BANK if q.lang == p.lang and q.split == p.split and q.key != p.key]
    return rng.choice([q for q in same if q.family == p.family] or same)


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    p = rng.choice([x for x in BANK if x.lang == lang and x.split == split])
    base = rng.choice(_Q[(lang, p.family)]).format(s=p.subject)
    n = min(ask.n, len(p.lines) - 2) if ask.kind == "count" else _DEFAULT_N[p.family]
    if ask.kind == "count":
        query = (base.rstrip("？?。.") if lang == "zh" else base) + rng.choice(
            _COUNT[(lang, p.family)]
        ).format(n=n)
    elif ask.kind == "no_explain":
        query = (base.rstrip("？?。.") if lang == "zh" else base) + rng.choice(_NO_EXPLAIN[lang])
    else:
        query = base
    lines = list(p.lines)
    rng.shuffle(lines)
    bare = ask.kind == "no_explain"

    def comment() -> str:
        picks = rng.sample(_COMMENT[lang], k=2)
        return style.join(lang, [c.format(s=p.subject) for c in picks])

    def good() -> str:
        text = _render(p, lines[:n], rng, bare)
        if not bare and rng.random() < 0.25:
            text += "\n\n" + rng.choice(_COMMENT[lang]).format(s=p.subject)
        return text

    def fewer() -> str:
        if rng.random() < 0.3:
            return failures.truncate(rng, _render(p, lines[:n], rng, bare))
        return _render(p, lines[: max(1, n - rng.randint(1, 2))], rng, bare)

    def other_subject() -> str:
        q = _sibling(p, rng)
        other = list(q.lines)
        rng.shuffle(other)
        return _render(q, other[:n], rng, bare)

    def wrong_count() -> str:
        if ask.kind == "no_explain":
            return _render(p, lines[:n], rng) + "\n\n" + comment()
        if p.family == "poem" and rng.random() < 0.4:
            return style.join(lang, [style.end(lang, x) for x in lines[:n]])  # prose, not lines
        return _render(p, lines[: min(len(lines), n + rng.randint(2, 3))], rng, bare)

    def padded() -> str:
        pre = failures.preamble(lang, rng, p.subject)
        body = _render(p, lines[:n], rng, bare)
        tail = style.join(lang, [comment(), *failures.fillers(lang, rng, 2)])
        return pre + "\n\n" + body + "\n\n" + tail

    bad = {
        t.VERBOSITY: padded,
        t.INCOMPLETE: fewer,
        t.INTENT: other_subject,
        t.FORMAT: wrong_count,
        t.UNINFORMATIVE: lambda: rng.choice(_HOWTO_WRITE[lang]).format(s=p.subject),
        t.REFUSAL: lambda: failures.refuse(lang, rng, p.subject),
        t.SYSTEM: lambda: failures.system_error(lang, rng, _render(p, lines[:n], rng, bare)),
    }
    return Situation(
        kind="writing",
        topic=f"writing:{p.key}",
        lang=lang,
        scenario=t.CREATIVE,
        success=t.CREATIVE_GEN,
        query=query,
        good=good,
        bad=bad,
    )


KIND = Kind(
    name="writing",
    failures={
        t.VERBOSITY: {"plain": 2, "count": 1, "no_explain": 1},
        t.INCOMPLETE: {"count": 3, "plain": 1},
        t.INTENT: {"plain": 2, "count": 1},
        t.FORMAT: {"count": 3, "no_explain": 2},
        t.UNINFORMATIVE: {"plain": 1},
        t.REFUSAL: {"plain": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=build,
    counts={"count": (3, 6)},
)
