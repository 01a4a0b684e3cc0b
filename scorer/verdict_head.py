"""A trained verdict head for the GRM: new lm_head rows for its two verdict tokens.

The GRM's score stays UXBench's pointwise one, P(good) / (P(good) + P(bad)) at the first
answer position from one forward pass: only the two lm_head rows that give those tokens'
logits change. Their difference is what the score reads, so training them is a logistic
regression on the decoder's last hidden state h at the answer position, with the base
model's own margin as the offset:

    margin(h) = (row_good - row_bad) . h  +  direction . h + bias

and the adapted rows are row_good + direction / 2 and row_bad - direction / 2 (biases
+-bias / 2). The base weights are untouched and the head is 2 x hidden numbers (a few KB),
so it ships in the package. L2 shrinks the direction towards the base model's own.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.errors import ScorerError
from scorer.grm_threshold import Threshold, calibrate

if TYPE_CHECKING:
    import numpy as np

DEFAULT_VERDICT_HEAD = Path(__file__).parent / "adapters" / "grm_verdict_default"
_WEIGHTS = "verdict_head.safetensors"
_META = "meta.json"
THRESHOLD_FILE = "threshold.json"  # scorer.grm_threshold's file for the adapted model


class VerdictHeadError(ScorerError):
    """A verdict head file that cannot be used with this model."""


@dataclass(frozen=True)
class VerdictHead:
    direction: np.ndarray  # (hidden,) float32, added to row_good - row_bad
    bias: float
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def version(self) -> str:
        digest = hashlib.sha256(self.direction.tobytes())
        digest.update(repr(round(self.bias, 9)).encode())
        return digest.hexdigest()[:8]

    def margins(self, states: np.ndarray, base_margins: np.ndarray) -> np.ndarray:
        """The adapted margin for hidden-state rows whose base-model margins are known."""
        return base_margins + states @ self.direction + self.bias


def fit_verdict_head(
    states: np.ndarray,
    labels: Sequence[int] | np.ndarray,
    base_margins: np.ndarray,
    *,
    l2: float,
    weights: Sequence[float] | None = None,
) -> VerdictHead:
    """Fit direction and bias by weighted, L2-penalised logistic regression (L-BFGS).

    The states are standardised for the fit (the last hidden state has a few huge
    dimensions) and the result mapped back, so the head applies to raw states.
    """
    import numpy as np
    import torch

    x = np.asarray(states, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != y.size or not {0.0, 1.0} <= set(np.unique(y).tolist()):
        raise VerdictHeadError(
            f"expected one hidden-state row per label and both labels; got {x.shape} states "
            f"for {y.size} labels"
        )
    mean, std = x.mean(0), x.std(0) + 1e-6
    z = torch.from_numpy((x - mean) / std)
    offset = torch.from_numpy(np.asarray(base_margins, dtype=np.float64))
    target = torch.from_numpy(y)
    w = torch.ones(y.size, dtype=torch.float64)
    if weights is not None:
        w = torch.as_tensor(np.asarray(weights, dtype=np.float64))
    w = w / w.mean()
    direction = torch.zeros(x.shape[1], dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([direction, bias], max_iter=500, line_search_fn="strong_wolfe")

    def loss() -> torch.Tensor:
        optimizer.zero_grad()
        logits = offset + z @ direction + bias
        value = (
            torch.nn.functional.binary_cross_entropy_with_logits(logits, target, weight=w)
            + l2 * direction.pow(2).sum() / 2
        )
        value.backward()
        return value

    optimizer.step(loss)
    d = direction.detach().numpy() / std
    b = float(bias.detach().numpy()[0] - (d * mean).sum())
    return VerdictHead(d.astype(np.float32), b, {"l2": l2, "n_examples": int(y.size)})


@dataclass(frozen=True)
class CalibratedHead:
    head: VerdictHead
    threshold: Threshold  # the cut on the margin and the slope of P(good)
    oof_margins: np.ndarray  # each example's margin from a head fitted without its group


def fit_calibrated_head(
    states: np.ndarray,
    labels: Sequence[int] | np.ndarray,
    base_margins: np.ndarray,
    groups: Sequence[str],
    *,
    l2: float,
) -> CalibratedHead:
    """Fit on everything; calibrate (scorer.grm_threshold) on out-of-group margins.

    With writers as groups the cut and the slope come from predictions on writers the
    head never saw, which is how it will meet a team's traffic; in-sample margins would
    be over-confident.
    """
    import numpy as np

    y = np.asarray(labels, dtype=np.int64)
    g = np.asarray(groups)
    names = sorted(set(groups))
    if len(names) < 2:
        raise VerdictHeadError(f"expected at least 2 groups to calibrate on; got {len(names)}")
    oof = np.empty(y.size, dtype=np.float64)
    for name in names:
        held = g == name
        head = fit_verdict_head(states[~held], y[~held], base_margins[~held], l2=l2)
        oof[held] = head.margins(states[held], base_margins[held])
    threshold = calibrate(oof.tolist(), y.tolist(), {"calibrated_on": "out-of-group margins"})
    full = fit_verdict_head(states, y, base_margins, l2=l2)
    return CalibratedHead(full, threshold, oof)


def save_verdict_head(
    out_dir: Path, head: VerdictHead, threshold: Threshold, meta: dict[str, Any]
) -> str:
    """Write the head (safetensors + meta.json + its threshold); returns its version."""
    import torch
    from safetensors.torch import save_file

    from scorer.grm_threshold import save_threshold

    out_dir.mkdir(parents=True, exist_ok=True)
    save_threshold(threshold, out_dir / THRESHOLD_FILE)
    tensors = {
        "direction": torch.from_numpy(head.direction.copy()),
        "bias": torch.tensor([head.bias], dtype=torch.float64),
    }
    save_file(tensors, str(out_dir / _WEIGHTS))
    full = {**head.meta, **meta, "version": head.version}
    (out_dir / _META).write_text(json.dumps(full, indent=2, sort_keys=True) + "\n")
    return head.version


def read_head_meta(directory: Path) -> dict[str, Any]:
    try:
        meta = json.loads((directory / _META).read_text())
    except (OSError, ValueError) as exc:
        raise VerdictHeadError(f"no readable verdict head in {directory}: {exc}") from None
    if not isinstance(meta, dict):
        raise VerdictHeadError(f"{directory / _META}: expected a JSON object")
    return meta


def load_verdict_head(directory: Path, hidden: int, model_id: str) -> VerdictHead:
    """Read a head and check it was trained for this model (hidden size and weights id)."""
    from safetensors.torch import load_file

    weights, meta_file = directory / _WEIGHTS, directory / _META
    if not weights.is_file() or not meta_file.is_file():
        raise VerdictHeadError(f"expected {_WEIGHTS} and {_META} in {directory}")
    meta = json.loads(meta_file.read_text())
    tensors = load_file(str(weights))
    direction = tensors["direction"].float().numpy()
    if direction.shape != (hidden,):
        raise VerdictHeadError(
            f"the verdict head in {directory} is for hidden size {direction.shape[0]}; "
            f"this model has {hidden}"
        )
    if meta.get("model_id") not in (None, model_id):
        raise VerdictHeadError(
            f"the verdict head in {directory} was trained on {meta.get('model_id')}, not {model_id}"
        )
    bias = float(tensors["bias"].double().numpy()[0])
    if not math.isfinite(bias):
        raise VerdictHeadError(f"the verdict head in {directory} has a non-finite bias")
    return VerdictHead(direction, bias, meta)
