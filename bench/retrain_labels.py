"""Does retraining the UX-Judge on a team's own labels pay? Train a head on the older
labels of one source's traffic, evaluate it and the shipped head on the newest window of
the same source, with intervals and a paired gate.

    python bench/retrain_labels.py [--holdout 0.25] [--out bench/results/retrain_labels.json]

The source: the 19 independent writers' sessions (benchmark/data/sessions*), standing in
for one team's traffic (UXBench's central claim is that a judge trained on a product's own
users beats general judges; here the "team" is this pool). Labels are made the way the
labels topic makes them (stream/labels.py): a thumb, regenerate, copy or share on a reply
(explicit), else the user's next message when it is a complaint or a satisfied follow-up
(implicit); the reaction is the writer's label, i.e. a perfect reaction detector, which
the live topic does not have (docs/labels.md measures its noise). Sessions are ordered by
their start time; the newest `--holdout` share is the later window.

The head is trained with `uxmon judge train` on the older labels only; both heads are
scored with `uxmon bench --task task1` on the window, and `uxmon gate` compares them
(McNemar exact test and the interval of the Avg-Acc difference). Majority and reply-length
baselines stand beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmark.sessions import writer_folders  # noqa: E402
from benchmark.tasks import wilson  # noqa: E402
from stream.labels import EXPLICIT, IMPLICIT  # noqa: E402
from stream.reactions import Reaction  # noqa: E402


def labelled(session: dict[str, Any]) -> list[dict[str, Any]]:
    """The session's labelled replies as Task-1 records (one per reply, explicit first)."""
    ts = datetime.fromisoformat(session["start"].replace("Z", "+00:00"))
    turns: list[dict[str, Any]] = []
    out: dict[int, dict[str, Any]] = {}
    for step in session["steps"]:
        ts += timedelta(seconds=float(step["after_s"]))
        if "feedback" in step:
            kind, last = step["feedback"], len(turns) - 1
            if kind in EXPLICIT and last >= 0 and turns[last]["role"] == "assistant":
                out[last] = record(session, turns, last, EXPLICIT[kind], f"explicit:{kind}", ts)
            continue
        turns.append({"role": step["role"], "message": step["text"]})
        if step["role"] != "assistant" or not step.get("reaction"):
            continue
        reaction = Reaction(step["reaction"])
        index = len(turns) - 1
        if reaction in IMPLICIT:
            out[index] = record(
                session, turns, index, IMPLICIT[reaction], f"implicit:{reaction}", ts
            )
    return list(out.values())


def record(
    session: dict[str, Any],
    turns: list[dict[str, Any]],
    index: int,
    label: int,
    source: str,
    ts: datetime,
) -> dict[str, Any]:
    asked = index
    while asked > 0 and turns[asked - 1]["role"] == "user":
        asked -= 1
    history = [
        {"turn_index": i, "role": t["role"], "message": t["message"]}
        for i, t in enumerate(turns[:asked])
    ]
    return {
        "cid": f"{session['session']}/a{index}",
        "ground_truth": 1 if label == 1 else -1,
        "selected_history": history,
        "source_query": {
            "turn_index": asked,
            "message": "\n".join(t["message"] for t in turns[asked:index]),
        },
        "agent_response_full": turns[index]["message"],
        "scenario": session["scenario"],
        "writer": session["writer"],
        "lang": session["lang"],
        "label_source": source,
        "ts": ts.isoformat(),
    }


def uxmon(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "stream.cli", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"uxmon {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done


def recall_figures(rows: list[dict[str, Any]], liked_pred: list[bool]) -> dict[str, Any]:
    good = [p for r, p in zip(rows, liked_pred, strict=True) if r["ground_truth"] == 1]
    bad = [not p for r, p in zip(rows, liked_pred, strict=True) if r["ground_truth"] == -1]
    g, b = wilson(sum(good), len(good)), wilson(sum(bad), len(bad))
    return {
        "good_acc": g.estimate,
        "bad_acc": b.estimate,
        "avg_acc": (g.estimate + b.estimate) / 2,
        "good_ci95": [g.low, g.high],
        "bad_ci95": [b.low, b.high],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holdout", type=float, default=0.25)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/retrain_labels.json")
    args = parser.parse_args(argv)

    sessions = [
        json.loads(line)
        for folder in writer_folders()
        for path in sorted(folder.glob("r*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    sessions.sort(key=lambda s: (s["start"], s["session"]))
    cut = int(len(sessions) * (1 - args.holdout))
    train = [r for s in sessions[:cut] for r in labelled(s)]
    window = [r for s in sessions[cut:] for r in labelled(s)]
    work = Path(tempfile.mkdtemp(prefix="uxmon-retrain-"))
    for name, rows in (("train", train), ("window", window)):
        with (work / f"{name}.jsonl").open("w", encoding="utf-8") as out:
            out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    print(f"{len(train)} labels to train on, {len(window)} in the later window", file=sys.stderr)

    head = work / "head"
    uxmon("judge", "train", "--data", str(work / "train.jsonl"), "--out", str(head))
    reports = {}
    for name, env in (("shipped", {}), ("retrained", {"UXMON_JUDGE_HEAD": str(head)})):
        report = work / f"{name}.json"
        uxmon(
            "bench", "--task", "task1", "--data", str(work / "window.jsonl"),
            "--scorer", "ux_judge", "--out", str(report), "--no-progress", env=env,
        )  # fmt: skip
        reports[name] = json.loads(report.read_text())
    gate = uxmon(
        "gate", "--baseline", str(work / "shipped.json"), "--candidate",
        str(work / "retrained.json"), "--tolerance", "0",
    )  # fmt: skip

    liked_share = sum(r["ground_truth"] == 1 for r in train) / len(train)
    median_len = sorted(len(r["agent_response_full"]) for r in train)[len(train) // 2]
    longer_is_liked = (
        sum(r["ground_truth"] == 1 for r in train if len(r["agent_response_full"]) > median_len)
        / max(1, sum(len(r["agent_response_full"]) > median_len for r in train))
    ) > liked_share
    baselines = {
        "majority": recall_figures(window, [liked_share >= 0.5] * len(window)),
        "reply_length": recall_figures(
            window,
            [(len(r["agent_response_full"]) > median_len) == longer_is_liked for r in window],
        ),
    }
    result = {
        "source": f"{len({s['writer'] for s in sessions})} writers' sessions "
        "(benchmark/data/sessions*), ordered by start time",
        "labels": "explicit feedback, else the writer's complaint/satisfied reaction",
        "train_labels": len(train),
        "window_labels": len(window),
        "window_liked": sum(r["ground_truth"] == 1 for r in window),
        "train_writers": sorted({r["writer"] for r in train}),
        "window_writers": sorted({r["writer"] for r in window}),
        "heads": {
            name: {
                "version": report["scorer_version"],
                "metrics": {k: report["metrics"][k] for k in ("good_acc", "bad_acc", "avg_acc")},
                "intervals": report.get("intervals", {}),
            }
            for name, report in reports.items()
        },
        "baselines": baselines,
        "gate_retrained_vs_shipped_tolerance_0": {
            "exit": gate.returncode,
            "table": gate.stdout,
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    for name, head_result in result["heads"].items():
        m = head_result["metrics"]
        print(f"{name:10s} avg {m['avg_acc']:.3f} good {m['good_acc']:.3f} bad {m['bad_acc']:.3f}")
    for name, m in baselines.items():
        print(f"{name:10s} avg {m['avg_acc']:.3f} good {m['good_acc']:.3f} bad {m['bad_acc']:.3f}")
    print(gate.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
