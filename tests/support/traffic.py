"""Small synthetic conversations in event schema v1, for tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

_ZH = [
    ("帮我写一句生日祝福", "祝你生日快乐，万事顺意！"),
    ("Python 怎么读取 JSON 文件？", "用 json.load 配合 open 即可。"),
    ("推荐一本入门经济学的书", "可以看曼昆的《经济学原理》。"),
    ("太长了，说重点", "重点：早睡早起，少熬夜。"),
]
_EN = [
    ("How do I boil an egg?", "Simmer it for 9 minutes, then cool it in cold water."),
    ("Give me a synonym for quick", "Rapid."),
]


def conversation(
    index: int, exchanges: int = 2, start: datetime | None = None, prefix: str = "conv"
) -> list[dict[str, Any]]:
    """One conversation: `exchanges` user/assistant pairs, a few seconds apart."""
    start = start or datetime.now(UTC) - timedelta(minutes=5)
    bank = _EN if index % 5 == 0 else _ZH
    cid = f"{prefix}-{index:05d}"
    events = []
    for k in range(exchanges):
        question, answer = bank[(index + k) % len(bank)]
        for role, text, offset in (("user", question, 0), ("assistant", answer, 2)):
            events.append(
                {
                    "schema_version": 1,
                    "type": "turn",
                    "conversation_id": cid,
                    "turn_id": f"{cid}-{role[0]}{k}",
                    "role": role,
                    "text": text,
                    "ts": (start + timedelta(seconds=10 * k + offset)).isoformat(),
                    "assistant_id": "web",
                    "scenario": "Information & Knowledge Seeking",
                    "locale": "en-US" if bank is _EN else "zh-CN",
                }
            )
    return events


def turn_event(
    cid: str, tid: str, role: str, ts: datetime, text: str = "你好", **extra: object
) -> dict[str, Any]:
    """One turn event, with any extra (or unknown) fields."""
    return {
        "schema_version": 1,
        "type": "turn",
        "conversation_id": cid,
        "turn_id": tid,
        "role": role,
        "text": text,
        "ts": ts.isoformat(),
        **extra,
    }


def conversations(n: int, exchanges: int = 2, prefix: str = "conv") -> list[dict[str, Any]]:
    """`n` conversations; a new `prefix` gives new conversation and turn ids."""
    return [e for i in range(n) for e in conversation(i, exchanges, prefix=prefix)]


def encode(event: dict[str, Any]) -> tuple[bytes, bytes]:
    return event["conversation_id"].encode(), json.dumps(event, ensure_ascii=False).encode()


def assistant_turns(events: list[dict[str, Any]]) -> set[str]:
    return {e["turn_id"] for e in events if e.get("role") == "assistant"}
