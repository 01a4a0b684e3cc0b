"""Live chat sessions written by independent writers, each assistant reply labelled with the
user's reaction to it: the data that trains and validates the reaction detector.

A session file (`benchmark/data/sessions/<writer>.jsonl`, one session per line) holds
steps with `after_s` gaps; `events` turns them into turn and feedback events of schema v1
(docs/events.md) on a chosen clock, so a replay can put them anywhere in time. Briefs and
provenance: benchmark/data/sessions/README.md.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

from benchmark.errors import BenchmarkError

REACTIONS = (
    "satisfied",
    "complaint",
    "rephrase",
    "repeat",
    "dismiss",
    "skip_read",
    "abandon",
    "no_follow_up",
)
FEEDBACK = ("thumbs_up", "thumbs_down", "regenerate", "copy")
LANGS = ("zh", "en")
LOCALE = {"zh": "zh-CN", "en": "en-US"}


@dataclass(frozen=True, slots=True)
class Step:
    role: str  # "user", "assistant", or "feedback"
    text: str  # the message, or the feedback kind
    after_s: float
    reaction: str | None = None  # assistant steps: the user's reaction to this reply
    hard: bool = False


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    writer: str
    lang: str
    scenario: str
    steps: tuple[Step, ...]

    def turn_ids(self) -> list[str | None]:
        """Each step's turn id (feedback steps: None): u1, a1, u2, ... per session."""
        ids: list[str | None] = []
        seen: Counter[str] = Counter()
        for step in self.steps:
            if step.role == "feedback":
                ids.append(None)
                continue
            seen[step.role] += 1
            ids.append(f"{self.id}-{step.role[0]}{seen[step.role]}")
        return ids

    def expected(self) -> dict[str, str]:
        """Assistant turn id -> the reaction its writer labelled."""
        return {
            turn: step.reaction
            for turn, step in zip(self.turn_ids(), self.steps, strict=True)
            if turn is not None and step.reaction is not None
        }

    def hard_turns(self) -> set[str]:
        return {
            turn
            for turn, step in zip(self.turn_ids(), self.steps, strict=True)
            if turn is not None and step.hard
        }

    def events(self, start: datetime, assistant_id: str = "sessions") -> list[dict[str, Any]]:
        """The session as schema-v1 events, its first step at `start`."""
        out: list[dict[str, Any]] = []
        ts, last_reply = start, None
        for turn, step in zip(self.turn_ids(), self.steps, strict=True):
            ts += timedelta(seconds=step.after_s)
            common = {
                "schema_version": 1,
                "conversation_id": self.id,
                "ts": ts.isoformat(),
            }
            if turn is None:
                if last_reply is not None:
                    out.append(
                        {**common, "type": "feedback", "turn_id": last_reply, "kind": step.text}
                    )
                continue
            out.append(
                {
                    **common,
                    "type": "turn",
                    "turn_id": turn,
                    "role": step.role,
                    "text": step.text,
                    "assistant_id": assistant_id,
                    "scenario": self.scenario,
                    "locale": LOCALE.get(self.lang, self.lang),
                }
            )
            if step.role == "assistant":
                last_reply = turn
        return out

    def duration_s(self) -> float:
        return sum(step.after_s for step in self.steps)


#: Every writer set under benchmark/data, in the order they were written (each folder's
#: README): r01-r07, r08-r09, r10-r13, r14-r19. The reaction model is trained on all.
WRITER_SETS = ("sessions", "sessions_heldout", "sessions_fresh", "sessions_set4")


def default_root() -> Path:
    return Path(str(resources.files("benchmark") / "data" / "sessions"))


def writer_folders() -> list[Path]:
    """The folders of WRITER_SETS."""
    return [default_root().parent / name for name in WRITER_SETS]


def load_sessions(root: Path | None = None) -> list[Session]:
    """Every session of every writer's file under `root` (default: the bundled ones)."""
    folder = root or default_root()
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise BenchmarkError(f"no session files (<writer>.jsonl) in {folder}")
    sessions = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                sessions.append(_session(json.loads(line), f"{path.name}:{number}"))
    return sessions


def _session(data: dict[str, Any], where: str) -> Session:
    try:
        steps = tuple(
            Step("feedback", s["feedback"], float(s["after_s"]))
            if "feedback" in s
            else Step(
                s["role"], s["text"], float(s["after_s"]), s.get("reaction"), bool(s.get("hard"))
            )
            for s in data["steps"]
        )
        return Session(data["session"], data["writer"], data["lang"], data["scenario"], steps)
    except (KeyError, TypeError, ValueError) as exc:
        raise BenchmarkError(f"{where}: not a session ({type(exc).__name__}: {exc})") from None


def problems(sessions: Sequence[Session]) -> list[str]:
    """What makes a session unusable: an unknown label, role or feedback kind, an
    assistant step without its reaction, a negative gap, a duplicate id."""
    found = []
    ids = Counter(s.id for s in sessions)
    found += [f"{sid}: id used {n} times" for sid, n in ids.items() if n > 1]
    for s in sessions:
        if s.lang not in LANGS:
            found.append(f"{s.id}: lang {s.lang!r}")
        if not s.steps or s.steps[0].role != "user":
            found.append(f"{s.id}: does not start with a user message")
        for i, step in enumerate(s.steps):
            where = f"{s.id} step {i}"
            if step.after_s < 0:
                found.append(f"{where}: negative after_s")
            if step.role == "assistant":
                if step.reaction not in REACTIONS:
                    found.append(f"{where}: reaction {step.reaction!r}")
                follows = [t for t in s.steps[i + 1 :] if t.role != "feedback"]
                ends = not follows
                if ends != (step.reaction == "no_follow_up"):
                    found.append(f"{where}: no_follow_up iff nothing follows")
                elif follows and follows[0].role != "user":
                    found.append(f"{where}: two assistant steps in a row")
            elif step.role == "feedback":
                if step.text not in FEEDBACK:
                    found.append(f"{where}: feedback {step.text!r}")
            elif step.role != "user":
                found.append(f"{where}: role {step.role!r}")
    return found


def label_counts(sessions: Iterable[Session]) -> dict[str, dict[str, int]]:
    """Reaction counts per language."""
    counts: dict[str, Counter[str]] = {}
    for s in sessions:
        for reaction in s.expected().values():
            counts.setdefault(s.lang, Counter())[reaction] += 1
    return {lang: dict(sorted(c.items())) for lang, c in sorted(counts.items())}
