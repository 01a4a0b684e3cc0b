"""Train a UX-Judge head on labelled dialogues (1 = liked, 0 = disliked) and calibrate it.

The encoder stays frozen: every dialogue is embedded once, then a small MLP trains on the
cached features in seconds. A stratified validation split picks the epoch, fits the
temperature and then the balanced-accuracy threshold; its metrics are therefore slightly
optimistic — measure a held-out set with `uxmon judge eval` for the honest number.
Same data + seed + machine ⇒ the same head bytes.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.calibration import balanced_threshold, fit_temperature, judge_metrics, sigmoid
from scorer.encoder import E5Encoder
from scorer.errors import ScorerError
from scorer.heads import HeadShape, build_mlp, save_head
from scorer.runtime import Runtime
from scorer.types import Dialogue
from scorer.ux_judge import FEATURE_SPEC, featurize

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

MIN_PER_CLASS = 4  # below this a stratified split cannot leave both classes on both sides
INERT_SCALE = 1e12  # standardisation scale of a feature that was constant in training


class TrainingDataError(ScorerError, ValueError):
    """Examples that cannot train a head."""


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    val_fraction: float = 0.2
    epochs: int = 200
    patience: int = 30  # epochs without a better validation loss before stopping
    hidden: int = 128
    dropout: float = 0.2
    lr: float = 3e-3
    weight_decay: float = 1e-2
    batch_size: int = 64


@dataclass(frozen=True)
class TrainReport:
    out_dir: Path
    version: str
    n_train: int
    n_val: int
    best_epoch: int
    temperature: float
    threshold: float
    val_metrics: dict[str, float | int]
    embed_seconds: float
    train_seconds: float


def stratified_split(
    labels: Sequence[int], val_fraction: float, seed: int
) -> tuple[list[int], list[int]]:
    """Indices (train, val), each class split in the same proportion; seeded, sorted."""
    import numpy as np

    if not 0.0 < val_fraction < 1.0:
        raise TrainingDataError(f"val_fraction must be in (0, 1); got {val_fraction}")
    y = np.asarray(labels)
    rng = np.random.default_rng(seed)
    train: list[int] = []
    val: list[int] = []
    for cls in (0, 1):
        members = np.flatnonzero(y == cls)
        rng.shuffle(members)
        n_val = min(max(1, round(val_fraction * members.size)), members.size - 1)
        val.extend(int(i) for i in members[:n_val])
        train.extend(int(i) for i in members[n_val:])
    return sorted(train), sorted(val)


def data_fingerprint(examples: Sequence[tuple[Dialogue, int]]) -> str:
    """sha256 over every field the features read and the label, in order: names the exact
    training data in meta.json without storing any of its text."""
    digest = hashlib.sha256()
    for dialogue, label in examples:
        fields = [dialogue.user_message, dialogue.reply, dialogue.failed_reply or "", str(label)]
        fields += [f"{t.role}:{t.text}" for t in dialogue.history]
        for field in fields:
            digest.update(field.encode("utf-8", "replace"))
            digest.update(b"\0")
        digest.update(b"\1")
    return digest.hexdigest()


def _check(examples: Sequence[tuple[Dialogue, int]]) -> list[int]:
    labels = []
    for i, (dialogue, label) in enumerate(examples):
        if not isinstance(dialogue, Dialogue):
            raise TrainingDataError(f"example {i}: expected a Dialogue, got {type(dialogue)}")
        if label not in (0, 1):
            raise TrainingDataError(f"example {i}: expected label 0 or 1, got {label!r}")
        labels.append(int(label))
    counts = {c: labels.count(c) for c in (0, 1)}
    if min(counts.values()) < MIN_PER_CLASS:
        raise TrainingDataError(
            f"expected at least {MIN_PER_CLASS} liked and {MIN_PER_CLASS} disliked examples; "
            f"got {counts[1]} liked, {counts[0]} disliked"
        )
    return labels


def _fit(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_val: np.ndarray,
    y_val: np.ndarray,
    cfg: TrainConfig,
    progress: bool,
) -> tuple[Any, Any, Any, int, np.ndarray]:
    """Train the MLP; returns (net, mean, std, best epoch, validation logits of the best net)."""
    import torch
    from tqdm.auto import trange

    torch.manual_seed(cfg.seed)
    xt = torch.from_numpy(x_train)
    mean = xt.mean(0)
    std = xt.std(0)
    # A feature constant in training (no recovery turns, no refusals in a team's data) taught
    # the net nothing; a huge scale makes it inert at inference instead of turning the first
    # live non-constant value into an input of a million.
    std = torch.where(std < 1e-6, torch.full_like(std, INERT_SCALE), std)
    xt = (xt - mean) / std
    xv = (torch.from_numpy(x_val) - mean) / std
    yt = torch.from_numpy(y_train.astype("float32"))
    yv = torch.from_numpy(y_val.astype("float32"))

    def class_weights(y: torch.Tensor) -> torch.Tensor:
        # Each class weighs half of the loss whatever its count: disliked turns matter as
        # much as liked ones (the product is judged on recall of both).
        n_pos = y.sum().clamp(min=1.0)
        n_neg = (1 - y).sum().clamp(min=1.0)
        return torch.where(y > 0.5, 0.5 * y.numel() / n_pos, 0.5 * y.numel() / n_neg)

    wt, wv = class_weights(yt), class_weights(yv)
    net = build_mlp(HeadShape(in_dim=xt.shape[1], hidden=cfg.hidden, dropout=cfg.dropout))
    opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loss_fn = torch.nn.functional.binary_cross_entropy_with_logits
    shuffler = torch.Generator().manual_seed(cfg.seed)

    best_loss, best_epoch, stale = float("inf"), 0, 0
    best_state = {k: v.clone() for k, v in net.state_dict().items()}
    bar = trange(1, cfg.epochs + 1, desc="training", unit="epoch", disable=not progress)
    for epoch in bar:
        net.train()
        order = torch.randperm(xt.shape[0], generator=shuffler)
        for start in range(0, order.numel(), cfg.batch_size):
            idx = order[start : start + cfg.batch_size]
            opt.zero_grad()
            loss = loss_fn(net(xt[idx]).squeeze(-1), yt[idx], weight=wt[idx])
            loss.backward()
            opt.step()
        net.eval()
        with torch.inference_mode():
            val_loss = float(loss_fn(net(xv).squeeze(-1), yv, weight=wv))
        bar.set_postfix(val_loss=f"{val_loss:.4f}")
        if val_loss < best_loss - 1e-6:
            best_loss, best_epoch, stale = val_loss, epoch, 0
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
        else:
            stale += 1
            if stale >= cfg.patience:
                break
    bar.close()
    net.load_state_dict(best_state)
    net.eval()
    with torch.inference_mode():
        val_logits = net(xv).squeeze(-1).to(torch.float64).numpy()
    return net, mean, std, best_epoch, val_logits


def train_judge(
    examples: Sequence[tuple[Dialogue, int]],
    out_dir: Path,
    *,
    seed: int = 0,
    val_fraction: float = 0.2,
    epochs: int = 200,
    encoder: E5Encoder | None = None,
    model: str | None = None,
    cache_dir: Path | None = None,
    runtime: Runtime | None = None,
    config: TrainConfig | None = None,
    progress: bool = True,
) -> TrainReport:
    """Train, calibrate and save a head to `out_dir` (replaced atomically).

    `encoder` (already built, loaded or not) wins over `model`; with neither, the bundled
    multilingual-e5-small is used. `config` overrides the hyper-parameters; `seed`,
    `val_fraction` and `epochs` given here win over it.
    """
    import numpy as np

    base = config or TrainConfig()
    cfg = TrainConfig(
        **{**base.__dict__, "seed": seed, "val_fraction": val_fraction, "epochs": epochs}
    )
    labels = _check(examples)
    train_idx, val_idx = stratified_split(labels, cfg.val_fraction, cfg.seed)

    enc = encoder or E5Encoder(model, cache_dir=cache_dir, runtime=runtime)
    enc.load()
    t0 = time.perf_counter()
    features = featurize([d for d, _ in examples], enc, progress=progress)
    embed_seconds = time.perf_counter() - t0

    y = np.asarray(labels, dtype=np.int64)
    t1 = time.perf_counter()
    net, mean, std, best_epoch, val_logits = _fit(
        features[train_idx], y[train_idx], features[val_idx], y[val_idx], cfg, progress
    )
    temperature = fit_temperature(val_logits, y[val_idx])
    p_val = sigmoid(val_logits / temperature)
    threshold = balanced_threshold(p_val, y[val_idx])
    metrics = judge_metrics(p_val, y[val_idx], threshold).as_dict()
    train_seconds = time.perf_counter() - t1

    meta = {
        "scorer": "ux_judge",
        "encoder": {
            "fingerprint": enc.fingerprint,
            "family": "e5s" if enc.model_ref is None else "enc",
            "model": "bundled:multilingual-e5-small"
            if enc.model_ref is None
            else str(enc.model_ref),
            "dim": enc.dim,
            "max_tokens": enc.max_tokens,
        },
        "feature_spec": FEATURE_SPEC,
        "head": {"type": "mlp", "hidden": cfg.hidden, "dropout": cfg.dropout},
        "training": {**cfg.__dict__, "best_epoch": best_epoch},
        "data_sha256": data_fingerprint(examples),
        "n_train": len(train_idx),
        "n_val": len(val_idx),
        "val_metrics": metrics,
        "seed": cfg.seed,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    version = save_head(
        out_dir,
        net,
        mean,
        std,
        {"temperature": temperature, "threshold": threshold},
        meta,
    )
    log.info(
        "trained ux_judge head %s: %d train / %d val, val avg_acc %.3f",
        version[:8],
        len(train_idx),
        len(val_idx),
        metrics["avg_acc"],
    )
    return TrainReport(
        out_dir=out_dir,
        version=version,
        n_train=len(train_idx),
        n_val=len(val_idx),
        best_epoch=best_epoch,
        temperature=temperature,
        threshold=threshold,
        val_metrics=metrics,
        embed_seconds=embed_seconds,
        train_seconds=train_seconds,
    )
