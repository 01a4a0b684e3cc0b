"""The one look at the final held-out writers: models trained on the writers the methods
were chosen on (w01-w06), scored on the two never looked at before (w07, w08).

    python bench/heldout_writers.py [--out bench/results/heldout_w07_w08.json]

Rerunning it reproduces the figures; choosing anything by them would make them
cross-validation, not a held-out test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

DEV = ("w01", "w02", "w03", "w04", "w05", "w06")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("bench/results/heldout_w07_w08.json"))
    parser.add_argument("--state-cache", type=Path, default=None)
    args = parser.parse_args()

    from benchmark import crosswriter as cw
    from benchmark import writers
    from benchmark.metrics import auroc
    from scorer.encoder import E5Encoder
    from scorer.grm import GRM
    from scorer.grm_training import DEFAULT_L2, cached_answer_states, default_state_cache
    from scorer.training import TrainConfig
    from scorer.ux_judge import featurize

    t1, t3 = writers.load_task1(), writers.load_task3()
    y1 = np.array([r.item.label for r in t1])
    w1 = np.array([r.writer for r in t1])
    train, test = np.flatnonzero(np.isin(w1, DEV)), np.flatnonzero(~np.isin(w1, DEV))
    out: dict[str, object] = {"trained_on": list(DEV), "tested_on": sorted(set(w1[test]))}

    encoder = E5Encoder()
    encoder.load()
    features = featurize([r.item.dialogue for r in t1], encoder, progress=True)
    p, cut = cw.judge_method(features, list(y1), list(w1), TrainConfig().l2)(train, test)
    out["ux_judge"] = cw.figures(y1[test], p, p >= cut).as_dict()
    lengths = [len(r.item.dialogue.reply) for r in t1]
    p, cut = cw.length_method(lengths, list(y1))(train, test)
    out["length_only"] = cw.figures(y1[test], p, p >= cut).as_dict()

    grm = GRM(verdict_head=False)
    grm.load()
    states, margins = cached_answer_states(
        grm, cw.grm_dialogues(t1, t3), args.state_cache or default_state_cache()
    )
    labels = np.array(list(y1) + [1, 0] * len(t3))
    groups = np.array(list(w1) + [r.writer for r in t3 for _ in (0, 1)])
    n1 = len(t1)
    train, test = np.flatnonzero(np.isin(groups, DEV)), np.flatnonzero(~np.isin(groups, DEV))
    p, cut = cw.verdict_head_method(states, margins, list(labels), list(groups), DEFAULT_L2)(
        train, test
    )
    reply = test < n1
    out["grm_task1"] = cw.figures(labels[test][reply], p[reply], p[reply] >= cut).as_dict()
    out["grm_task3_verdicts"] = cw.figures(
        labels[test][~reply], p[~reply], p[~reply] >= cut
    ).as_dict()
    scored = np.full(len(labels), np.nan)
    scored[test] = p
    pairs = [(n1 + 2 * k, n1 + 2 * k + 1) for k, r in enumerate(t3) if r.writer not in DEV]
    out["grm_task3_pair_accuracy"] = cw.pair_accuracy(scored, pairs)
    out["grm_task1_zero_shot_auroc"] = auroc(labels[test][reply], margins[test][reply])
    out["n_test_task1"], out["n_test_task3_contexts"] = int(reply.sum()), len(pairs)
    print(json.dumps(out, indent=1))
    args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
