"""What `uxmon inspect` finds in the scores topic: the way from an alert to its conversations.

An alert says a rate is off ("recovery rate below target"); the on-call person needs the
conversations behind it. This module reads the scores topic's records (already decoded,
in topic order) and reports, within a time window and for a scenario, assistant or model
version:

- the worst-scored turns: score records by one scorer's P(satisfied), lowest first;
- the recovery episodes that ended failed or gave_up (stream/recovery.py's outcomes);
- complaint streaks: conversations where the user complained at least `streak` times in
  a row (consecutive reactions of kind complaint; any other reaction ends a streak).

Only ids, times, scores and outcomes come out, never text (the topic carries none unless
UXMON_INCLUDE_TEXT is on, and this module never copies it).

Event times decide the window: a score record's `event_ts`, an episode's `closed_ts` (the
recovery metrics count closes, so the window matches the alert's), a streak's span from
its first to its last complaint (listed when the span overlaps the window).

Reaction and episode records lack some fields (a reaction has no scenario, assistant or
model version; an episode has no model version). They are joined to the score record of
their turn by (conversation_id, turn_id): an episode to its opening turn (`episode_id`,
falling back to its last attempt), a streak to the turns complained about (the latest
known value of each field). An episode's own scenario and assistant come first. A filter on a
field whose value is unknown after the join (no score record read, or the field null)
excludes the record: a filtered report lists only what is known to match.

Everything here is pure: records in, a typed report out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, TypeVar

from stream.recovery import Outcome

DEFAULT_SCORER = "ux_judge"
DEFAULT_STREAK = 2  # two complaints in a row: the first reply and its retry both missed
DEFAULT_LIMIT = 20
UNRECOVERED = (str(Outcome.FAILED), str(Outcome.GAVE_UP))
COMPLAINT = "complaint"

T = TypeVar("T")

_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class InspectionError(ValueError):
    """A window bound or option that cannot be understood."""


def parse_when(text: str, now: datetime) -> datetime:
    """A window bound: a duration back from `now` (`30m`, `1h`, `2d`, `1h30m`) or an ISO
    8601 timestamp (one without an offset is taken as UTC)."""
    value = text.strip()
    if re.fullmatch(r"(?:\d+(?:\.\d+)?[smhdw])+", value):
        seconds = sum(float(n) * _UNIT_S[unit] for n, unit in _DURATION.findall(value))
        return now - timedelta(seconds=seconds)
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise InspectionError(
            f"expected a duration like 30m, 1h, 2d or an ISO timestamp, got {value!r}"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Query:
    since: datetime | None = None
    until: datetime | None = None
    scenario: str | None = None
    assistant: str | None = None
    model_version: str | None = None
    scorer: str = DEFAULT_SCORER
    limit: int = DEFAULT_LIMIT  # per section
    streak: int = DEFAULT_STREAK

    def __post_init__(self) -> None:
        if self.since and self.until and self.since > self.until:
            raise InspectionError(
                f"the window is empty: since {self.since.isoformat()} is after until "
                f"{self.until.isoformat()}"
            )
        if self.limit < 1:
            raise InspectionError(f"expected a limit of at least 1, got {self.limit}")
        if self.streak < 1:
            raise InspectionError(f"expected a streak of at least 1, got {self.streak}")

    def in_window(self, when: datetime) -> bool:
        return (self.since is None or when >= self.since) and (
            self.until is None or when <= self.until
        )

    def overlaps(self, first: datetime, last: datetime) -> bool:
        return (self.since is None or last >= self.since) and (
            self.until is None or first <= self.until
        )


@dataclass(frozen=True, slots=True)
class Labels:
    """What filters look at; None where unknown."""

    scenario: str | None = None
    assistant_id: str | None = None
    model_version: str | None = None

    def matches(self, query: Query) -> bool:
        wanted = (
            (query.scenario, self.scenario),
            (query.assistant, self.assistant_id),
            (query.model_version, self.model_version),
        )
        return all(want is None or want == have for want, have in wanted)

    def or_else(self, other: Labels) -> Labels:
        return Labels(
            self.scenario if self.scenario is not None else other.scenario,
            self.assistant_id if self.assistant_id is not None else other.assistant_id,
            self.model_version if self.model_version is not None else other.model_version,
        )


@dataclass(frozen=True, slots=True)
class WorstTurn:
    conversation_id: str
    turn_id: str
    event_ts: str
    p_satisfied: float
    verdict: str | None
    scorer_version: str | None
    recovery: bool
    scenario: str | None
    assistant_id: str | None
    model_version: str | None


@dataclass(frozen=True, slots=True)
class UnrecoveredEpisode:
    conversation_id: str
    episode_id: str  # the assistant turn that opened it
    outcome: str  # failed | gave_up
    cause: str | None
    trigger: str | None
    attempts: int | None
    last_attempt: str | None
    opened_ts: str | None
    closed_ts: str
    seconds: float | None
    scenario: str | None
    assistant_id: str | None
    model_version: str | None


@dataclass(frozen=True, slots=True)
class ComplaintStreak:
    conversation_id: str
    complaints: int
    turn_ids: tuple[str, ...]  # the assistant turns complained about, in order
    first_ts: str
    last_ts: str
    scenario: str | None
    assistant_id: str | None
    model_version: str | None


@dataclass(frozen=True, slots=True)
class Section(Generic[T]):
    total: int  # how many matched before the limit
    items: tuple[T, ...]


@dataclass(frozen=True, slots=True)
class Report:
    query: Query
    records: int  # records read
    skipped: int  # not a score, reaction or episode record uxmon can read
    scorers_seen: tuple[str, ...]
    worst_turns: Section[WorstTurn]
    episodes: Section[UnrecoveredEpisode]
    streaks: Section[ComplaintStreak]

    def to_json(self) -> dict[str, Any]:
        """Stable keys; times as ISO strings; lists in the report's order."""
        q = self.query
        return {
            "query": {
                "since": q.since.isoformat() if q.since else None,
                "until": q.until.isoformat() if q.until else None,
                "scenario": q.scenario,
                "assistant": q.assistant,
                "model_version": q.model_version,
                "scorer": q.scorer,
                "limit": q.limit,
                "streak": q.streak,
            },
            "records": self.records,
            "skipped": self.skipped,
            "scorers_seen": list(self.scorers_seen),
            "worst_turns": _section_json(self.worst_turns),
            "episodes": _section_json(self.episodes),
            "complaint_streaks": _section_json(self.streaks),
        }


