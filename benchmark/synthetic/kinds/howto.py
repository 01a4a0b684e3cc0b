"""How-to and troubleshooting requests answered with steps.

Bad replies stop after the first steps, swap in a wrong step, answer a neighbouring
task, or wrap the steps in padding; good ones range from a one-line path to a detailed
walkthrough.
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from benchmark import taxonomy as t
from benchmark.synthetic import asks, failures, style
from benchmark.synthetic.situation import Ask, Kind, Lang, Situation, Split


@dataclass(frozen=True, slots=True)
class HowTo:
    key: str
    split: Split
    lang: Lang
    scenario: str
    task: str  # noun phrase naming the task
    q: tuple[str, ...]
    short: str  # the whole answer in one sentence
    steps: tuple[str, ...]
    tips: tuple[str, ...]
    wrong: tuple[int, str]  # a step replaced by a plausible but wrong one
    solving: bool = False  # troubleshooting (Problem Solving) rather than guidance


S: Split = "seed"
H: Split = "heldout"

BANK: tuple[HowTo, ...] = (
    HowTo(
        "excel_dedup",
        S,
        "zh",
        t.OFFICE,
        "Excel删除重复数据",
        ("Excel怎么删除重复项？", "表格里有很多重复的行，怎么快速去掉", "excel去重怎么弄"),
        "选中数据区域，点「数据」选项卡里的「删除重复值」，勾选要比较的列后确定即可。",
        (
            "选中需要去重的数据区域（包括标题行）",
            "点击顶部的「数据」选项卡",
            "点击「删除重复值」按钮",
            "在弹窗里勾选作为判断依据的列，点「确定」",
            "看提示框里删除了多少条、保留了多少条",
        ),
        (
            "操作前最好复制一份原始数据备份。",
            "如果只想标出重复而不删除，可以用「条件格式-突出显示重复值」。",
        ),
        (1, "点击顶部的「页面布局」选项卡"),
    ),
    HowTo(
        "excel_freeze",
        S,
        "zh",
        t.OFFICE,
        "Excel冻结首行",
        ("Excel怎么让第一行一直显示？", "怎么冻结表头", "excel滚动的时候标题行不见了怎么办"),
        "点「视图」选项卡里的「冻结窗格」，选「冻结首行」就行。",
        (
            "打开需要操作的工作表",
            "点击顶部的「视图」选项卡",
            "点击「冻结窗格」下拉按钮",
            "选择「冻结首行」",
            "向下滚动，确认标题行固定不动",
        ),
        (
            "如果要同时冻结前几行和前几列，先选中交叉点右下方的单元格，再选「冻结窗格」。",
            "取消时同样在「冻结窗格」里选「取消冻结窗格」。",
        ),
        (1, "点击顶部的「插入」选项卡"),
    ),
    HowTo(
        "word_toc",
        S,
        "zh",
        t.OFFICE,
        "Word自动生成目录",
        ("Word怎么自动生成目录？", "论文目录怎么自动生成", "word目录怎么做"),
        "先给各级标题套用「标题1/标题2」样式，再在「引用」选项卡里点「目录」插入自动目录。",
        (
            "给一级标题套用「标题1」样式，二级标题套用「标题2」样式",
            "把光标放到要插入目录的位置",
            "点击「引用」选项卡",
            "点击「目录」，选择一种「自动目录」样式",
            "修改正文后，右键目录选择「更新域」刷新页码",
        ),
        ("标题样式可以右键「修改」调整字体和字号。", "目录页通常单独放一页，可以插入分页符。"),
        (2, "点击「插入」选项卡里的「文本框」"),
    ),
    HowTo(
        "ppt_font",
        S,
        "zh",
        t.OFFICE,
        "PPT统一修改字体",
        ("PPT怎么一次性把所有字体都改掉？", "ppt全部字体统一怎么改"),
        "在「开始」选项卡的「替换」下拉里选「替换字体」，把原字体替换成新字体即可。",
        (
            "打开PPT，点击「开始」选项卡",
            "找到右侧的「替换」按钮，点旁边的小箭头",
            "选择「替换字体」",
            "在「替换」里选原来的字体，「替换为」里选新字体",
            "点击「替换」，所有页面的该字体都会被改掉",
        ),
        ("如果以后新建的页也要统一，可以在「视图-幻灯片母版」里设置主题字体。",),
        (3, "在「替换」里随便选一个字体，系统会自动识别"),
    ),
    HowTo(
        "c_drive",
        S,
        "zh",
        t.PRODUCT,
        "C盘空间不足",
        ("电脑C盘满了怎么清理？", "C盘爆红了怎么办", "c盘空间不够了有什么办法"),
        "先用系统自带的存储清理删掉临时文件，再把桌面和下载里的大文件挪到其他盘，卸载不用的软件。",
        (
            "打开「设置-系统-存储」，清理「临时文件」",
            "卸载不常用的软件，尤其是装在C盘的大型软件",
            "把桌面、下载、文档里的大文件移到D盘等其他分区",
            "在C盘上右键「属性-磁盘清理」，勾选「清理系统文件」",
            "如果不用休眠功能，可以用管理员命令 powercfg -h off 关闭休眠释放空间",
        ),
        (
            "千万不要手动删除Windows文件夹里的系统文件。",
            "以后安装软件时，记得把安装路径改到其他盘。",
        ),
        (2, "直接把C:\\Windows文件夹里占空间大的文件删掉"),
        True,
    ),
    HowTo(
        "wifi_no_net",
        S,
        "zh",
        t.PRODUCT,
        "WiFi已连接但上不了网",
        ("手机连上WiFi了但是上不了网怎么办？", "WiFi显示已连接却打不开网页", "家里wifi连上了没网"),
        "先重启路由器和手机，再让手机「忘记网络」后重连；其他设备也上不了的话，检查宽带是否欠费或联系运营商。",
        (
            "先看看其他设备能不能上网，判断是手机还是网络的问题",
            "重启路由器（断电30秒后再接通）和手机",
            "在手机WiFi设置里「忘记此网络」，然后重新输入密码连接",
            "检查宽带是否欠费、光猫指示灯是否正常",
            "还不行就联系宽带运营商报修",
        ),
        ("如果只是某一台设备上不了，也可以试试把DNS改成自动获取。",),
        (1, "把手机恢复出厂设置"),
        True,
    ),
    HowTo(
        "soft_egg",
        S,
        "zh",
        t.PERSONAL,
        "煮溏心蛋",
        ("溏心蛋怎么煮？", "怎么煮出流心的鸡蛋", "溏心蛋要煮几分钟"),
        "水开后放入室温鸡蛋，中火煮6到7分钟，捞出马上泡冰水，蛋黄就是流心的。",
        (
            "鸡蛋提前从冰箱拿出来回到室温",
            "锅里烧开水，用勺子轻轻把鸡蛋放进去",
            "保持微沸，中火煮6到7分钟",
            "捞出后立刻放进冰水里泡5分钟",
            "在桌上轻磕一圈，从大头开始剥壳",
        ),
        ("想要更流心就煮6分钟，更凝固一点就煮7分半。", "泡完冰水再剥，壳更容易剥干净。"),
        (2, "保持大火煮15分钟"),
    ),
    HowTo(
        "oil_stain",
        S,
        "zh",
        t.PERSONAL,
        "去除衣服上的油渍",
        ("衣服上沾了油怎么洗掉？", "油渍怎么去除", "白T恤上有油点怎么办"),
        "趁早在油渍上抹洗洁精或洗衣液，揉搓后静置10分钟，再用温水正常清洗。",
        (
            "尽快处理，先用纸巾吸掉表面的油",
            "在油渍上挤一点洗洁精或洗衣液",
            "用手指轻轻揉搓，静置约10分钟",
            "用温水冲洗后正常机洗或手洗",
            "晾干前检查一下，没洗干净就重复一次",
        ),
        ("不要用很烫的水，容易让油渍更牢固。", "真丝、羊毛等面料最好送去专业干洗。"),
        (3, "直接用开水烫，油会自己化开"),
    ),
    HowTo(
        "sleep",
        S,
        "zh",
        t.PERSONAL,
        "改善睡眠",
        ("晚上总是睡不着怎么办？", "怎么提高睡眠质量", "有什么办法能快点入睡"),
        "固定作息时间，睡前一小时不看手机，下午以后少喝咖啡，睡不着就起来做点安静的事再回床上。",
        (
            "每天固定时间起床和睡觉，周末也尽量不要差太多",
            "睡前一小时放下手机，减少蓝光和信息刺激",
            "卧室保持黑暗、安静、温度偏凉",
            "下午两点后少喝咖啡、浓茶",
            "躺了20分钟还睡不着，就起来做点安静的事，有困意再回床",
        ),
        ("如果长期失眠影响白天状态，建议去医院睡眠科看看。", "白天适量运动也有助于晚上入睡。"),
        (4, "睡不着就在床上刷手机直到困了为止"),
    ),
    HowTo(
        "budget",
        S,
        "zh",
        t.PERSONAL,
        "做个人预算",
        ("怎么做个人月度预算？", "工资总是不够花，怎么做预算", "想开始存钱，预算怎么规划"),
        "先记一个月的账弄清钱花在哪，再按“必要开支、想要的开支、储蓄”分配收入，发工资先存钱。",
        (
            "先完整记一个月的账，弄清楚钱都花在哪里",
            "把支出分成房租水电等必要开支和娱乐购物等可选开支",
            "参考50/30/20法则：50%必要开支、30%可选开支、20%储蓄",
            "发工资当天先把储蓄部分转到单独账户",
            "每月底复盘一次，超支的类别下个月重点控制",
        ),
        ("可以用记账App自动分类，省去手动记录的麻烦。",),
        (2, "参考50/30/20法则：50%储蓄、30%娱乐、20%必要开支"),
    ),
    HowTo(
        "spoken_english",
        S,
        "zh",
        t.LEARNING,
        "练英语口语",
        ("英语口语怎么练？", "想提高英语口语，有什么方法", "一个人怎么练口语"),
        "每天跟读原声材料、把自己的话录下来对比、坚持用英语描述身边的事，有条件就找语伴练对话。",
        (
            "选择语速适中的原声材料，比如慢速播客或美剧片段",
            "每天跟读15到20分钟，模仿语调和连读",
            "用手机录下自己的发音，和原声对比找差距",
            "平时用英语自言自语，描述正在做的事",
            "找语伴或参加英语角，定期实战对话",
        ),
        ("坚持比时长更重要，每天少量练习效果更好。",),
        (1, "每天背200个单词，单词量够了口语自然就好了"),
    ),
    HowTo(
        "self_intro",
        S,
        "zh",
        t.OFFICE,
        "面试自我介绍",
        ("面试的自我介绍怎么准备？", "面试一分钟自我介绍怎么说", "自我介绍要讲哪些内容"),
        "控制在1到2分钟，按“我是谁、做过什么、为什么适合这个岗位”三部分讲，重点突出和岗位相关的经历。",
        (
            "开头简单说姓名、学历或当前职位",
            "挑1到2段和岗位最相关的经历，说清楚做了什么、结果如何",
            "结合岗位要求，说明自己为什么适合",
            "最后一句表达对这个岗位的兴趣",
            "提前练几遍，控制在1到2分钟",
        ),
        ("不要把简历从头念到尾。", "可以准备中英文两个版本。"),
        (0, "开头先详细介绍家庭情况和父母职业"),
    ),
    HowTo(
        "phone_storage",
        S,
        "zh",
        t.PRODUCT,
        "手机存储空间不足",
        ("手机内存满了怎么清理？", "手机提示存储空间不足怎么办"),
        "先清理聊天软件的缓存和大文件，再把照片视频备份到云端或电脑后删除，卸载不用的App。",
        (
            "打开手机「设置-存储」，看看哪些应用占空间最多",
            "在微信等聊天软件里清理缓存和聊天中的大文件",
            "把照片和视频备份到云端或电脑，再从手机删除",
            "卸载长期不用的App",
            "清空相册里的「最近删除」",
        ),
        ("清理聊天记录前先确认重要文件已经保存。",),
        (4, "把系统文件夹删掉可以腾出很多空间"),
        True,
    ),
    HowTo(
        "printer_offline",
        S,
        "zh",
        t.OFFICE,
        "打印机显示脱机",
        ("打印机显示脱机怎么办？", "打印机脱机状态打印不了"),
        "检查打印机电源和连接，在「设备和打印机」里取消勾选「脱机使用打印机」，再清空打印队列重试。",
        (
            "确认打印机已开机，USB线或网络连接正常",
            "打开「控制面板-设备和打印机」，右键打印机查看打印队列",
            "在「打印机」菜单里取消勾选「脱机使用打印机」",
            "清空卡住的打印任务后重新打印",
            "还不行就重启打印机和电脑，或重新安装驱动",
        ),
        ("网络打印机要确认和电脑在同一个网络。",),
        (2, "把打印机设为脱机使用就能恢复"),
        True,
    ),
    # --- zh, held-out ---
    HowTo(
        "wechat_migrate",
        H,
        "zh",
        t.PRODUCT,
        "微信聊天记录迁移到新手机",
        ("换手机了微信聊天记录怎么转过去？", "微信记录怎么迁移到新手机"),
        "在旧手机微信「我-设置-聊天-聊天记录迁移与备份」里选迁移，两台手机连同一WiFi，用新手机扫码即可。",
        (
            "两台手机连接同一个WiFi，并都登录同一个微信账号",
            "在旧手机打开「我-设置-聊天-聊天记录迁移与备份」",
            "选择「迁移到另一台设备」，可以选择全部或部分聊天",
            "用新手机扫描旧手机上出现的二维码",
            "迁移过程中保持两台手机亮屏、不要退出微信",
        ),
        ("记录多的话耗时较长，最好接上电源。",),
        (3, "直接把旧手机的微信App卸载再在新手机安装"),
    ),
    HowTo(
        "green_radish",
        H,
        "zh",
        t.PERSONAL,
        "养绿萝",
        ("绿萝怎么养？", "绿萝叶子发黄怎么办"),
        "放在散射光充足的地方，土干了再浇透，一个月施一次稀释的液肥，黄叶及时剪掉。",
        (
            "放在明亮的散射光处，避免夏天强光直射",
            "见干见湿：表层土干了再浇透",
            "春夏生长期每月施一次稀释的液体肥",
            "发黄的叶子及时剪掉",
            "冬天保持10℃以上，减少浇水",
        ),
        ("叶子大面积发黄通常是浇水太多烂根了。",),
        (1, "每天浇一次水，盆里保持积水"),
    ),
    HowTo(
        "passport",
        H,
        "zh",
        t.PRODUCT,
        "办理护照",
        ("护照怎么办理？", "第一次办护照要准备什么"),
        "带身份证到当地出入境管理窗口，现场拍照采集指纹、填表缴费，一般7个工作日左右可以领取。",
        (
            "准备好有效的居民身份证",
            "可以先在「移民局」App或公众号上预约",
            "到出入境管理窗口现场拍照、采集指纹",
            "填写申请表并缴费",
            "按回执上的时间领取，或选择邮寄",
        ),
        ("具体办理时间以当地出入境管理部门为准。",),
        (0, "必须先去户口所在地派出所开证明"),
    ),
    HowTo(
        "tooth_sensitive",
        H,
        "zh",
        t.PERSONAL,
        "牙齿敏感",
        ("牙齿一喝冷水就酸痛怎么办？", "牙齿敏感怎么缓解"),
        "换用抗敏感牙膏、用软毛牙刷轻刷，少吃过酸过冷的食物，持续不好就去看牙医。",
        (
            "改用含硝酸钾或氟化亚锡的抗敏感牙膏",
            "换软毛牙刷，用巴氏刷牙法轻刷",
            "少吃柠檬、碳酸饮料等酸性食物",
            "刷牙时避免太冷的水",
            "两三周不缓解就去口腔科检查是否有龋齿或牙龈萎缩",
        ),
        ("抗敏感牙膏一般要连续用两周以上才见效。",),
        (1, "用硬毛牙刷用力刷，把牙釉质磨厚一点"),
    ),
    HowTo(
        "excel_pivot",
        H,
        "zh",
        t.OFFICE,
        "Excel数据透视表",
        ("Excel数据透视表怎么做？", "怎么用透视表按部门汇总金额"),
        "选中数据，点「插入-数据透视表」，把部门拖到「行」，金额拖到「值」就能汇总。",
        (
            "确认数据有标题行、没有合并单元格",
            "选中数据区域，点「插入-数据透视表」",
            "选择放在新工作表，点确定",
            "把「部门」字段拖到「行」区域",
            "把「金额」字段拖到「值」区域，默认就是求和",
        ),
        ("源数据更新后，右键透视表选「刷新」。",),
        (3, "把「部门」字段拖到「值」区域"),
    ),
    # --- en, seed ---
    HowTo(
        "en_excel_freeze",
        S,
        "en",
        t.OFFICE,
        "freezing the top row in Excel",
        ("How do I freeze the top row in Excel?", "How can I keep my header row visible in Excel?"),
        "Go to the View tab, click Freeze Panes and choose Freeze Top Row.",
        (
            "Open the worksheet",
            "Click the View tab",
            "Click Freeze Panes",
            "Choose Freeze Top Row",
            "Scroll down to check the header stays put",
        ),
        (
            "To freeze rows and columns at once, select the cell below and to the right of them "
            "first.",
        ),
        (1, "Click the Insert tab"),
    ),
    HowTo(
        "en_soft_egg",
        S,
        "en",
        t.PERSONAL,
        "a soft-boiled egg",
        ("How do I make a soft-boiled egg?", "How long do I boil an egg for a runny yolk?"),
        "Lower room-temperature eggs into boiling water, simmer for 6 to 7 minutes, then move "
        "them straight into ice water.",
        (
            "Let the eggs come to room temperature",
            "Bring a pot of water to a boil",
            "Gently lower the eggs in with a spoon",
            "Simmer for 6 to 7 minutes",
            "Transfer to ice water for 5 minutes, then peel",
        ),
        ("Six minutes gives a runnier yolk; seven and a half is jammy.",),
        (3, "Boil hard for 15 minutes"),
    ),
    HowTo(
        "en_wifi",
        S,
        "en",
        t.PRODUCT,
        "Wi-Fi that's connected but has no internet",
        (
            "My Wi-Fi says connected but there's no internet. What do I do?",
            "Connected to Wi-Fi but pages won't load, help",
        ),
        "Restart the router and your device, forget and rejoin the network, and if nothing works,"
        " check with your internet provider.",
        (
            "Check whether other devices can get online",
            "Restart the router (unplug for 30 seconds) and your device",
            "Forget the network and reconnect with the password",
            "Check your provider's status page or bill",
            "Call the provider if it's still down",
        ),
        ("If only one device has trouble, try setting DNS back to automatic.",),
        (1, "Factory-reset your phone"),
        True,
    ),
    HowTo(
        "en_sleep",
        S,
        "en",
        t.PERSONAL,
        "sleeping better",
        ("How can I fall asleep faster?", "Any tips to improve my sleep?"),
        "Keep a fixed schedule, put screens away an hour before bed, cut caffeine after lunch, "
        "and get up if you can't sleep after 20 minutes.",
        (
            "Go to bed and wake up at the same time every day",
            "Put your phone away an hour before bed",
            "Keep the bedroom dark, quiet and cool",
            "Avoid caffeine after early afternoon",
            "If you're awake after 20 minutes, get up and do something calm",
        ),
        ("If insomnia lasts for weeks, talk to a doctor.",),
        (4, "If you can't sleep, scroll on your phone until you get tired"),
    ),
    HowTo(
        "en_budget",
        S,
        "en",
        t.PERSONAL,
        "making a monthly budget",
        (
            "How do I make a monthly budget?",
            "I never have money left at the end of the month. How do I budget?",
        ),
        "Track a month of spending, split income into needs, wants and savings (for example "
        "50/30/20), and move savings out on payday.",
        (
            "Track every expense for one month",
            "Group spending into needs and wants",
            "Try the 50/30/20 rule: 50% needs, 30% wants, 20% savings",
            "Move the savings to a separate account on payday",
            "Review at month end and adjust",
        ),
        ("A budgeting app can categorize transactions automatically.",),
        (2, "Try the 50/30/20 rule: 50% savings, 30% fun, 20% needs"),
    ),
    HowTo(
        "en_printer",
        S,
        "en",
        t.OFFICE,
        "a printer that shows offline",
        ("My printer says offline. How do I fix it?", "Printer status is offline and won't print"),
        "Check power and the connection, untick Use Printer Offline, clear the print queue and "
        "try again.",
        (
            "Make sure the printer is on and connected",
            "Open the print queue from Printers & scanners",
            "Untick Use Printer Offline",
            "Cancel any stuck jobs and print again",
            "Restart both devices or reinstall the driver if needed",
        ),
        ("A network printer must be on the same network as your computer.",),
        (2, "Tick Use Printer Offline"),
        True,
    ),
    # --- en, held-out ---
    HowTo(
        "en_pothos",
        H,
        "en",
        t.PERSONAL,
        "caring for a pothos",
        ("How do I take care of a pothos?", "Why are my pothos leaves turning yellow?"),
        "Give it bright indirect light, water when the top inch of soil is dry, feed monthly in "
        "summer, and trim yellow leaves.",
        (
            "Place it in bright, indirect light",
            "Water when the top inch of soil is dry",
            "Feed with diluted liquid fertilizer monthly in spring and summer",
            "Trim yellow leaves",
            "Keep it above 10 °C in winter and water less",
        ),
        ("Lots of yellow leaves usually means overwatering.",),
        (1, "Water it every day and keep the pot standing in water"),
    ),
    HowTo(
        "en_pivot",
        H,
        "en",
        t.OFFICE,
        "making a pivot table",
        (
            "How do I make a pivot table in Excel?",
            "How do I total sales by region with a pivot table?",
        ),
        "Select the data, choose Insert > PivotTable, drag Region to Rows and Sales to Values.",
        (
            "Make sure the data has headers and no merged cells",
            "Select the data and click Insert > PivotTable",
            "Put it on a new sheet",
            "Drag Region to Rows",
            "Drag Sales to Values (it sums by default)",
        ),
        ("Right-click and choose Refresh after the source data changes.",),
        (3, "Drag Region to Values"),
    ),
    HowTo(
        "en_stain",
        H,
        "en",
        t.PERSONAL,
        "removing an oil stain",
        (
            "How do I get an oil stain out of a shirt?",
            "Got grease on my T-shirt, how do I clean it?",
        ),
        "Blot the oil, rub in dish soap, let it sit ten minutes, then wash in warm water.",
        (
            "Blot off as much oil as you can",
            "Rub a little dish soap into the stain",
            "Let it sit for about ten minutes",
            "Wash in warm water as usual",
            "Check before drying and repeat if needed",
        ),
        ("Don't put it in the dryer until the stain is gone; heat sets it.",),
        (3, "Pour boiling water on it first"),
    ),
)

_INTRO: dict[Lang, tuple[str, ...]] = {
    "zh": ("可以按下面的步骤来：", "步骤如下：", "具体这样操作：", "", "", "你可以这样做："),
    "en": ("Here are the steps:", "Try this:", "", "", "Follow these steps:"),
}


def _siblings(h: HowTo) -> list[HowTo]:
    same = [g for g in BANK if g.lang == h.lang and g.split == h.split and g.key != h.key]
    return [g for g in same if g.scenario == h.scenario] or same


def _steps(h: HowTo, steps: tuple[str, ...] | list[str], rng: Random, tips: int) -> str:
    lang = h.lang
    intro = rng.choice(_INTRO[lang])
    body = style.listing(
        lang, rng, [style.end(lang, s) for s in steps], rng.choice(("numbered", "numbered", "dash"))
    )
    extra = style.join(lang, list(h.tips[:tips]))
    return "\n".join(x for x in (intro, body) if x) + ("\n\n" + extra if extra else "")


def build(rng: Random, lang: Lang, split: Split, ask: Ask) -> Situation:
    h = rng.choice([x for x in BANK if x.lang == lang and x.split == split])
    base = rng.choice(h.q)
    query = asks.with_ask(lang, rng, base, ask)

    def good() -> str:
        if ask.kind == "brief":
            return h.short
        if ask.kind == "detail":
            text = _steps(h, h.steps, rng, 2)
            return text + "\n\n" + failures.filler(lang, rng) if rng.random() < 0.2 else text
        return _steps(h, h.steps, rng, rng.randint(0, 1))

    def first_steps() -> str:
        if rng.random() < 0.5:
            return _steps(h, h.steps[: rng.randint(1, 2)], rng, 0)
        return failures.truncate(rng, _steps(h, h.steps, rng, 1))

    def wrong_step() -> str:
        idx, text = h.wrong
        steps = list(h.steps)
        steps[idx] = text
        if ask.kind == "brief":
            return style.join(lang, [style.end(lang, s) for s in steps[: idx + 1]])
        return _steps(h, steps, rng, rng.randint(0, 1))

    def other_task() -> str:
        g = rng.choice(_siblings(h))
        return g.short if ask.kind == "brief" else _steps(g, g.steps, rng, rng.randint(0, 1))

    def mixed_advice() -> str:
        text = h.wrong[1]
        turn = (
            rng.choice(("不过也有人说", "另外网上也有说法是：", "当然，也可以"))
            if lang == "zh"
            else rng.choice(
                ("Some people also say you can ", "Alternatively, supposedly you can just: ")
            )
        )
        return _steps(h, h.steps, rng, 0) + "\n\n" + turn + style.end(lang, text)

    bad = {
        t.VERBOSITY: lambda: failures.verbose(
            lang, rng, h.short, [style.end(lang, s) for s in h.steps] + list(h.tips), h.task
        ),
        t.INCOMPLETE: first_steps,
        t.INTENT: other_task,
        t.FACTUAL: wrong_step,
        t.RELIABILITY: mixed_advice,
        t.FORMAT: lambda: failures.ignore_ask(
            lang, rng, h.short, [style.end(lang, s) for s in h.steps], ask, h.task
        ),
        t.UNINFORMATIVE: lambda: failures.vague(lang, rng, h.task),
        t.REFUSAL: lambda: failures.refuse(lang, rng, h.task),
        t.SYSTEM: lambda: failures.system_error(lang, rng, h.short),
    }
    success = t.SOLVING if h.solving else (t.DETAIL if ask.kind == "detail" else t.GUIDANCE)
    return Situation(
        kind="howto",
        noun=h.task,
        topic=f"howto:{h.key}",
        lang=lang,
        scenario=h.scenario,
        success=success,
        query=query,
        good=good,
        bad=bad,
        base_query=base,
        base_reply=lambda: _steps(h, h.steps, rng, 2),
        followup=asks.followup(lang, rng, ask),
    )


KIND = Kind(
    name="howto",
    failures={
        t.VERBOSITY: {"plain": 2, "brief": 2},
        t.INCOMPLETE: {"plain": 3, "detail": 1},
        t.INTENT: {"plain": 2, "brief": 1},
        t.FACTUAL: {"plain": 2, "brief": 1},
        t.RELIABILITY: {"plain": 1},
        t.FORMAT: {"brief": 2},
        t.UNINFORMATIVE: {"plain": 2, "detail": 1},
        t.REFUSAL: {"plain": 1},
        t.SYSTEM: {"plain": 1},
    },
    build=build,
)
