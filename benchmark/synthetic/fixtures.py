"""Small UXBench-shaped test fixtures: one directory per hub config, every shape variant.

The variants are the ones the loader must survive on real data: turns keyed `message`
or `content`, `source_query` as an object or a plain string, history as a list or as a
JSON string of a list, replies in the agentic-search JSON format, optional fields
missing. Malformed records live in a separate file so the well-formed fixtures stay
loadable in one go.
"""

from __future__ import annotations

import json
from random import Random
from typing import Any

from benchmark import taxonomy as t
from benchmark.synthetic import kinds, style
from benchmark.synthetic.complaints import complaint
from benchmark.synthetic.situation import Lang
from benchmark.synthetic.task1 import agentic, build_task1

CONFIGS = ("task1_judge_bad", "task1_judge_good", "task2_eval", "task3_recovery")
SIGNALS = ("like", "dislike", "regenerate", "copy", "share")
INTENTS = {
    "facts": "获取信息",
    "concepts": "学习理解",
    "howto": "寻求方法",
    "calc": "计算求解",
    "writing": "内容创作",
    "emotional": "情感倾诉",
    "chat": "闲聊陪伴",
    "books": "推荐",
    "office-notes": "办公任务",
    "office-email": "办公任务",
    "office-formula": "办公任务",
    "office-translate": "翻译",
}


def _turn(rng: Random, role: str, text: str, index: int, key: str) -> dict[str, Any]:
    turn: dict[str, Any] = {"role": role, key: text}
    if rng.random() < 0.7:
        turn["turn_index"] = index
    return turn


def _reshape_task1(rng: Random, i: int, record: dict[str, Any]) -> dict[str, Any]:
    r = dict(record)
    r.pop("synthetic_meta", None)
    if i % 2 == 0 or i % 7 == 3:
        mixed = i % 7 == 3
        r["selected_history"] = [
            {
                **{k: v for k, v in turn.items() if k != "message"},
                ("message" if mixed and j % 2 else "content"): turn["message"],
            }
            for j, turn in enumerate(r["selected_history"])
        ]
    if i % 3 == 0:
        r["source_query"] = r["source_query"]["message"]
    if i % 4 == 1:
        r["selected_history"] = json.dumps(r["selected_history"], ensure_ascii=False)
    if i % 6 == 5 and not str(r["agent_response_full"]).startswith("{"):
        r["agent_response_full"] = agentic(rng, str(r["agent_response_full"]))
    if i % 11 == 4:
        r.pop("difficulty")
    if i % 13 == 6:
        r.pop("selected_history")
    return r


def task1_fixtures(seed: int, per_label: int) -> dict[str, list[dict[str, Any]]]:
    rng = Random(seed)
    records = build_task1("heldout", per_label, seed, min_per_dim=3)
    bad = [
        _reshape_task1(rng, i, r)
        for i, r in enumerate(x for x in records if x["ground_truth"] == -1)
    ]
    good = [
        _reshape_task1(rng, i, r)
        for i, r in enumerate(x for x in records if x["ground_truth"] == 1)
    ]
    for i, r in enumerate(good):
        if i % 17 == 2:
            r.pop("ground_truth")  # the config says it; the real loader defaults it the same way
    return {"task1_judge_bad": bad, "task1_judge_good": good}


def _history(rng: Random, lang: Lang, n: int) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for _ in range(n):
        k = kinds.any_kind(rng, lang)
        s = k.build(rng, lang, "heldout", k.ask(rng, "plain"))
        out += [("user", s.query), ("assistant", style.frame(lang, rng, s.good(), s.register))]
    return out