def _section_json(section: Section[Any]) -> dict[str, Any]:
    items = []
    for item in section.items:
        data = asdict(item)
        if "turn_ids" in data:
            data["turn_ids"] = list(data["turn_ids"])
        items.append(data)
    return {"total": section.total, "items": items}


@dataclass(frozen=True, slots=True)
class _Timed:
    when: datetime  # the record's event time
    index: int  # its place in topic order (ties in event time keep it)
    record: dict[str, Any]


@dataclass(slots=True)
class _Read:
    """The records sorted by type, each once (a redelivered record is read twice)."""

    scores: dict[tuple[str, str], _Timed] = field(default_factory=dict)
    episodes: dict[tuple[str, str], _Timed] = field(default_factory=dict)
    reactions: dict[str, dict[str, _Timed]] = field(default_factory=lambda: defaultdict(dict))
    records: int = 0
    skipped: int = 0


def build_report(records: Iterable[Any], query: Query) -> Report:
    """The report over `records` (decoded scores-topic values, in topic order; anything
    that is not a readable uxmon record, None included, is counted as skipped)."""
    read = _read(records)
    labels = {key: _labels(timed.record) for key, timed in read.scores.items()}
    scorers = {
        s["scorer"]
        for timed in read.scores.values()
        for s in timed.record["scores"]
        if isinstance(s, dict) and isinstance(s.get("scorer"), str)
    }
    return Report(
        query=query,
        records=read.records,
        skipped=read.skipped,
        scorers_seen=tuple(sorted(scorers)),
        worst_turns=_section(_worst_turns(read, labels, query), query.limit),
        episodes=_section(_episodes(read, labels, query), query.limit),
        streaks=_section(_streaks(read, labels, query), query.limit),
    )


def _section(items: Sequence[T], limit: int) -> Section[T]:
    return Section(len(items), tuple(items[:limit]))


def _read(records: Iterable[Any]) -> _Read:
    read = _Read()
    for index, record in enumerate(records):
        read.records += 1
        if not isinstance(record, dict) or not _ids(record):
            read.skipped += 1
            continue
        kind = record.get("type")
        cid = record["conversation_id"]
        if kind == "score":
            when = _time(record.get("event_ts"))
            if when is None or not isinstance(record.get("scores"), list):
                read.skipped += 1
                continue
            read.scores[(cid, record["turn_id"])] = _Timed(when, index, record)
        elif kind == "episode":
            when = _time(record.get("closed_ts"))
            episode_id = record.get("episode_id")
            if when is None or not isinstance(episode_id, str):
                read.skipped += 1
                continue
            read.episodes[(cid, episode_id)] = _Timed(when, index, record)
        elif kind == "reaction":
            when = _time(record.get("ts"))
            if when is None or not isinstance(record.get("reaction"), str):
                read.skipped += 1
                continue
            read.reactions[cid][record["turn_id"]] = _Timed(when, index, record)
        else:
            read.skipped += 1
    return read


