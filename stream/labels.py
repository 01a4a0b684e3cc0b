"""Labelled turns: an assistant turn joined with what its user said of it, for the opt-in
labels topic (`UXMON_LABELS_TOPIC`, docs/labels.md).

A label is one (turn, signal). The signals are explicit feedback on the turn (thumbs up
or down, regenerate, copy, share) and the two implicit reactions strong enough to stand
for a thumb: a complaint and a satisfied follow-up (stream/reactions.py). Its record is
in UXBench Task-1 shape (DESIGN.md), so `uxmon bench`, `uxmon judge train` and the gate
read an export of it as they read UXBench; beside those fields it says where the label
came from, its weight and the turn's ids.

The record carries the turn's text (its history, the user's message, the reply) from the
conversation's bounded state: the labels topic needs the turns topic's access control.
`label_id` is the same for every delivery of one (turn, signal), so a replayed batch
(at-least-once) repeats a key, which compaction and `uxmon labels export` fold into one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from benchmark.adapters import DISLIKED, LIKED
from scorer.types import Dialogue
from stream.reactions import Reaction

_TRUTH = {LIKED: 1, DISLIKED: -1}  # UXBench's ground_truth values


class Source(StrEnum):
    EXPLICIT = "explicit"  # the user clicked
    IMPLICIT = "implicit"  # the user's next message said it


# The label each signal gives; a kind or reaction absent here (stop, abandon...) gives none.
EXPLICIT: dict[str, int] = {
    "thumbs_up": LIKED,
    "copy": LIKED,
    "share": LIKED,
    "thumbs_down": DISLIKED,
    "regenerate": DISLIKED,
}
IMPLICIT: dict[Reaction, int] = {Reaction.SATISFIED: LIKED, Reaction.COMPLAINT: DISLIKED}


@dataclass(frozen=True, slots=True)
class Labelled:
    """A signal about one assistant turn, with the turn as its scorers saw it."""

    turn_id: str
    source: Source
    kind: str  # the feedback kind or the reaction
    label: int  # LIKED or DISLIKED
    ts: datetime  # when the signal came
    dialogue: Dialogue  # the turn's history, the user's message and the reply
    scenario: str | None = None
    assistant_id: str | None = None
    model_version: str | None = None
    # (scorer, verdict) on the turn, when known: the live validation counts them against
    # the label (empty for a turn whose verdicts the state no longer holds)
    verdicts: tuple[tuple[str, str], ...] = ()


def label_id(conversation_id: str, turn_id: str, source: Source, kind: str) -> str:
    """The same for every delivery of one (turn, signal): the record's key."""
    whole = "\x1f".join((conversation_id, turn_id, str(source), kind))
    return hashlib.sha256(whole.encode("utf-8")).hexdigest()[:32]


def label_record(
    conversation_id: str, labelled: Labelled, *, weight: float, at: datetime
) -> dict[str, Any]:
    """The labels-topic record of one (turn, signal): UXBench Task-1 fields first."""
    dialogue = labelled.dialogue
    history = [
        {"turn_index": i, "role": turn.role, "message": turn.text, "length": len(turn.text)}
        for i, turn in enumerate(dialogue.history)
    ]
    record: dict[str, Any] = {
        "cid": f"{conversation_id}/{labelled.turn_id}",
        "ground_truth": _TRUTH[labelled.label],
        "selected_history": history,
        "source_query": {"turn_index": len(history), "message": dialogue.user_message},
        "agent_response_full": dialogue.reply,
        "scenario": labelled.scenario,
        "schema_version": 1,
        "type": "label",
        "label_id": label_id(conversation_id, labelled.turn_id, labelled.source, labelled.kind),
        "label_source": str(labelled.source),
        "label_kind": labelled.kind,
        "weight": weight,
        "conversation_id": conversation_id,
        "turn_id": labelled.turn_id,
        "assistant_id": labelled.assistant_id,
        "model_version": labelled.model_version,
        # what the live validation counted for this label (uxmon_label_verdicts_total)
        "verdicts": dict(labelled.verdicts) or None,
        "labelled_ts": labelled.ts.isoformat(),
        "published_at": at.isoformat(),
    }
    return {k: v for k, v in record.items() if v is not None}


@dataclass(frozen=True, slots=True)
class Export:
    """What `select` kept of a labels topic: records for training and for evaluation."""

    train: list[dict[str, Any]]
    holdout: list[dict[str, Any]]
    read: int  # records read
    not_labels: int  # not a label record (another type, or not JSON)
    repeats: int  # a label_id seen before: a replayed delivery
    outside: int  # outside the window or of another source
    overruled: int  # another signal on the same turn decided its label
    dropped_to_balance: int


def select(
    records: Iterable[Any],
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    source: Source | None = None,
    holdout_from: datetime | None = None,
    balance: bool = False,
    seed: int = 0,
) -> Export:
    """Label records as UXBench Task-1 data: one per label_id (replays fold), within the
    window [since, until) on the signal's time and of `source` (None: both), then one
    per turn (an explicit signal overrules an implicit one; the newer overrules the older
    of a kind: a user who changes a thumb meant the second). Turns labelled at or after
    `holdout_from` are held out for evaluation. `balance` drops random records of the
    larger class from the training part until both classes are even; the held-out part
    keeps the traffic's own balance."""
    read = not_labels = repeats = outside = 0
    seen: set[str] = set()
    best: dict[str, tuple[bool, datetime, dict[str, Any]]] = {}  # cid -> (explicit, when, record)
    for record in records:
        read += 1
        when = labelled_ts(record)
        if when is None:
            not_labels += 1
            continue
        if record["label_id"] in seen:
            repeats += 1
            continue
        seen.add(record["label_id"])
        wrong_source = source is not None and record.get("label_source") != str(source)
        if (since and when < since) or (until and when >= until) or wrong_source:
            outside += 1
            continue
        clicked = record.get("label_source") == Source.EXPLICIT
        cid = str(record["cid"])
        if cid not in best or (clicked, when) > best[cid][:2]:
            best[cid] = (clicked, when, record)
    kept = sorted(best.values(), key=lambda x: (x[1], x[2]["cid"]))
    overruled = len(seen) - outside - len(kept)
    held = [r for _, when, r in kept if holdout_from is not None and when >= holdout_from]
    train = [r for _, when, r in kept if holdout_from is None or when < holdout_from]
    dropped = 0
    if balance:
        train, dropped = _balanced(train, seed)
    return Export(train, held, read, not_labels, repeats, outside, overruled, dropped)


def labelled_ts(record: Any) -> datetime | None:
    """The signal time of a label record, or None for anything else."""
    if not isinstance(record, dict) or record.get("type") != "label":
        return None
    if not isinstance(record.get("label_id"), str) or "cid" not in record:
        return None
    try:
        when = datetime.fromisoformat(record["labelled_ts"])
    except (KeyError, TypeError, ValueError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _balanced(records: list[dict[str, Any]], seed: int) -> tuple[list[dict[str, Any]], int]:
    by_truth: dict[Any, list[dict[str, Any]]] = {}
    for record in records:
        by_truth.setdefault(record.get("ground_truth"), []).append(record)
    if len(by_truth) < 2:
        return records, 0
    smallest = min(len(group) for group in by_truth.values())
    rng = random.Random(seed)
    keep: set[int] = set()
    for group in by_truth.values():
        keep.update(id(r) for r in rng.sample(group, smallest))
    kept = [r for r in records if id(r) in keep]
    return kept, len(records) - len(kept)
