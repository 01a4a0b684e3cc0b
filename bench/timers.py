"""The timers' cost per tick against the conversations stored, with the due index.

    python bench/timers.py [--sizes 10000 100000 1000000] [--due 100] [--out FILE.json]

In-process, no broker: the worker's timer takes what has fallen due from the index
(`stream/due.py`), reads those states and runs the pipeline's tick over them. For each
size, that many conversations are stored, each with a reply awaiting its follow-up; `--due`
of them have run out of time, the rest run out later. Beside it, in the same run, the scan
the timer did before the index (every stored state read, those awaiting a follow-up
parsed), on the sizes up to 100,000. The figures are medians of repeated ticks.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stream.conversation import Awaiting, ConversationState, HistoryTurn  # noqa: E402
from stream.due import Due  # noqa: E402
from stream.pipeline import Pipeline  # noqa: E402

FOLLOW_UP_S = 1800.0
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SCAN_UP_TO = 100_000


def _state(i: int, replied: datetime) -> dict[str, Any]:
    turns = (
        HistoryTurn(f"u{i}", "user", "明天北京天气怎么样？要不要带伞？"),
        HistoryTurn(f"a{i}", "assistant", "明天北京多云转小雨，最高 12 度，建议带伞。" * 3),
    )
    state = ConversationState(
        turns=turns,
        seen=(f"u{i}", f"a{i}"),
        last_ts=replied,
        partition=0,
        offset=i,
        touched_at=replied.timestamp(),
        awaiting=Awaiting(f"a{i}", replied),
    )
    return state.to_json()


def _pipeline() -> Pipeline:
    from stream.cascade import Budget
    from stream.conversation import Bounds, Tracking
    from stream.events import Limits
    from stream.reactions import Patterns

    return Pipeline(
        judges=[],
        grm=None,
        budget=Budget(rate=1, burst=1, max_per_batch=1, uncertain_margin=0.1, sample_rate=0),
        deadline=None,
        limits=Limits(),
        bounds=Bounds(8, 64),
        tracking=Tracking(Patterns.load()),
        open_below=None,
        follow_up_s=FOLLOW_UP_S,
        episode_s=FOLLOW_UP_S,
    )


def _median_s(run: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(size: int, due_now: int, pipeline: Pipeline) -> dict[str, Any]:
    table: dict[bytes, dict[str, Any]] = {}
    index = Due()
    for i in range(size):
        overdue = i < due_now
        replied = NOW - timedelta(seconds=FOLLOW_UP_S + 1 if overdue else 10 + i % 1000)
        key = f"c{i}".encode()
        table[key] = value = _state(i, replied)
        index.put(0, key, datetime.fromisoformat(value["awaiting"]["ts"]).timestamp() + FOLLOW_UP_S)

    def indexed() -> int:
        keys = index.take(0, NOW.timestamp())
        tick = pipeline.tick((key, ConversationState.from_json(table[key]), NOW) for key in keys)
        for key in keys:  # as the worker does after the tick (they are due again here)
            index.put(0, key, NOW.timestamp() - 1)
        return len(tick.signals)

    def scanned() -> int:
        tick = pipeline.tick(
            (key, ConversationState.from_json(value), NOW)
            for key, value in list(table.items())
            if value and value.get("awaiting")
        )
        return len(tick.signals)

    assert indexed() == scanned() if size <= SCAN_UP_TO else True
    result: dict[str, Any] = {
        "stored": size,
        "due": due_now,
        "index_tick_ms": round(1000 * _median_s(indexed, 21), 3),
    }
    if size <= SCAN_UP_TO:
        result["scan_tick_ms"] = round(1000 * _median_s(scanned, 3 if size > 10_000 else 11), 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--due", type=int, default=100, help="conversations due per tick")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "timers.json")
    args = parser.parse_args()
    pipeline = _pipeline()
    rows = []
    for size in args.sizes:
        row = measure(size, args.due, pipeline)
        rows.append(row)
        print(json.dumps(row), flush=True)
    small, large = rows[0], rows[-1]
    summary = {
        "index_tick_growth": round(large["index_tick_ms"] / small["index_tick_ms"], 2),
        "stored_growth": large["stored"] // small["stored"],
    }
    print(
        f"tick with {args.due} due: {small['index_tick_ms']} ms at {small['stored']:,} stored, "
        f"{large['index_tick_ms']} ms at {large['stored']:,} "
        f"({summary['index_tick_growth']}x for {summary['stored_growth']}x the state)"
    )
    args.out.write_text(json.dumps({"rows": rows, **summary}, indent=2) + "\n")


if __name__ == "__main__":
    main()
