"""Experiment: a learned reaction classifier over the rules, leave-one-writer-out.

For every assistant reply the user answered, the features are the e5 embedding of the
user's next message, its cosine to the question before and to the reply itself, timing
against a per-script reading speed, plain lexical similarity and an exact-repeat flag,
the explicit feedback in between, and the rules' own verdict and pattern hits (so the
rules become features). A multinomial logistic regression is trained on all writers but
one and scores the one left out. `no_follow_up` needs no classifier (a timer decides it)
and is left out of these figures.

    python bench/reactions_learned.py [--sessions DIR] [--out bench/results/reactions_learned.json]

This decides the method on cross-validation; it is not the service's detector yet.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmark.sessions import Session, load_sessions  # noqa: E402
from stream.reactions import (  # noqa: E402
    Patterns,
    classify,
    content_units,
    pattern_form,
    similarity,
)

CLASSES = ("satisfied", "complaint", "rephrase", "repeat", "dismiss", "skip_read", "abandon")
FEEDBACK = ("thumbs_up", "thumbs_down", "regenerate", "copy")
READ_CHARS_PER_S = {"cjk": 8.0, "other": 25.0}  # brisk reading; measured figures vary


def reading_seconds(text: str) -> float:
    cjk = sum(1 for c in text if "\u3400" <= c <= "\u9fff")
    return cjk / READ_CHARS_PER_S["cjk"] + (len(text) - cjk) / READ_CHARS_PER_S["other"]


def examples(sessions: list[Session]) -> list[dict[str, Any]]:
    """One example per assistant reply the user answered (its writer's label)."""
    from datetime import UTC, datetime

    out = []
    for s in sessions:
        events = s.events(datetime(2026, 11, 20, tzinfo=UTC))
        turns = [e for e in events if e["type"] == "turn"]
        expected = s.expected()
        for i, reply in enumerate(turns):
            if reply["role"] != "assistant" or i + 1 >= len(turns):
                continue
            nxt = turns[i + 1]
            if nxt["role"] != "user" or expected.get(reply["turn_id"]) in (None, "no_follow_up"):
                continue
            question = next((t["text"] for t in reversed(turns[:i]) if t["role"] == "user"), "")
            between = [
                e["kind"]
                for e in events
                if e["type"] == "feedback" and e["turn_id"] == reply["turn_id"]
            ]
            gap = (
                datetime.fromisoformat(nxt["ts"]) - datetime.fromisoformat(reply["ts"])
            ).total_seconds()
            out.append(
                {
                    "writer": s.writer,
                    "lang": s.lang,
                    "question": question,
                    "reply": reply["text"],
                    "message": nxt["text"],
                    "gap": gap,
                    "reply_ts": reply["ts"],
                    "next_ts": nxt["ts"],
                    "feedback": between,
                    "label": expected[reply["turn_id"]],
                }
            )
    return out


def features(rows: list[dict[str, Any]], encoder: Any, patterns: Patterns) -> NDArray[np.float64]:
    from datetime import datetime

    m = encoder.encode([r["message"] for r in rows])
    q = encoder.encode([r["question"] or " " for r in rows])
    a = encoder.encode([r["reply"] for r in rows])
    table = []
    for i, r in enumerate(rows):
        rule = classify(
            r["question"] or None,
            r["reply"],
            datetime.fromisoformat(r["reply_ts"]),
            r["message"],
            datetime.fromisoformat(r["next_ts"]),
            patterns,
        )
        text = r["message"].strip()
        expected_read = max(1.0, reading_seconds(r["reply"]))
        same = pattern_form(text) == pattern_form(r["question"]) if r["question"] else False
        hand = [
            float(m[i] @ q[i]),
            float(m[i] @ a[i]),
            float(q[i] @ a[i]),
            similarity(r["question"], text) if r["question"] else 0.0,
            float(same),
            math.log1p(len(text)),
            math.log1p(len(r["reply"])),
            math.log1p(max(0.0, r["gap"])),
            math.log((max(0.5, r["gap"])) / expected_read),
            float(patterns.is_complaint(text)),
            float(patterns.is_dismissal(text)),
            float(patterns.is_continuation(text)),
            float(patterns.is_rephrase(text)),
            float(len(content_units(text)) == 0),
            *[float(str(rule) == c) for c in CLASSES],
            *[float(k in r["feedback"]) for k in FEEDBACK],
        ]
        table.append(np.concatenate([m[i], np.asarray(hand)]))
    return np.asarray(table, dtype=np.float64)


def fit_softmax(x: NDArray[np.float64], y: NDArray[np.int64], l2: float) -> Any:
    import torch

    mean, std = x.mean(0), x.std(0) + 1e-6
    xt = torch.tensor((x - mean) / std, dtype=torch.float64)
    yt = torch.tensor(y)
    w = torch.zeros(x.shape[1], len(CLASSES), dtype=torch.float64, requires_grad=True)
    b = torch.zeros(len(CLASSES), dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=300, line_search_fn="strong_wolfe")

    def closure() -> Any:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(xt @ w + b, yt) + l2 * (w * w).sum() / len(y)
        loss.backward()
        return loss

    opt.step(closure)
    weights, bias = w.detach().numpy(), b.detach().numpy()
    return lambda z: ((z - mean) / std) @ weights + bias


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=Path, default=None)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/reactions_learned.json")
    args = parser.parse_args(argv)

    from scorer.encoder import E5Encoder

    rows = examples(load_sessions(args.sessions))
    encoder = E5Encoder()
    encoder.load()
    x = features(rows, encoder, Patterns.load())
    y = np.array([CLASSES.index(r["label"]) for r in rows])
    writers = np.array([r["writer"] for r in rows])
    rule_col = x.shape[1] - len(FEEDBACK) - len(CLASSES)
    rules = np.argmax(x[:, rule_col : rule_col + len(CLASSES)], axis=1)
    learned = np.zeros_like(y)
    for writer in sorted(set(writers)):
        test = writers == writer
        predict = fit_softmax(x[~test], y[~test], args.l2)
        learned[test] = np.argmax(predict(x[test]), axis=1)

    def summary(pred: NDArray[np.int64]) -> dict[str, Any]:
        by_kind = {
            c: round(float((pred[y == k] == k).mean()), 4)
            for k, c in enumerate(CLASSES)
            if (y == k).any()
        }
        langs = np.array([r["lang"] for r in rows])
        by_lang = {
            lang: round(float((pred[langs == lang] == y[langs == lang]).mean()), 4)
            for lang in sorted(set(langs))
        }
        by_writer = {
            w: round(float((pred[writers == w] == y[writers == w]).mean()), 4)
            for w in sorted(set(writers))
        }
        return {
            "accuracy": round(float((pred == y).mean()), 4),
            "by_kind": by_kind,
            "by_lang": by_lang,
            "by_writer": by_writer,
        }

    majority = Counter(y.tolist()).most_common(1)[0]
    report = {
        "answered_replies": len(rows),
        "counts": dict(Counter(r["label"] for r in rows)),
        "majority": {"class": CLASSES[majority[0]], "accuracy": round(majority[1] / len(y), 4)},
        "rules": summary(rules),
        "learned_lowo": summary(learned),
        "l2": args.l2,
    }
    print(json.dumps({k: report[k] for k in ("answered_replies", "majority")}, ensure_ascii=False))
    for name in ("rules", "learned_lowo"):
        print(name, json.dumps(report[name], ensure_ascii=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