def _ids(record: dict[str, Any]) -> bool:
    if not isinstance(record.get("conversation_id"), str):
        return False
    return record.get("type") == "episode" or isinstance(record.get("turn_id"), str)


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _labels(record: dict[str, Any]) -> Labels:
    return Labels(
        _text(record.get("scenario")),
        _text(record.get("assistant_id")),
        _text(record.get("model_version")),
    )


def _score_of(record: dict[str, Any], scorer: str) -> dict[str, Any] | None:
    for score in record["scores"]:
        if isinstance(score, dict) and score.get("scorer") == scorer:
            return score
    return None


def _worst_turns(
    read: _Read, labels: dict[tuple[str, str], Labels], query: Query
) -> list[WorstTurn]:
    found = []
    for key, timed in read.scores.items():
        record = timed.record
        if not query.in_window(timed.when) or not labels[key].matches(query):
            continue
        score = _score_of(record, query.scorer)
        p = score.get("p_satisfied") if score else None
        if score is None or not isinstance(p, int | float):
            continue
        found.append(
            WorstTurn(
                conversation_id=key[0],
                turn_id=key[1],
                event_ts=record["event_ts"],
                p_satisfied=float(p),
                verdict=_text(score.get("verdict")),
                scorer_version=_text(score.get("version")),
                recovery=bool(record.get("recovery")),
                **asdict(labels[key]),
            )
        )
    found.sort(key=lambda t: (t.p_satisfied, _read_time(t.event_ts), t.conversation_id, t.turn_id))
    return found


def _episodes(
    read: _Read, labels: dict[tuple[str, str], Labels], query: Query
) -> list[UnrecoveredEpisode]:
    found = []
    for (cid, episode_id), timed in read.episodes.items():
        record = timed.record
        if record.get("outcome") not in UNRECOVERED or not query.in_window(timed.when):
            continue
        attempt = _text(record.get("last_attempt"))
        joined = labels.get((cid, episode_id), Labels())
        if attempt:
            joined = joined.or_else(labels.get((cid, attempt), Labels()))
        seen = Labels(_text(record.get("scenario")), _text(record.get("assistant_id"))).or_else(
            joined
        )
        if not seen.matches(query):
            continue
        attempts = record.get("attempts")
        seconds = record.get("seconds")
        found.append(
            UnrecoveredEpisode(
                conversation_id=cid,
                episode_id=episode_id,
                outcome=record["outcome"],
                cause=_text(record.get("cause")),
                trigger=_text(record.get("trigger")),
                attempts=attempts if isinstance(attempts, int) else None,
                last_attempt=attempt,
                opened_ts=_text(record.get("opened_ts")),
                closed_ts=record["closed_ts"],
                seconds=float(seconds) if isinstance(seconds, int | float) else None,
                **asdict(seen),
            )
        )
    # Newest first: the ones behind a firing alert come at the top.
    found.sort(key=lambda e: (_read_time(e.closed_ts), e.conversation_id, e.episode_id))
    found.reverse()
    return found


def _read_time(value: str) -> datetime:
    when = _time(value)
    return when if when is not None else datetime.min.replace(tzinfo=UTC)


def _streaks(
    read: _Read, labels: dict[tuple[str, str], Labels], query: Query
) -> list[ComplaintStreak]:
    found = []
    for cid, by_turn in read.reactions.items():
        ordered = sorted(by_turn.values(), key=lambda r: (r.when, r.index))
        run: list[_Timed] = []
        for entry in [*ordered, None]:
            if entry is not None and entry.record["reaction"] == COMPLAINT:
                run.append(entry)
                continue
            if len(run) >= query.streak:
                streak = _streak(cid, run, labels, query)
                if streak is not None:
                    found.append(streak)
            run = []
    found.sort(key=lambda s: (-s.complaints, -_read_time(s.last_ts).timestamp(), s.conversation_id))
    return found


def _streak(
    cid: str,
    run: list[_Timed],
    labels: dict[tuple[str, str], Labels],
    query: Query,
) -> ComplaintStreak | None:
    first, last = run[0], run[-1]
    if not query.overlaps(first.when, last.when):
        return None
    turn_ids = tuple(entry.record["turn_id"] for entry in run)
    # Labels of the turns complained about, the latest known value of each field first.
    seen = Labels()
    for turn_id in reversed(turn_ids):
        seen = seen.or_else(labels.get((cid, turn_id), Labels()))
    if not seen.matches(query):
        return None
    return ComplaintStreak(
        conversation_id=cid,
        complaints=len(run),
        turn_ids=turn_ids,
        first_ts=first.record["ts"],
        last_ts=last.record["ts"],
        **asdict(seen),
    )