def task2_fixtures(seed: int, n: int) -> list[dict[str, Any]]:
    rng = Random(seed)
    out = []
    for i in range(n):
        lang: Lang = "zh" if rng.random() < 0.8 else "en"
        kind = kinds.any_kind(rng, lang)
        sit = kind.build(rng, lang, "heldout", kind.ask(rng, "plain"))
        history = _history(rng, lang, rng.choice((0, 1, 1, 2)))
        record: dict[str, Any] = {"cid": f"syn-t2-{i:04d}", "query": sit.query}
        if i % 2 == 0:
            messages = [{"role": r, "content": x} for r, x in history] + [
                {"role": "user", "content": sit.query}
            ]
            if i % 4 == 0:
                messages.insert(0, {"role": "system", "content": "You are a helpful assistant."})
            record["messages"] = messages
        else:
            turns = [_turn(rng, r, x, j, "message") for j, (r, x) in enumerate(history)]
            record["history"] = json.dumps(turns, ensure_ascii=False) if i % 5 == 3 else turns
        record.update(
            {
                "scenario": sit.scenario,
                "dimension": sit.success,
                "difficulty": rng.choice(t.DIFFICULTIES),
                "signal_type": rng.choice(SIGNALS),
                "scene_l1": sit.scenario,
                "scene_l2": sit.kind,
                "intent_l1": INTENTS[kind.name],
                "intent_l2": sit.topic.split(":", 1)[1],
                "sector_l1": "通用" if lang == "zh" else "general",
                "sector_l2": sit.kind,
            }
        )
        if i % 9 == 7:
            record.pop("difficulty")
        out.append(record)
    return out


def task3_fixtures(seed: int, n: int) -> list[dict[str, Any]]:
    rng = Random(seed)
    dims = [d for d in t.FAILURE_DIMENSIONS if d != t.SYSTEM]
    weights = [t.FAILURE_SHARES[d] + 0.02 for d in dims]
    out = []
    for i in range(n):
        lang: Lang = "zh" if rng.random() < 0.8 else "en"
        dim = rng.choices(dims, weights=weights, k=1)[0]
        kind = kinds.for_failure(rng, dim, lang)
        asks = kind.failures[dim]
        sit = kind.build(
            rng, lang, "heldout", kind.ask(rng, rng.choices(list(asks), list(asks.values()))[0])
        )
        history = [*_history(rng, lang, rng.choice((0, 0, 1))), ("user", sit.query)]
        key = "message" if i % 2 else "content"
        turns = [_turn(rng, r, x, j, key) for j, (r, x) in enumerate(history)]
        failed = sit.bad[dim]()
        out.append(
            {
                "cid": f"syn-t3-{i:04d}",
                "history": json.dumps(turns, ensure_ascii=False) if i % 5 == 2 else turns,
                "failed_response": agentic(rng, failed) if i % 8 == 5 else failed,
                "user_complaint": complaint(rng, lang, dim),
                "failure_dimension": dim,
                "scenario": sit.scenario,
            }
        )
    return out


def malformed() -> list[dict[str, Any]]:
    """Task-1 records each broken in one field (cid says which), plus three valid ones."""
    ok = {
        "ground_truth": -1,
        "source_query": {"turn_index": 0, "message": "珠峰有多高？"},
        "selected_history": [],
        "agent_response_full": "珠峰的海拔是8848.86米。",
        "scenario": t.INFO,
        "failure_dimension": t.FACTUAL,
        "difficulty": "easy",
    }
    broken: list[dict[str, Any]] = [
        {k: v for k, v in ok.items() if k != "agent_response_full"} | {"cid": "bad-missing-reply"},
        ok | {"cid": "bad-query-type", "source_query": ["not", "a", "query"]},
        ok | {"cid": "bad-role", "selected_history": [{"role": "robot", "message": "hello"}]},
        ok | {"cid": "bad-label", "ground_truth": "yes"},
        ok | {"cid": "bad-history-json", "selected_history": "[{not json"},
        ok | {"cid": "bad-turn-text", "selected_history": [{"role": "user", "message": 123}]},
        ok | {"cid": "bad-query-missing-message", "source_query": {"turn_index": 0}},
        {k: v for k, v in ok.items()},  # no cid at all
    ]
    valid = [ok | {"cid": f"ok-{i}"} for i in range(3)]
    return broken + valid
