"""The verdict of record when a turn has both scores, measured out of writer.

The service lets the GRM decide the turns it scored (stream/recovery.deciding_score) and
the cascade sends it the turns the UX-Judge is least sure about: a judge score within
`UXMON_GRM_UNCERTAIN_MARGIN` of its calibrated threshold. This replays that rule on the
writer corpus with leave-one-writer-out scores of both (each fold's models never saw the
writer they score) and reports, per margin, the share of turns the GRM decides and the
accuracy of the resulting verdicts, beside the judge alone and the GRM alone.

    python bench/cascade.py [--per-writer 150] [--out bench/results/cascade.json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

MARGINS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-writer", type=int, default=150, help="Task-1 records per writer")
    parser.add_argument("--out", type=Path, default=Path("bench/results/cascade.json"))
    parser.add_argument("--state-cache", type=Path, default=None)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args()

    from benchmark import crosswriter as cw
    from benchmark import writers
    from scorer.encoder import E5Encoder
    from scorer.grm import GRM
    from scorer.grm_training import DEFAULT_L2, cached_answer_states, default_state_cache
    from scorer.training import TrainConfig
    from scorer.ux_judge import featurize

    t1, t3 = writers.first_per_writer(writers.load_task1(), writers.load_task3(), args.per_writer)
    y1 = np.array([r.item.label for r in t1])
    w1 = [r.writer for r in t1]

    encoder = E5Encoder()
    encoder.load()
    features = featurize([r.item.dialogue for r in t1], encoder, progress=True)
    cuts = np.zeros(len(t1))
    fit_judge = cw.judge_method(features, list(y1), w1, TrainConfig().l2)

    def judge_keeping_cuts(train: Any, test: Any) -> tuple[NDArray[np.float64], float]:
        p, cut = fit_judge(train, test)
        cuts[test] = cut
        return p, cut

    judge = cw.leave_one_writer_out(w1, list(y1), judge_keeping_cuts)

    grm = GRM(verdict_head=False)  # every fold trains its own head, as `uxmon crossval`
    grm.load()
    states, margins = cached_answer_states(
        grm, cw.grm_dialogues(t1, t3), args.state_cache or default_state_cache()
    )
    labels = list(y1) + [1, 0] * len(t3)
    groups = w1 + [r.writer for r in t3 for _ in (0, 1)]
    both = cw.leave_one_writer_out(
        groups, labels, cw.verdict_head_method(states, margins, labels, groups, DEFAULT_L2)
    )
    reply = cw.subset(both, np.arange(len(labels)) < len(t1))

    distance = np.abs(judge.p - cuts)
    rows = []
    for margin in MARGINS:
        by_grm = distance < margin
        liked = np.where(by_grm, reply.liked, judge.liked)
        p = np.where(by_grm, reply.p, judge.p)  # each on its own calibrated scale
        figures = cw.figures(y1, p, liked, args.resamples).as_dict()
        rows.append({"margin": margin, "grm_share": round(float(by_grm.mean()), 4), **figures})
    out = {
        "protocol": "leave-one-writer-out",
        "writers": sorted(set(w1)),
        "task1_records": len(t1),
        "judge_alone": cw.figures(y1, judge.p, judge.liked, args.resamples).as_dict(),
        "grm_alone": cw.figures(y1, reply.p, reply.liked, args.resamples).as_dict(),
        "grm_decides_within_margin": rows,
    }
    for row in rows:
        print(
            f"margin {row['margin']:.2f}: GRM decides {row['grm_share']:6.1%}  "
            f"Avg-Acc {row['avg_acc']:.3f} {row['avg_acc_ci']}  Bad-Acc {row['bad_acc']:.3f}"
        )
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
