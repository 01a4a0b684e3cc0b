"""Train the GRM's verdict head (scorer.verdict_head) on labelled dialogues.

The costly part is one forward pass of the base model per dialogue (about 0.3-1.3 s on two
CPU cores); its output, the hidden state at the answer position, is cached on disk per
prompt, so an interrupted run resumes where it stopped and a second fit (other data
mixes, other regularisation) costs seconds.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scorer.encoder import progress_bar
from scorer.grm import GRM
from scorer.types import Dialogue

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

CHUNK = 8  # dialogues per forward batch between checkpoints


def cached_answer_states(
    grm: GRM, dialogues: Sequence[Dialogue], cache_dir: Path, progress: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(states, base margins) for every dialogue, computing only what the cache lacks."""
    import numpy as np

    cache_dir.mkdir(parents=True, exist_ok=True)
    model = grm.version.split("+t", 1)[0]  # weights, templates and budget; not the cut
    keys = [_key(model, grm.prompt(d).messages()) for d in dialogues]
    todo = [i for i, k in enumerate(keys) if not (cache_dir / f"{k}.npy").exists()]
    bar = progress_bar(len(todo), "answer states") if progress and todo else None
    for lo in range(0, len(todo), CHUNK):
        chunk = todo[lo : lo + CHUNK]
        states, margins = grm.answer_states([dialogues[i] for i in chunk])
        for row, index in enumerate(chunk):
            values = np.append(states[row], margins[row]).astype(np.float32)
            tmp = cache_dir / f"{keys[index]}.tmp.npy"
            np.save(tmp, values)
            tmp.replace(cache_dir / f"{keys[index]}.npy")
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    rows = np.stack([np.load(cache_dir / f"{k}.npy") for k in keys])
    return rows[:, :-1], rows[:, -1].astype(np.float64)


def _key(model: str, messages: list[dict[str, str]]) -> str:
    digest = hashlib.sha256(model.encode())
    for message in messages:
        digest.update(b"\x00" + message["role"].encode() + b"\x00" + message["content"].encode())
    return digest.hexdigest()


# Chosen by leave-one-writer-out on six of the corpus writers (docs/validation.md): 0.03-0.3
# gave Task-1 AUROC 0.905-0.915; 0.1 was best on both tasks.
DEFAULT_L2 = 0.1


def default_state_cache() -> Path:
    return Path.home() / ".cache" / "uxmon" / "grm-states"


def train_verdict_head(
    grm: GRM,
    examples: Sequence[tuple[Dialogue, int, str]],
    out_dir: Path,
    *,
    l2: float = DEFAULT_L2,
    cache_dir: Path | None = None,
    progress: bool = True,
) -> tuple[str, dict[str, float]]:
    """Fit a verdict head on (dialogue, label, group) examples (Task-1 turns and Task-3
    recovery attempts alike: the prompt tells the mode), calibrate it out of group, save
    it to `out_dir`. Returns (version, out-of-group metrics)."""
    import numpy as np

    from scorer.calibration import judge_metrics
    from scorer.verdict_head import fit_calibrated_head, save_verdict_head

    dialogues = [d for d, _, _ in examples]
    labels = np.asarray([y for _, y, _ in examples], dtype=np.int64)
    groups = [g for _, _, g in examples]
    states, margins = cached_answer_states(
        grm, dialogues, cache_dir or default_state_cache(), progress
    )
    fitted = fit_calibrated_head(states, labels, margins, groups, l2=l2)
    p = np.array([fitted.threshold.p_good(m) for m in fitted.oof_margins])
    metrics = judge_metrics(p, labels, 0.5).as_dict()
    meta = {
        "model_id": grm.base_version.split("+", 1)[0],
        "trained_for": grm.base_version,
        "groups": sorted(set(groups)),
        "n_examples": len(examples),
        "n_recovery": sum(1 for d in dialogues if d.is_recovery),
        "out_of_group": metrics,
    }
    version = save_verdict_head(out_dir, fitted.head, fitted.threshold, meta)
    log.info("verdict head %s: %d examples, out-of-group %s", version, len(examples), metrics)
    return version, metrics
