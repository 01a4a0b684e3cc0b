"""The retrain loop of docs/labels.md on the demo traffic, through the product's own path:
the bundled sample traffic (with its feedback events) replayed into a real worker (the
UX-Judge, the learned reactions, the labels topic on) on the embedded broker, then
`uxmon labels export --holdout`, `uxmon judge train` on the older part, `uxmon bench` of
the shipped and the retrained head on the held-back part, and `uxmon gate`.

    python bench/labels_loop.py [--holdout 30m] [--out bench/results/labels_loop.json]

The sample traffic spans about an hour and a half of event time; it is shifted to end now,
and the newest `--holdout` of labels (by the signal's time) is held back.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from retrain_labels import uxmon  # noqa: E402

from stream.broker import EmbeddedBroker  # noqa: E402
from stream.local import LocalWorker  # noqa: E402
from tests.integration.test_inspect import shifted_sample  # noqa: E402
from tests.support.services import produce  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--holdout", default="30m")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/labels_loop.json")
    args = parser.parse_args(argv)
    tag = uuid.uuid4().hex[:8]
    work = Path(tempfile.mkdtemp(prefix="uxmon-loop-"))
    events = shifted_sample(1, datetime.now(UTC))
    turns = sum(e.get("role") == "assistant" for e in events)
    labels_topic = f"labels-{tag}"
    with EmbeddedBroker(log_path=work / "broker.log") as broker:
        worker = LocalWorker(
            broker.address,
            f"loop-{tag}",
            work,
            pythonpath=str(ROOT),
            turns_topic=f"turns-{tag}",
            scores_topic=f"scores-{tag}",
            dlq_topic=f"dlq-{tag}",
            labels_topic=labels_topic,
            grm="",
        ).start()
        try:
            worker.wait_ready()
            started = time.monotonic()
            produce(
                broker.address,
                f"turns-{tag}",
                [
                    (e["conversation_id"].encode(), json.dumps(e, ensure_ascii=False).encode())
                    for e in events
                ],
            )
            worker.wait_for("uxmon_turns_scored_total", turns, timeout_s=900)
            print(f"{turns} turns scored in {time.monotonic() - started:.0f} s", file=sys.stderr)
            time.sleep(3)
            published = worker.total("uxmon_labels_total")
        finally:
            worker.stop()
        data = work / "labels.jsonl"
        exported = uxmon(
            "labels", "export", "--broker", broker.address, "--topic", labels_topic,
            "--out", str(data), "--holdout", args.holdout, "--no-progress",
        )  # fmt: skip
    held = data.with_name("labels.holdout.jsonl")
    head = work / "head"
    uxmon("judge", "train", "--data", str(data), "--out", str(head))
    reports = {}
    for name, env in (("shipped", {}), ("retrained", {"UXMON_JUDGE_HEAD": str(head)})):
        report = work / f"{name}.json"
        uxmon(
            "bench", "--task", "task1", "--data", str(held), "--scorer", "ux_judge",
            "--out", str(report), "--no-progress", env=env,
        )  # fmt: skip
        reports[name] = json.loads(report.read_text())
    gate = uxmon(
        "gate", "--baseline", str(work / "shipped.json"),
        "--candidate", str(work / "retrained.json"),
    )  # fmt: skip
    result = {
        "traffic": "stream/data/sample_traffic.jsonl, shifted to end now",
        "assistant_turns": turns,
        "labels_published": published,
        "export": exported.stdout.strip().splitlines(),
        "heads": {
            name: {k: r["metrics"][k] for k in ("good_acc", "bad_acc", "avg_acc")}
            | {"n": r["n"], "intervals": r.get("intervals", {})}
            for name, r in reports.items()
        },
        "gate_exit": gate.returncode,
        "gate": gate.stdout,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print("\n".join(result["export"]))
    for name, m in result["heads"].items():
        print(f"{name:10s} n={m['n']} avg {m['avg_acc']:.3f} good {m['good_acc']:.3f} "
              f"bad {m['bad_acc']:.3f}")  # fmt: skip
    print(gate.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
