"""`uxmon labels export`: the labels topic as UXBench Task-1 data (docs/labels.md).

It reads the topic once (stream/snapshot.py), keeps one record per turn
(stream/labels.select) and writes JSONL or Parquet that `uxmon bench`, `uxmon judge train`
and `uxmon gate` read as they are. The files hold user text: keep them where the turns
topic's data may be. Only counts are printed.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from stream.commands.options import KafkaBroker, ReadProgress, ReadTimeout, when
from stream.labels import Source

app = typer.Typer(no_args_is_help=True, help="Labelled turns from live feedback.")

FORMATS = (".jsonl", ".parquet")


def _writable(path: Path, option: str) -> Path:
    """Checked before anything is read: a long read must not end in an unwritable path."""
    if path.suffix.lower() not in FORMATS:
        raise typer.BadParameter(
            f"expected a {' or '.join(FORMATS)} file, got {path.name!r}", param_hint=option
        )
    if path.is_dir() or not path.parent.is_dir():
        raise typer.BadParameter(f"{path} is no file in an existing directory", param_hint=option)
    return path


def holdout_path(out: Path) -> Path:
    """Where the held-out part goes: beside `out`, `<stem>.holdout<suffix>`."""
    return out.with_name(f"{out.stem}.holdout{out.suffix}")


def write(records: list[dict[str, Any]], path: Path) -> None:
    if path.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        # pyarrow takes its columns from the first row: give every row every field.
        names = list(dict.fromkeys(k for record in records for k in record))
        rows = [{k: record.get(k) for k in names} for record in records]
        pq.write_table(pa.Table.from_pylist(rows), path)
        return
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")


@app.command("export")
def export(
    out: Annotated[
        Path, typer.Option("--out", help="File to write: .jsonl or .parquet (replaced)")
    ],
    broker: KafkaBroker = "127.0.0.1:9092",
    topic: Annotated[
        str | None, typer.Option(envvar="UXMON_LABELS_TOPIC", help="Labels topic")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Window start on the signal's time: a duration back (2d) or ISO time"),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Window end: a duration back from now or an ISO time")
    ] = None,
    source: Annotated[
        Source | None, typer.Option(help="Only explicit (thumbs...) or implicit labels")
    ] = None,
    holdout: Annotated[
        str | None,
        typer.Option(
            help="Hold out the newest labels for evaluation: a duration back from the newest "
            "label (1d) or an ISO time; written to <out stem>.holdout<suffix>"
        ),
    ] = None,
    balance: Annotated[
        bool, typer.Option(help="Even the classes of the training part (random, --seed)")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of --balance")] = 0,
    progress: ReadProgress = True,
    timeout: ReadTimeout = 10.0,
) -> None:
    """Write the labels topic as UXBench Task-1 records, one per turn: replays folded, an
    explicit signal over an implicit one, the newer over the older."""
    from stream.broker import check_reachable
    from stream.commands.serve import load_settings
    from stream.labels import labelled_ts, select
    from stream.snapshot import read_topic

    if topic is None:
        raise typer.BadParameter(
            "no labels topic: pass --topic or set UXMON_LABELS_TOPIC", param_hint="--topic"
        )
    now = datetime.now(UTC)
    window = (when(since, now, "--since"), when(until, now, "--until"))
    out = _writable(out, "--out")
    security = load_settings().kafka_security()
    check_reachable(broker, timeout_s=min(timeout, 5.0), security=security)
    hint = "set --topic or UXMON_LABELS_TOPIC (is the labels topic on? docs/labels.md)"
    records = read_topic(broker, topic, timeout, progress, security.kafka_python(), hint=hint)
    newest = max((t for t in map(labelled_ts, records) if t is not None), default=now)
    exported = select(
        records,
        since=window[0],
        until=window[1],
        source=source,
        holdout_from=when(holdout, newest, "--holdout"),
        balance=balance,
        seed=seed,
    )
    write(exported.train, out)
    parts = [(out, exported.train)]
    if holdout is not None:
        write(exported.holdout, holdout_path(out))
        parts.append((holdout_path(out), exported.holdout))
    typer.echo(
        f"read {exported.read} records of {topic}: {exported.repeats} replayed deliveries "
        f"folded, {exported.overruled} overruled by another signal on the same turn, "
        f"{exported.outside} outside the window or source, {exported.not_labels} not labels"
        + (f", {exported.dropped_to_balance} dropped to balance" if balance else "")
    )
    for path, part in parts:
        liked = sum(1 for r in part if r.get("ground_truth") == 1)
        explicit = sum(1 for r in part if r.get("label_source") == Source.EXPLICIT)
        typer.echo(
            f"{path}: {len(part)} turns ({liked} liked, {len(part) - liked} disliked; "
            f"{explicit} explicit, {len(part) - explicit} implicit)"
        )
