"""Scripted conversations with the reactions and episode outcomes a person would expect.

Three kinds, Chinese and English, all in event schema v1 with realistic gaps:

- the labelled reaction cases of tests/data/reactions/labelled.jsonl, each as a
  three-turn conversation (question, reply, the user's next message);
- replies nobody answers (`no_follow_up`, decided by the worker's timer);
- recovery episodes written turn by turn, with the outcome they should end in.

An attempt the judge rates bad fails its episode whatever the user does next, so outcomes
after an attempt depend on the judge as well as on the script; `evaluate` allows for it.

Used by the integration tests and by bench/reactions_live.py, which reports accuracy.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from stream.local import LocalWorker
from tests.support.traffic import turn_event

LABELLED = Path(__file__).resolve().parents[1] / "data" / "reactions" / "labelled.jsonl"


@dataclass
class Script:
    cid: str
    lang: str
    events: list[dict[str, Any]] = field(default_factory=list)
    reactions: dict[str, str] = field(default_factory=dict)  # assistant turn id -> expected
    outcome: str | None = None  # expected episode outcome, None: no episode expected
    cause: str | None = None  # what should close it
    # The episode follows from the reaction the worker saw (right or wrong), not the label:
    # reaction accuracy is measured on its own.
    episode_follows_reaction: bool = False
    writer: str | None = None  # sessions by the independent writers (benchmark/sessions.py)


# (role or feedback kind, text or the turn it is about, seconds after the previous step)
Step = tuple[str, str, float]

EPISODES: list[tuple[str, str, str, list[Step]]] = [
    # lang, expected outcome, expected cause, steps
    (
        "zh",
        "recovered",
        "satisfied",
        [
            ("user", "明天北京天气怎么样？", 0),
            ("assistant", "上海明天多云，气温12到18度。", 3),
            ("user", "不对，我问的是北京", 25),
            ("assistant", "抱歉！北京明天晴，气温零下2到8度，北风三级。", 4),
            ("user", "好的谢谢，那后天会下雪吗？", 40),
        ],
    ),
    (
        "zh",
        "failed",
        "complaint",
        [
            ("user", "帮我把这段话翻译成英文：我们下周一开会", 0),
            ("assistant", "我们下周一开会。", 3),
            ("user", "你没听懂吗？我要英文", 20),
            ("assistant", "好的：我们将于下周一召开会议。", 3),
            ("user", "还是不对，我要的是英文翻译", 15),
        ],
    ),
    (
        "zh",
        "gave_up",
        "dismiss",
        [
            ("user", "推荐几部适合周末看的科幻电影", 0),
            ("assistant", "推荐《泰坦尼克号》和《罗马假日》，都是经典爱情片。", 3),
            ("user", "我说的是科幻片，不是爱情片", 30),
            ("assistant", "那推荐《乱世佳人》，也很经典。", 3),
            ("user", "算了", 12),
        ],
    ),
    (
        "zh",
        "gave_up",
        "abandon",
        [
            ("user", "怎么给自行车补胎？", 0),
            ("assistant", "建议送到附近的维修店处理。", 3),
            ("user", "这不是我想要的，我想自己补", 30),
            ("assistant", "自己补比较麻烦，还是建议去店里。", 3),
            ("user", "今天股市怎么样", 45),
        ],
    ),
    (
        "zh",
        "gave_up",
        "no_follow_up",
        [
            ("user", "帮我算一下 128 乘以 37", 0),
            ("assistant", "128 乘以 37 等于 4636。", 2),
            ("thumbs_down", "@1", 5),
        ],
    ),
    (
        "zh",
        "recovered",
        "no_follow_up",
        [
            ("user", "用一句话解释什么是通货膨胀", 0),
            (
                "assistant",
                "通货膨胀是一个复杂的经济现象，涉及货币供应、需求拉动、成本推动等多个方面，"
                "历史上有很多著名的例子，比如二十世纪二十年代的德国……",
                4,
            ),
            ("user", "太长了，我只要一句话", 90),
            ("assistant", "通货膨胀就是物价普遍持续上涨、钱变得不值钱。", 3),
        ],
    ),
    (
        "en",
        "recovered",
        "satisfied",
        [
            ("user", "What's the capital of Australia?", 0),
            ("assistant", "The capital of Australia is Sydney.", 2),
            ("user", "That's wrong, it isn't Sydney", 20),
            ("assistant", "You're right, sorry: the capital of Australia is Canberra.", 3),
            ("user", "Thanks! And what's its population?", 30),
        ],
    ),
    (
        "en",
        "failed",
        "complaint",
        [
            ("user", "Convert 5 miles to kilometres", 0),
            ("assistant", "5 miles is about 3.1 kilometres.", 2),
            ("user", "No, that's not right", 20),
            ("assistant", "Apologies: 5 miles is about 3.2 kilometres.", 3),
            ("user", "Still wrong. That's not what I asked", 20),
        ],
    ),
    (
        "en",
        "gave_up",
        "dismiss",
        [
            ("user", "Write a haiku about the sea", 0),
            ("assistant", "The sea is big and blue and it has many fish in it all day.", 3),
            ("user", "That's not what I asked, I wanted a haiku", 25),
            ("assistant", "Sea, waves, water, fish, boats, sand, wind and sun.", 3),
            ("user", "whatever", 10),
        ],
    ),
    (
        "en",
        "failed",
        "feedback",
        [
            ("user", "Summarise the plot of Hamlet in two sentences", 0),
            ("assistant", "Hamlet is a play by Shakespeare.", 3),
            ("thumbs_down", "@1", 4),
            ("assistant", "Hamlet is a tragedy written around 1600.", 3),
            ("regenerate", "@3", 6),
        ],
    ),
    (
        "en",
        "gave_up",
        "no_follow_up",
        [
            ("user", "How many tablespoons are in a cup?", 0),
            ("assistant", "A cup is a unit of volume.", 2),
            ("thumbs_down", "@1", 6),
        ],
    ),
    (
        "en",
        "recovered",
        "no_follow_up",
        [
            ("user", "Give me a one-line definition of entropy", 0),
            ("assistant", "Entropy is a topic with a long history in thermodynamics and ...", 3),
            ("user", "Too long, I just want one line", 60),
            ("assistant", "Entropy measures how spread out, or disordered, energy is.", 3),
        ],
    ),
]

NO_FOLLOW_UP: list[tuple[str, str, str]] = [
    ("zh", "今天是星期几？", "今天是星期三。"),
    ("zh", "给我讲个冷笑话", "为什么企鹅不怕冷？因为它穿着燕尾服。"),
    ("zh", "北京到上海高铁要多久？", "最快大约4个半小时。"),
    ("en", "What is 12 squared?", "144."),
    ("en", "Spell 'necessary' for me", "N-E-C-E-S-S-A-R-Y."),
    ("en", "Who wrote Pride and Prejudice?", "Jane Austen, published in 1813."),
]


def _turn(cid: str, tid: str, role: str, text: str, ts: datetime) -> dict[str, Any]:
    return turn_event(
        cid, tid, role, ts, text, assistant_id="web", scenario="Information & Knowledge Seeking"
    )


def _feedback(cid: str, tid: str, kind: str, ts: datetime) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "type": "feedback",
        "conversation_id": cid,
        "turn_id": tid,
        "kind": kind,
        "ts": ts.isoformat(),
    }


def labelled_scripts(end: datetime, tag: str) -> list[Script]:
    scripts = []
    for line in LABELLED.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        cid = f"{tag}-{row['id']}"
        reply_ts = datetime.fromisoformat(row["reply_ts"])
        shift = end - datetime.fromisoformat(row["next_ts"])
        script = Script(cid, row["lang"])
        asked = row["previous_user"]  # None: the assistant spoke first
        question_ts = reply_ts + shift - timedelta(seconds=8)
        script.events = [
            *([_turn(cid, "u1", "user", asked, question_ts)] if asked is not None else []),
            _turn(cid, "a1", "assistant", row["reply"], reply_ts + shift),
            _turn(cid, "u2", "user", row["next_user"], end),
        ]
        script.reactions = {"a1": row["expected"]}
        # The user reacts and then says nothing more: an episode opened by a dissatisfied
        # reaction gets no attempt and runs into its time limit.
        script.episode_follows_reaction = True
        scripts.append(script)
    return scripts


def episode_scripts(end: datetime, tag: str) -> list[Script]:
    scripts = []
    for n, (lang, outcome, cause, steps) in enumerate(EPISODES):
        cid = f"{tag}-episode-{n:02d}"
        total = sum(gap for _, _, gap in steps)
        ts = end - timedelta(seconds=total)
        script = Script(cid, lang, outcome=outcome, cause=cause)
        for i, (what, text, gap) in enumerate(steps):
            ts += timedelta(seconds=gap)
            if what in ("user", "assistant"):
                script.events.append(_turn(cid, f"{what[0]}{i}", what, text, ts))
            else:  # feedback about the assistant turn at step `@i`
                script.events.append(_feedback(cid, f"a{text.removeprefix('@')}", what, ts))
        scripts.append(script)
    return scripts


def no_follow_up_scripts(end: datetime, tag: str) -> list[Script]:
    scripts = []
    for n, (lang, question, answer) in enumerate(NO_FOLLOW_UP):
        cid = f"{tag}-silent-{n:02d}"
        script = Script(cid, lang, reactions={"a1": "no_follow_up"})
        script.events = [
            _turn(cid, "u0", "user", question, end - timedelta(seconds=5)),
            _turn(cid, "a1", "assistant", answer, end - timedelta(seconds=2)),
        ]
        scripts.append(script)
    return scripts


def all_scripts(end: datetime, tag: str) -> list[Script]:
    return labelled_scripts(end, tag) + no_follow_up_scripts(end, tag) + episode_scripts(end, tag)


def encode(event: dict[str, Any]) -> tuple[bytes, bytes]:
    return event["conversation_id"].encode(), json.dumps(event, ensure_ascii=False).encode()


def reactions_due(scripts: list[Script]) -> int:
    """Replies that get a reaction: all but those followed by another reply (the user's
    next message, or the timer's no_follow_up, decides the others)."""
    due = 0
    for script in scripts:
        turns = [e for e in script.events if e["type"] == "turn"]
        due += sum(
            e["role"] == "assistant" and (i + 1 == len(turns) or turns[i + 1]["role"] == "user")
            for i, e in enumerate(turns)
        )
    return due


def wait_until_settled(worker: LocalWorker, scripts: list[Script], timeout_s: float = 240) -> None:
    """Until every reply due a reaction has it and the timer, which runs after those,
    reports no episode open."""
    worker.wait_for("uxmon_reactions_total", reactions_due(scripts), timeout_s)
    deadline = time.monotonic() + timeout_s
    while worker.total("uxmon_recovery_episodes_open") > 0:
        if time.monotonic() > deadline:
            raise TimeoutError(f"episodes still open after {timeout_s}s:\n{worker.log_tail()}")
        time.sleep(0.5)


def of_type(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r.get("type") == kind]


def evaluate(scripts: list[Script], records: list[dict[str, Any]]) -> dict[str, Any]:
    """Compare what a worker published on the scores topic with the scripts.

    Reactions: accuracy over every labelled (conversation, turn), overall and by language
    and expected kind. Episodes: each scripted one must close as scripted, except where the
    judge rated the recovery attempt bad: then `failed` by `verdict` is right whatever the
    user did next (stream/recovery.py); those are counted apart.
    """
    reactions = {(r["conversation_id"], r["turn_id"]): r for r in of_type(records, "reaction")}
    per_kind: dict[str, list[int]] = {}
    per_lang: dict[str, list[int]] = {}
    reaction_errors = []
    for script in scripts:
        for turn, want in script.reactions.items():
            got = reactions.get((script.cid, turn), {}).get("reaction")
            hit = int(got == want)
            per_kind.setdefault(want, [0, 0])[0] += hit
            per_kind[want][1] += 1
            per_lang.setdefault(script.lang, [0, 0])[0] += hit
            per_lang[script.lang][1] += 1
            if not hit:
                reaction_errors.append({"cid": script.cid, "expected": want, "got": got})
    verdicts = {
        (r["conversation_id"], r["turn_id"]): {s["scorer"]: s["verdict"] for s in r["scores"]}
        for r in of_type(records, "score")
    }
    episodes = {r["conversation_id"]: r for r in of_type(records, "episode")}
    episode_errors, judged_bad = [], 0
    for script in scripts:
        got = episodes.get(script.cid)
        expected = (script.outcome, script.cause) if script.outcome else None
        if script.episode_follows_reaction:
            seen = reactions.get((script.cid, "a1"), {})
            expected = ("gave_up", "timeout") if seen.get("dissatisfied") else None
        actual = (got["outcome"], got["cause"]) if got else None
        if script.outcome and got and got.get("last_attempt"):
            judged = verdicts.get((script.cid, got["last_attempt"]), {})
            if (judged.get("grm") or next(iter(judged.values()), None)) == "bad":
                expected = ("failed", "verdict")
                judged_bad += 1
        if actual != expected:
            episode_errors.append({"cid": script.cid, "expected": expected, "got": actual})
    labelled = sum(n for _, n in per_kind.values())
    hits = sum(h for h, _ in per_kind.values())
    written = sum(s.outcome is not None for s in scripts)
    return {
        "reactions": {
            "n": labelled,
            "accuracy": hits / labelled if labelled else 0.0,
            "by_kind": {k: {"n": n, "accuracy": h / n} for k, (h, n) in sorted(per_kind.items())},
            "by_lang": {k: {"n": n, "accuracy": h / n} for k, (h, n) in sorted(per_lang.items())},
            "errors": reaction_errors,
        },
        "episodes": {
            "scripts": len(scripts),
            "written_episodes": written,
            "closed": len(episodes),
            "outcomes": dict(sorted(Counter(e["outcome"] for e in episodes.values()).items())),
            "attempts_judged_bad": judged_bad,
            "errors": episode_errors,
        },
    }
