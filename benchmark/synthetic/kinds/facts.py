"""Factual questions and product/service questions with one checkable answer.

Bad replies keep the good reply's shape and change its relation to the question: a
wrong value in the same sentence, the answer to a neighbouring question, a hedge that
contradicts itself, only half of a two-part question.
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import asks, failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class Fact:
    key: str
    group: str
    split: Split
    lang: Lang
    scenario: str
    noun: str
    q: tuple[str, ...]
    a: str  # answer sentence with {v}
    v: str
    wrong: tuple[str, ...]
    details: tuple[str, ...]
    q2: str = ""
    a2: str = ""
    old: str = ""  # an outdated claim someone might still repeat


def _f(
    key: str,
    group: str,
    split: Split,
    lang: Lang,
    scenario: str,
    noun: str,
    q: tuple[str, ...],
    a: str,
    v: str,
    wrong: tuple[str, ...],
    details: tuple[str, ...],
    q2: str = "",
    a2: str = "",
    old: str = "",
) -> Fact:
    return Fact(key, group, split, lang, scenario, noun, q, a, v, wrong, details, q2, a2, old)


S: Split = "seed"
H: Split = "heldout"

BANK: tuple[Fact, ...] = (
    # --- zh, seed: geography ---
    _f(
        "everest",
        "geo",
        S,
        "zh",
        t.INFO,
        "珠穆朗玛峰的高度",
        ("珠穆朗玛峰有多高？", "珠峰海拔是多少米？", "世界最高峰珠峰现在的高度是多少"),
        "珠穆朗玛峰的海拔是{v}。",
        "8848.86米",
        ("8868.86米", "8488.86米", "9848米"),
        (
            "这个数据是2020年中国和尼泊尔联合公布的最新测量结果。",
            "珠峰位于中国和尼泊尔交界处的喜马拉雅山脉。",
            "每年春季的五月前后是攀登珠峰的主要窗口期。",
        ),
        "它在哪个国家？",
        "它位于中国与尼泊尔的边境上，北坡在中国西藏日喀则市定日县境内。",
        "根据2005年的测量，珠峰的高度是8844.43米，这也是目前的最新数据。",
    ),
    _f(
        "yangtze",
        "geo",
        S,
        "zh",
        t.INFO,
        "长江的长度",
        ("长江有多长？", "长江全长多少公里？"),
        "长江全长约{v}，是中国第一长河。",
        "6300公里",
        ("5464公里", "3600公里", "8300公里"),
        (
            "它也是仅次于尼罗河和亚马孙河的世界第三长河。",
            "长江流域面积约180万平方公里。",
            "长江干流流经青海、西藏、四川、云南、重庆、湖北、湖南、江西、安徽、江苏、上海等省区市。",
        ),
        "它最后流到哪里？",
        "长江发源于青藏高原的唐古拉山脉，最终在上海注入东海。",
    ),
    _f(
        "yellowriver",
        "geo",
        S,
        "zh",
        t.INFO,
        "黄河的长度",
        ("黄河有多长？", "黄河全长是多少公里"),
        "黄河全长约{v}，是中国第二长河。",
        "5464公里",
        ("6300公里", "4464公里", "7464公里"),
        ("黄河被称为中华民族的母亲河。", "它最终在山东省东营市注入渤海。"),
        "为什么叫黄河？",
        "因为它中游流经黄土高原，携带了大量泥沙，河水呈黄色。",
    ),
    _f(
        "sahara",
        "geo",
        S,
        "zh",
        t.INFO,
        "世界上最大的热带沙漠",
        ("世界上最大的热带沙漠是哪个？", "最大的非极地沙漠叫什么"),
        "世界上最大的热带沙漠是{v}。",
        "撒哈拉沙漠",
        ("阿拉伯沙漠", "戈壁沙漠", "塔克拉玛干沙漠"),
        (
            "它位于非洲北部，面积约900多万平方公里。",
            "如果把极地也算作沙漠，南极洲才是面积最大的“寒漠”。",
        ),
        "它横跨哪些地区？",
        "撒哈拉横跨北非十多个国家，包括埃及、利比亚、阿尔及利亚、摩洛哥和毛里塔尼亚等。",
    ),
    _f(
        "xinjiang",
        "geo",
        S,
        "zh",
        t.INFO,
        "中国面积最大的省级行政区",
        ("中国面积最大的省份是哪个？", "哪个省级行政区面积最大"),
        "中国面积最大的省级行政区是{v}。",
        "新疆维吾尔自治区",
        ("西藏自治区", "内蒙古自治区", "青海省"),
        (
            "新疆面积约166万平方公里，约占全国陆地面积的六分之一。",
            "新疆与八个国家接壤，是中国陆地边境线最长的省区。",
        ),
        "第二大是哪个？",
        "第二大的是西藏自治区，面积约120万平方公里。",
    ),
    _f(
        "mariana",
        "geo",
        S,
        "zh",
        t.INFO,
        "世界上最深的海沟",
        ("世界上最深的海沟是哪一条？", "地球上最深的地方在哪"),
        "世界上最深的海沟是太平洋西部的{v}。",
        "马里亚纳海沟",
        ("汤加海沟", "日本海沟", "波多黎各海沟"),
        (
            "它最深处叫“挑战者深渊”，深度约1.1万米。",
            "2020年中国的“奋斗者”号载人潜水器在这里成功坐底。",
        ),
        "有多深？",
        "最深处的挑战者深渊约1.1万米，比珠峰的高度还要多出两千多米。",
    ),
    _f(
        "poyang",
        "geo",
        S,
        "zh",
        t.INFO,
        "中国最大的淡水湖",
        ("中国最大的淡水湖是哪个？", "我国第一大淡水湖叫什么名字"),
        "中国最大的淡水湖是{v}。",
        "鄱阳湖",
        ("洞庭湖", "太湖", "洪泽湖"),
        (
            "鄱阳湖位于江西省北部，和长江相通。",
            "它的水域面积随季节变化很大，丰水期和枯水期能相差好几倍。",
        ),
        "第二大呢？",
        "第二大淡水湖是湖南的洞庭湖。",
    ),
    _f(
        "canberra",
        "geo",
        S,
        "zh",
        t.INFO,
        "澳大利亚的首都",
        ("澳大利亚的首都是哪里？", "澳洲首都是悉尼吗"),
        "澳大利亚的首都是{v}。",
        "堪培拉",
        ("悉尼", "墨尔本", "布里斯班"),
        (
            "很多人以为是悉尼，其实悉尼只是最大的城市。",
            "堪培拉是二十世纪初为平衡悉尼和墨尔本之争而专门规划建设的首都。",
        ),
        "最大的城市是哪个？",
        "澳大利亚人口最多的城市是悉尼。",
    ),
    _f(
        "ottawa",
        "geo",
        S,
        "zh",
        t.INFO,
        "加拿大的首都",
        ("加拿大首都是哪个城市？", "加拿大的首都是多伦多吗"),
        "加拿大的首都是{v}。",
        "渥太华",
        ("多伦多", "温哥华", "蒙特利尔"),
        ("渥太华位于安大略省东部，紧邻魁北克省。", "多伦多是加拿大人口最多的城市，但不是首都。"),
        "它在哪个省？",
        "渥太华位于安大略省，隔渥太华河与魁北克省相望。",
    ),
    # --- zh, seed: space ---
    _f(
        "moon",
        "space",
        S,
        "zh",
        t.INFO,
        "地球到月球的距离",
        ("地球到月球有多远？", "月亮离我们多少公里"),
        "地球到月球的平均距离约为{v}。",
        "38.4万公里",
        ("3.84万公里", "384万公里", "1.5亿公里"),
        (
            "由于月球轨道是椭圆，近地点约36.3万公里，远地点约40.6万公里。",
            "光从月球到地球大约需要1.3秒。",
        ),
        "光走这段距离要多久？",
        "光从月球到地球大约需要1.3秒。",
    ),
    _f(
        "sun_dist",
        "space",
        S,
        "zh",
        t.INFO,
        "地球到太阳的距离",
        ("地球离太阳有多远？", "日地距离是多少"),
        "地球到太阳的平均距离约{v}，也就是1个天文单位。",
        "1.5亿公里",
        ("1500万公里", "15亿公里", "3.8亿公里"),
        (
            "地球每年一月初离太阳最近，七月初最远。",
            "天文学上常用这个距离作为衡量太阳系尺度的单位。",
        ),
        "阳光到地球要多久？",
        "阳光从太阳到达地球大约需要8分20秒。",
    ),
    _f(
        "jupiter",
        "space",
        S,
        "zh",
        t.INFO,
        "太阳系最大的行星",
        ("太阳系最大的行星是哪个？", "八大行星里哪个最大"),
        "太阳系最大的行星是{v}。",
        "木星",
        ("土星", "天王星", "海王星"),
        (
            "木星的质量大约是其他七大行星质量总和的2.5倍。",
            "木星是一颗气态巨行星，表面的大红斑是一个持续了几百年的巨型风暴。",
        ),
        "它有多少颗卫星？",
        "木星已确认的卫星有九十多颗，其中最大的木卫三比水星还大。",
    ),
    _f(
        "light",
        "space",
        S,
        "zh",
        t.LEARNING,
        "光速",
        ("光速是多少？", "光在真空中一秒能走多远"),
        "光在真空中的速度约为每秒{v}。",
        "30万公里",
        ("3万公里", "300万公里", "30万米"),
        ("精确值是每秒299792458米，这个数值现在被用来定义“米”。", "光一秒钟大约能绕地球七圈半。"),
        "有比光更快的东西吗？",
        "按照相对论，有质量的物体和信息都不能超过真空中的光速。",
    ),
    _f(
        "mercury",
        "space",
        S,
        "zh",
        t.INFO,
        "离太阳最近的行星",
        ("离太阳最近的行星是哪个？", "哪颗行星离太阳最近"),
        "离太阳最近的行星是{v}。",
        "水星",
        ("金星", "火星", "地球"),
        (
            "水星没有浓厚的大气层，昼夜温差非常大。",
            "虽然水星离太阳最近，但表面最热的行星是金星，因为金星有浓厚的二氧化碳大气，温室效应极强。",
        ),
        "那最热的行星是哪个？",
        "最热的是金星，表面温度约460℃，比水星还高。",
    ),
    # --- zh, seed: biology ---
    _f(
        "bones",
        "bio",
        S,
        "zh",
        t.LEARNING,
        "成年人骨头的数量",
        ("成年人有多少块骨头？", "人体一共有几块骨头"),
        "成年人一般有{v}骨头。",
        "206块",
        ("208块", "216块", "260块"),
        (
            "新生儿的骨头更多，约有270到300块，成长过程中部分骨头会融合。",
            "人体最长的骨头是股骨，最小的是耳朵里的镫骨。",
        ),
        "最小的骨头是哪块？",
        "最小的骨头是中耳里的镫骨，只有两三毫米长。",
    ),
    _f(
        "skin",
        "bio",
        S,
        "zh",
        t.LEARNING,
        "人体最大的器官",
        ("人体最大的器官是什么？", "人身上最大的器官是哪个"),
        "人体最大的器官是{v}。",
        "皮肤",
        ("肝脏", "肺", "大脑"),
        ("成年人的皮肤总面积约1.5到2平方米。", "如果只算内脏器官，最大的是肝脏。"),
        "最大的内脏呢？",
        "最大的内脏器官是肝脏，成年人的肝脏约重1.2到1.5公斤。",
    ),
    _f(
        "bluewhale",
        "bio",
        S,
        "zh",
        t.INFO,
        "地球上最大的动物",
        ("地球上最大的动物是什么？", "世界上体型最大的动物是哪种"),
        "地球上最大的动物是{v}。",
        "蓝鲸",
        ("抹香鲸", "鲸鲨", "非洲象"),
        ("蓝鲸体长可达30米左右，体重可超过150吨。", "它主要以磷虾为食，一天能吃掉几吨磷虾。"),
        "它吃什么？",
        "蓝鲸主要吃磷虾，是滤食性动物。",
    ),
    _f(
        "panda",
        "bio",
        S,
        "zh",
        t.INFO,
        "大熊猫的食物",
        ("大熊猫主要吃什么？", "熊猫平时吃啥"),
        "大熊猫的食物中{v}。",
        "99%以上是竹子",
        ("大部分是肉类", "主要是水果和蜂蜜", "一半是竹子一半是鱼"),
        (
            "大熊猫属于食肉目，但演化成了以竹子为主食。",
            "因为竹子营养低，一只成年大熊猫每天要花十几个小时进食。",
        ),
        "它们一天吃多少？",
        "成年大熊猫每天要吃十几到几十公斤竹子。",
    ),
    _f(
        "dna",
        "bio",
        S,
        "zh",
        t.LEARNING,
        "DNA双螺旋结构的发现者",
        ("DNA双螺旋结构是谁发现的？", "是谁提出了DNA双螺旋模型"),
        "DNA双螺旋结构模型是由{v}在1953年提出的。",
        "沃森和克里克",
        ("孟德尔", "达尔文", "摩尔根"),
        (
            "富兰克林拍摄的X射线衍射照片为这个发现提供了关键证据。",
            "沃森、克里克和威尔金斯因此获得了1962年诺贝尔生理学或医学奖。",
        ),
        "他们因此得诺贝尔奖了吗？",
        "沃森、克里克和威尔金斯因此共同获得了1962年诺贝尔生理学或医学奖。",
    ),
    # --- zh, seed: Chinese history ---
    _f(
        "qin",
        "history",
        S,
        "zh",
        t.LEARNING,
        "秦始皇统一六国的时间",
        ("秦始皇哪一年统一六国？", "秦朝统一中国是在公元前多少年"),
        "秦始皇在{v}完成了统一六国。",
        "公元前221年",
        ("公元前211年", "公元前206年", "公元前230年"),
        (
            "统一后他推行了郡县制，并统一了文字、货币和度量衡。",
            "秦朝只存在了十五年，于公元前207年灭亡。",
        ),
        "他统一后做了哪些事？",
        "他推行郡县制，统一文字、货币和度量衡，还修建驰道、连接长城。",
    ),
    _f(
        "tang",
        "history",
        S,
        "zh",
        t.LEARNING,
        "唐朝建立的时间",
        ("唐朝是哪一年建立的？", "唐朝建立于哪年"),
        "唐朝建立于{v}，开国皇帝是李渊。",
        "公元618年",
        ("公元907年", "公元581年", "公元960年"),
        ("唐朝共历经约289年，于公元907年灭亡。", "唐太宗李世民在位时期被称为“贞观之治”。"),
        "唐朝什么时候灭亡的？",
        "唐朝于公元907年灭亡，之后进入五代十国时期。",
    ),
    _f(
        "shiji",
        "history",
        S,
        "zh",
        t.LEARNING,
        "《史记》的作者",
        ("《史记》的作者是谁？", "史记是谁写的"),
        "《史记》的作者是西汉史学家{v}。",
        "司马迁",
        ("班固", "司马光", "范晔"),
        (
            "《史记》是中国第一部纪传体通史，记载了从黄帝到汉武帝时期约三千年的历史。",
            "鲁迅称赞它是“史家之绝唱，无韵之离骚”。",
        ),
        "它有多少篇？",
        "《史记》共130篇，分为本纪、表、书、世家、列传五种体例。",
    ),
    _f(
        "cailun",
        "history",
        S,
        "zh",
        t.LEARNING,
        "改进造纸术的人",
        ("造纸术是谁改进的？", "是谁改进了造纸术"),
        "改进造纸术的是东汉的{v}。",
        "蔡伦",
        ("张衡", "毕昇", "华佗"),
        (
            "他用树皮、麻头、破布和旧渔网等原料造纸，降低了成本。",
            "考古发现西汉时期已经有纸，蔡伦的贡献主要在于改进工艺。",
        ),
        "活字印刷是谁发明的？",
        "活字印刷术是北宋的毕昇发明的。",
    ),
    _f(
        "zhenghe",
        "history",
        S,
        "zh",
        t.LEARNING,
        "郑和下西洋的次数",
        ("郑和一共下了几次西洋？", "郑和下西洋是几次"),
        "郑和一共{v}下西洋。",
        "七次",
        ("五次", "三次", "九次"),
        ("第一次出发是在明成祖永乐三年，也就是1405年。", "船队最远到达了东非沿岸和红海一带。"),
        "第一次是哪一年？",
        "第一次下西洋是在1405年，也就是明朝永乐三年。",
    ),
    # --- zh, seed: product & service ---
    _f(
        "powerbank",
        "travel",
        S,
        "zh",
        t.PRODUCT,
        "充电宝带上飞机的规定",
        ("充电宝能带上飞机吗？", "坐飞机可以带多大的充电宝"),
        "充电宝可以随身带上飞机，但{v}。",
        "不能托运，额定能量不超过100Wh的可以直接随身携带",
        (
            "可以托运，额定能量不超过200Wh的都行",
            "只能托运，不能随身带",
            "额定能量不超过300Wh的都可以随身带",
        ),
        (
            "100Wh到160Wh之间的需要经航空公司批准，超过160Wh的禁止携带。",
            "充电宝上必须有清晰的额定能量标识，标识不清的可能会被没收。",
            "飞行途中不允许用充电宝给设备充电。",
        ),
        "飞机上能用吗？",
        "按照现行规定，飞行过程中不能使用充电宝给手机等设备充电。",
    ),
    _f(
        "return7",
        "shopping",
        S,
        "zh",
        t.PRODUCT,
        "网购七天无理由退货",
        ("网购的衣服不喜欢能退吗？", "七天无理由退货有什么条件"),
        "网购商品一般支持七天无理由退货，前提是{v}。",
        "商品完好、不影响二次销售",
        ("商品必须有质量问题", "只要在30天内都可以", "需要先付20%的手续费"),
        (
            "七天从签收的第二天开始算。",
            "定制商品、鲜活易腐商品、已拆封的数字商品等一般不适用。",
            "退货运费通常由买家承担，有运费险的可以抵扣。",
        ),
        "运费谁出？",
        "无理由退货的运费一般由买家承担，如果买了运费险可以获得赔付。",
    ),
    _f(
        "phone_screen",
        "devices",
        S,
        "zh",
        t.PRODUCT,
        "手机屏幕摔碎的保修",
        ("手机屏幕摔碎了在保修期内能免费修吗？", "手机摔坏了屏幕保修管吗"),
        "屏幕摔碎属于人为损坏，{v}。",
        "一般不在免费保修范围内，需要付费维修",
        ("在保修期内都可以免费换", "只要有发票就能免费修", "厂家一律不提供维修"),
        (
            "如果购买了碎屏险或延保服务，可以按服务条款申请维修。",
            "建议去官方售后网点检测，先问清楚报价再决定。",
        ),
        "有什么办法省钱吗？",
        "可以先看看有没有碎屏险或信用卡附带的保障，也可以比较官方和正规第三方维修的报价。",
    ),
    _f(
        "credit_late",
        "finance",
        S,
        "zh",
        t.PRODUCT,
        "信用卡逾期一天的影响",
        ("信用卡逾期一天有影响吗？", "信用卡晚还了一天会不会上征信"),
        "信用卡逾期一天，{v}。",
        "很多银行有几天的还款宽限期，在宽限期内还清通常不算逾期",
        ("一定会立刻上征信黑名单", "完全没有任何影响，也不用还利息", "银行会马上冻结所有账户"),
        (
            "各银行的宽限期规定不同，常见的是3天左右，最好打客服电话确认。",
            "即使在宽限期内，部分银行也可能收取利息。",
            "一旦发现忘记还款，应尽快全额还清。",
        ),
        "怎么确认有没有影响？",
        "可以打银行客服电话确认是否在宽限期内，之后也可以在央行征信中心查询个人信用报告。",
    ),
    # --- zh, held-out: culture & festivals ---
    _f(
        "hongloumeng",
        "culture",
        H,
        "zh",
        t.INFO,
        "《红楼梦》的作者",
        ("《红楼梦》是谁写的？", "红楼梦的作者是谁"),
        "《红楼梦》前八十回的作者是{v}。",
        "曹雪芹",
        ("施耐庵", "吴承恩", "罗贯中"),
        ("通行本的后四十回一般认为由高鹗、程伟元整理续补。", "它被誉为中国古典小说的巅峰之作。"),
        "后四十回是谁写的？",
        "后四十回通常认为是高鹗和程伟元整理续补的，具体作者学界仍有争议。",
    ),
    _f(
        "duanwu",
        "festival",
        H,
        "zh",
        t.INFO,
        "端午节的日期",
        ("端午节是农历哪一天？", "端午是几月几号"),
        "端午节是农历{v}。",
        "五月初五",
        ("五月十五", "八月十五", "正月十五"),
        (
            "端午节有吃粽子、赛龙舟、挂艾草等习俗。",
            "2009年端午节被列入联合国教科文组织人类非物质文化遗产代表作名录。",
        ),
        "端午节纪念谁？",
        "民间普遍认为端午节是为了纪念爱国诗人屈原。",
    ),
    _f(
        "midautumn",
        "festival",
        H,
        "zh",
        t.INFO,
        "中秋节的日期",
        ("中秋节是农历几月几号？", "中秋是哪天"),
        "中秋节是农历{v}。",
        "八月十五",
        ("八月十六", "九月初九", "七月初七"),
        ("中秋有赏月、吃月饼、家人团圆的习俗。", "因为正好在秋季的中间，所以叫“中秋”。"),
        "为什么要吃月饼？",
        "月饼圆圆的，象征团圆，所以中秋吃月饼寄托了家人团聚的愿望。",
    ),
    _f(
        "lichun",
        "festival",
        H,
        "zh",
        t.INFO,
        "二十四节气的第一个",
        ("二十四节气第一个是什么？", "节气是从哪个开始的"),
        "二十四节气通常以{v}为第一个节气。",
        "立春",
        ("春分", "冬至", "雨水"),
        (
            "立春一般在公历2月3日到5日之间。",
            "2016年二十四节气被列入联合国教科文组织人类非物质文化遗产代表作名录。",
        ),
        "立春一般在几号？",
        "立春一般在公历2月3日至5日之间。",
    ),
    # --- zh, held-out: physics & chemistry ---
    _f(
        "boiling",
        "physics",
        H,
        "zh",
        t.LEARNING,
        "水的沸点",
        ("水的沸点是多少度？", "水烧到多少度会开"),
        "在标准大气压下，水的沸点是{v}。",
        "100℃",
        ("90℃", "120℃", "80℃"),
        ("气压越低，沸点越低。", "在海拔较高的高原上，水可能八十多度就沸腾了。"),
        "为什么高原上饭煮不熟？",
        "因为高原气压低，水的沸点降到100℃以下，温度不够，所以饭不容易煮熟，要用高压锅。",
    ),
    _f(
        "sound",
        "physics",
        H,
        "zh",
        t.LEARNING,
        "声音在空气中的速度",
        ("声音在空气中传播多快？", "声速是多少"),
        "在15℃左右的空气中，声音的传播速度约为每秒{v}。",
        "340米",
        ("1500米", "34米", "3400米"),
        ("温度越高，声速越快。", "声音在水中传播得更快，约每秒1500米。"),
        "在水里呢？",
        "声音在水中的传播速度约为每秒1500米，比在空气中快得多。",
    ),
    _f(
        "mendeleev",
        "physics",
        H,
        "zh",
        t.LEARNING,
        "元素周期表的提出者",
        ("元素周期表是谁发明的？", "谁提出了元素周期律"),
        "元素周期表是俄国化学家{v}在1869年提出的。",
        "门捷列夫",
        ("道尔顿", "居里夫人", "拉瓦锡"),
        (
            "他根据元素的原子量和性质排列元素，还预言了当时尚未发现的元素。",
            "现在的周期表是按原子序数排列的。",
        ),
        "他预言对了吗？",
        "他预言的镓、钪、锗等元素后来陆续被发现，性质和他的预测很接近。",
    ),
    _f(
        "blood_ph",
        "physics",
        H,
        "zh",
        t.LEARNING,
        "人体血液的pH值",
        ("人体血液的pH值是多少？", "血液是酸性还是碱性"),
        "正常人体血液的pH值在{v}之间，呈弱碱性。",
        "7.35到7.45",
        ("6.35到6.45", "8.35到8.45", "5.5到6.5"),
        ("身体通过呼吸和肾脏调节来维持这个范围。", "所谓“酸性体质”的说法并没有科学依据。"),
        "吃东西能改变它吗？",
        "一般不能，身体有很强的缓冲调节能力，饮食不会明显改变血液pH。",
    ),
    _f(
        "eniac",
        "physics",
        H,
        "zh",
        t.INFO,
        "第一台通用电子计算机",
        ("世界上第一台通用电子计算机是哪一年诞生的？", "ENIAC是哪年造出来的"),
        "第一台通用电子计算机ENIAC诞生于{v}。",
        "1946年",
        ("1964年", "1936年", "1956年"),
        ("它诞生于美国宾夕法尼亚大学，重约30吨，占地约170平方米。", "它使用了约1.8万个电子管。"),
        "它有多大？",
        "ENIAC重约30吨，占地约170平方米，像一个大房间。",
    ),
    # --- zh, held-out: product & service ---
    _f(
        "express",
        "shopping",
        H,
        "zh",
        t.PRODUCT,
        "快递显示签收但没收到",
        ("快递显示已签收但我没收到怎么办？", "快递被签收了可我没拿到"),
        "遇到快递显示签收但没收到，{v}。",
        "先联系快递员和附近驿站确认，再找卖家，必要时向国家邮政局12305申诉",
        ("只能自认倒霉，平台不会处理", "直接报警就行，不用联系快递", "等一个月快递会自动退回"),
        ("可以先看看物流详情里的签收人和签收地点。", "保留好聊天记录和截图，方便后续申诉。"),
        "申诉电话是多少？",
        "国家邮政局的邮政业用户申诉电话是12305，也可以在官网在线申诉。",
    ),
    _f(
        "autorenew",
        "devices",
        H,
        "zh",
        t.PRODUCT,
        "取消会员自动续费",
        ("会员自动续费怎么取消？", "怎么关掉视频会员的自动扣费"),
        "取消自动续费的方法是：{v}。",
        "在扣款渠道里找到自动扣款或订阅管理，关闭对应服务",
        ("给客服打电话才能取消，自己无法操作", "卸载App就会自动取消", "删除账号后才能停止扣费"),
        (
            "苹果手机在“设置-Apple ID-订阅”里管理。",
            "用支付宝或微信支付的，在各自的“自动扣款/自动续费”设置里关闭。",
            "最好在下次扣款日前一两天操作。",
        ),
        "已经扣了的钱能退吗？",
        "可以联系平台客服说明情况申请退款，但能否退要看平台规则。",
    ),
    # --- en, seed ---
    _f(
        "en_everest",
        "geo",
        S,
        "en",
        t.INFO,
        "Mount Everest's height",
        ("How tall is Mount Everest?", "What's the height of Everest?"),
        "Mount Everest is {v} above sea level.",
        "8,848.86 meters",
        ("8,868.86 meters", "8,488 meters", "9,848 meters"),
        (
            "That figure was announced jointly by China and Nepal in 2020.",
            "It sits on the border between Nepal and China in the Himalayas.",
        ),
        "Where exactly is it?",
        "It lies on the border between Nepal and the Tibet region of China.",
        "According to the 1955 survey, Everest is 8,848 meters tall, which is still the latest "
        "official figure.",
    ),
    _f(
        "en_pacific",
        "geo",
        S,
        "en",
        t.INFO,
        "the largest ocean",
        ("What's the largest ocean on Earth?", "Which ocean is the biggest?"),
        "The largest ocean is the {v}.",
        "Pacific Ocean",
        ("Atlantic Ocean", "Indian Ocean", "Arctic Ocean"),
        (
            "It covers roughly a third of Earth's surface.",
            "It also contains the deepest point on Earth, the Challenger Deep.",
        ),
        "How deep does it get?",
        "Its deepest point, the Challenger Deep in the Mariana Trench, is about 11,000 meters "
        "deep.",
    ),
    _f(
        "en_canberra",
        "geo",
        S,
        "en",
        t.INFO,
        "Australia's capital",
        ("What is the capital of Australia?", "Is Sydney the capital of Australia?"),
        "The capital of Australia is {v}.",
        "Canberra",
        ("Sydney", "Melbourne", "Brisbane"),
        (
            "Sydney is the largest city, which is why people often guess it.",
            "Canberra was purpose-built as a compromise between Sydney and Melbourne.",
        ),
        "What's the biggest city?",
        "The most populous city is Sydney.",
    ),
    _f(
        "en_jupiter",
        "space",
        S,
        "en",
        t.INFO,
        "the largest planet",
        ("Which is the largest planet in the solar system?", "What's the biggest planet?"),
        "The largest planet in our solar system is {v}.",
        "Jupiter",
        ("Saturn", "Neptune", "Uranus"),
        (
            "It is a gas giant with more than twice the mass of all the other planets combined.",
            "Its Great Red Spot is a storm that has lasted for centuries.",
        ),
        "How many moons does it have?",
        "Jupiter has more than ninety confirmed moons; Ganymede is the largest.",
    ),
    _f(
        "en_moon",
        "space",
        S,
        "en",
        t.INFO,
        "the distance to the Moon",
        ("How far is the Moon from Earth?", "What's the distance between Earth and the Moon?"),
        "The average distance from Earth to the Moon is about {v}.",
        "384,400 km",
        ("38,440 km", "3.8 million km", "150 million km"),
        (
            "Because the orbit is elliptical, it ranges from about 363,000 km to 406,000 km.",
            "Light covers that distance in about 1.3 seconds.",
        ),
        "How long does light take?",
        "Light takes about 1.3 seconds to travel from the Moon to Earth.",
    ),
    _f(
        "en_bones",
        "bio",
        S,
        "en",
        t.LEARNING,
        "the number of bones in an adult",
        ("How many bones does an adult human have?", "How many bones are in the human body?"),
        "An adult human typically has {v}.",
        "206 bones",
        ("208 bones", "260 bones", "212 bones"),
        (
            "Babies are born with around 270 to 300, and some fuse as they grow.",
            "The smallest is the stapes in the middle ear.",
        ),
        "Which is the longest?",
        "The longest bone is the femur, in the thigh.",
    ),
    _f(
        "en_cheetah",
        "bio",
        S,
        "en",
        t.INFO,
        "the fastest land animal",
        ("What's the fastest land animal?", "Which animal runs the fastest?"),
        "The fastest land animal is the {v}.",
        "cheetah",
        ("lion", "pronghorn antelope", "greyhound"),
        (
            "It can reach roughly 100 to 120 km/h in short bursts.",
            "It can only keep that speed for a few hundred meters.",
        ),
        "How fast can it go?",
        "It can hit roughly 100 to 120 km/h, but only over short distances.",
    ),
    _f(
        "en_refund",
        "shopping",
        S,
        "en",
        t.PRODUCT,
        "returning an online order",
        (
            "Can I return clothes I bought online if they don't fit?",
            "How do online returns usually work?",
        ),
        "Most online stores accept returns {v}.",
        "within a set window, often 14 to 30 days, if the item is unworn with tags",
        (
            "only if the item is defective",
            "at any time with no conditions",
            "only in the physical store",
        ),
        (
            "Check the store's return policy page for the exact window.",
            "Some stores charge a return shipping fee or deduct it from the refund.",
        ),
        "Who pays for shipping?",
        "It depends on the store; many offer free returns, others deduct a shipping fee from "
        "your refund.",
    ),
    # --- en, held-out ---
    _f(
        "en_boiling",
        "physics",
        H,
        "en",
        t.LEARNING,
        "the boiling point of water",
        ("What temperature does water boil at?", "At what temperature does water boil?"),
        "At sea level, water boils at {v}.",
        "100 °C (212 °F)",
        ("90 °C (194 °F)", "120 °C (248 °F)", "80 °C (176 °F)"),
        (
            "At higher altitudes the air pressure is lower, so water boils at a lower temperature.",
            "Adding salt raises the boiling point only very slightly.",
        ),
        "Why does it change with altitude?",
        "Lower air pressure at altitude means water molecules escape more easily, so it boils "
        "below 100 °C.",
    ),
    _f(
        "en_apollo",
        "history",
        H,
        "en",
        t.INFO,
        "the first Moon landing",
        ("When did humans first land on the Moon?", "What year was the first Moon landing?"),
        "Humans first landed on the Moon in {v}, during the Apollo 11 mission.",
        "July 1969",
        ("July 1971", "June 1965", "July 1959"),
        (
            "Neil Armstrong and Buzz Aldrin walked on the surface while Michael Collins stayed "
            "in orbit.",
            "About 600 million people watched the broadcast.",
        ),
        "Who was first to step out?",
        "Neil Armstrong was the first to step onto the surface.",
    ),
    _f(
        "en_berlin",
        "history",
        H,
        "en",
        t.INFO,
        "the fall of the Berlin Wall",
        ("When did the Berlin Wall fall?", "What year did the Berlin Wall come down?"),
        "The Berlin Wall fell in {v}.",
        "November 1989",
        ("November 1991", "October 1990", "June 1987"),
        (
            "Germany was formally reunified about a year later, in October 1990.",
            "The wall had stood since 1961.",
        ),
        "When was Germany reunified?",
        "Germany was reunified on 3 October 1990.",
    ),
    _f(
        "en_gold",
        "physics",
        H,
        "en",
        t.LEARNING,
        "the chemical symbol for gold",
        ("What's the chemical symbol for gold?", "What is gold's symbol on the periodic table?"),
        "The chemical symbol for gold is {v}.",
        "Au",
        ("Ag", "Go", "Gd"),
        ("It comes from the Latin word aurum.", "Its atomic number is 79."),
        "What's its atomic number?",
        "Gold's atomic number is 79.",
    ),
    _f(
        "en_subscription",
        "devices",
        H,
        "en",
        t.PRODUCT,
        "cancelling an app subscription",
        (
            "How do I cancel an app subscription on my iPhone?",
            "How can I stop a subscription from renewing?",
        ),
        "To cancel, {v}.",
        "open Settings, tap your name, then Subscriptions, pick the app and tap Cancel "
        "Subscription",
        (
            "just delete the app and the subscription stops",
            "call Apple and ask them to close your account",
            "turn off automatic app updates",
        ),
        (
            "You keep access until the end of the current billing period.",
            "Cancel at least a day before the renewal date to avoid another charge.",
        ),
        "Will I lose access right away?",
        "No, you keep access until the end of the period you already paid for.",
    ),
)


def _answer(f: Fact, v: str) -> str:
    return f.a.format(v=v)


def _siblings(f: Fact) -> list[Fact]:
    same = [g for g in BANK if g.lang == f.lang and g.split == f.split and g.key != f.key]
    near = [g for g in same if g.group == f.group]
    return near or same


def _unreliable(f: Fact, rng: Random) -> str:
    lang = f.lang
    right, wrong = _answer(f, f.v), _answer(f, rng.choice(f.wrong))
    details = list(f.details[:1])
    roll = rng.random()
    if f.old and roll < 0.3:
        return style.join(lang, [f.old, *details])
    if roll < 0.65:
        hedge = (
            rng.choice(("不过也有资料说，", "但另一种说法是，", "更正一下，"))
            if lang == "zh"
            else rng.choice(
                ("However, other sources say ", "Actually, correction: ", "Some say instead that ")
            )
        )
        return style.join(lang, [right, *details, hedge + wrong])
    hedge = (
        rng.choice(("我印象中是这样，但不太确定：", "网上的说法不一，我记得是：", "据说"))
        if lang == "zh"
        else rng.choice(
            (
                "I think, though I'm not certain, that ",
                "From what I've heard online, ",
                "Supposedly ",
            )
        )
    )
    doubt = (
        rng.choice(("你最好自己再查证一下。", "也可能记错了。"))
        if lang == "zh"
        else rng.choice(("You may want to double-check that.", "I could be misremembering."))
    )
    return style.join(lang, [hedge + wrong, doubt])


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    pool = [f for f in BANK if f.lang == lang and f.split == split]
    f = rng.choice(pool)
    base = rng.choice(f.q)
    key = _answer(f, f.v)
    # a detail that restates the second-part answer would read as padding in a good reply
    details = [d for d in f.details if SequenceMatcher(None, d, f.a2).ratio() < 0.5]
    rng.shuffle(details)
    titles = ("答案", "补充") if lang == "zh" else ("Answer", "More context")

    if ask.kind == "two_part":
        query = (
            (base.rstrip("？?") + ("？" if lang == "zh" else "? ") + f.q2)
            if lang == "zh"
            else (base + " " + f.q2)
        )
    else:
        query = asks.with_ask(lang, rng, base, ask)

    def aside() -> list[str]:
        # A correct reply that names the common wrong answer keeps wrong values (and
        # "不过/也有人说") from being words that only disliked replies use.
        if rng.random() >= 0.25:
            return []
        wrong = rng.choice(f.wrong)
        return [
            rng.choice(
                (
                    "很多人会以为是{w}，其实不是。",
                    "不过要注意，{w}这个说法是不对的。",
                    "也有人说是{w}，那是误传。",
                )
                if lang == "zh"
                else (
                    "Many people guess {w}, but that's not right.",
                    "Note: {w} is a common mistake.",
                )
            ).format(w=wrong)
        ]

    def good() -> str:
        if ask.kind == "brief":
            return key
        if ask.kind == "no_explain":
            return f.v if rng.random() < 0.5 else key
        if ask.kind == "detail":
            return failures.good_detailed(
                lang, rng, key, [*details, *aside()], titles, f.a2, f.noun
            )
        if ask.kind == "two_part":
            return style.paragraphs(lang, rng, [key, f.a2, *details[: rng.randint(0, 1)], *aside()])
        if ask.kind == "bullets":
            return style.listing(lang, rng, [key, f.a2, *details][: ask.n])
        return style.paragraphs(lang, rng, [key, *details[: rng.randint(0, 2)], *aside()])

    def wrong_value() -> str:
        wrong_key = _answer(f, rng.choice(f.wrong))
        if ask.kind == "no_explain":
            return wrong_key
        if ask.kind == "two_part":
            return style.join(lang, [wrong_key, f.a2])
        extra = details[: rng.randint(0, 2)] if ask.kind != "brief" else []
        return style.paragraphs(lang, rng, [wrong_key, *extra])

    def other_question() -> str:
        g = rng.choice(_siblings(f))
        other = _answer(g, g.v)
        if ask.kind == "brief":
            return other
        return style.paragraphs(lang, rng, [other, *g.details[: rng.randint(1, 2)]])

    def half_answer() -> str:
        if ask.kind == "two_part":
            return style.paragraphs(lang, rng, [key, *details[: rng.randint(1, 2)]])
        return failures.truncate(
            rng, failures.good_detailed(lang, rng, key, details, titles, f.a2, f.noun)
        )

    bad = {
        t.VERBOSITY: lambda: failures.verbose(lang, rng, key, [*details, f.a2], f.noun),
        t.INCOMPLETE: half_answer,
        t.INTENT: other_question,
        t.FACTUAL: wrong_value,
        t.RELIABILITY: lambda: _unreliable(f, rng),
        t.FORMAT: lambda: failures.ignore_ask(lang, rng, key, [*details, f.a2], ask, f.noun),
        t.UNINFORMATIVE: lambda: failures.vague(lang, rng, f.noun),
        t.REFUSAL: lambda: failures.refuse(lang, rng, f.noun),
        t.SYSTEM: lambda: failures.system_error(lang, rng, key),
    }
    if f.scenario == t.PRODUCT:
        success = t.GUIDANCE if ask.kind in ("plain", "detail") else t.ACCURATE
    else:
        success = {"detail": t.DEPTH, "two_part": t.DETAIL, "bullets": t.DETAIL}.get(
            ask.kind, t.ACCURATE
        )
    return Situation(
        kind="facts",
        noun=f.noun,
        topic=f"facts:{f.key}",
        lang=lang,
        scenario=f.scenario,
        success=success,
        query=query,
        good=good,
        bad=bad,
        base_query=base,
        base_reply=lambda: style.paragraphs(lang, rng, [key, *details]),
        followup=asks.followup(lang, rng, ask),
    )


KIND = Kind(
    name="facts",
    failures={
        t.VERBOSITY: {"plain": 3, "brief": 3, "no_explain": 1},
        t.INCOMPLETE: {"two_part": 3, "plain": 1, "detail": 1},
        t.INTENT: {"plain": 2, "brief": 1, "detail": 1},
        t.FACTUAL: {"plain": 3, "brief": 2, "no_explain": 1, "detail": 1, "two_part": 1},
        t.RELIABILITY: {"plain": 3, "detail": 1},
        t.FORMAT: {"brief": 2, "bullets": 1, "no_explain": 1},
        t.UNINFORMATIVE: {"plain": 2, "detail": 1},
        t.REFUSAL: {"plain": 1},
        t.SYSTEM: {"plain": 1, "detail": 1},
    },
    build=build,
    counts={"bullets": (2, 3)},
)
