"""Train a UX-Judge head on labelled dialogues (1 = liked, 0 = disliked) and calibrate it.

The encoder stays frozen: every dialogue is embedded once, then linear members train on
the cached features in seconds. Training is cross-fitted over stratified folds: one
L2-penalised, class-balanced logistic regression per fold, trained on the other folds;
the head is their ensemble (mean logit, itself linear). Every example thus gets an
out-of-fold logit from a member that never saw it, and the temperature and the
balanced-accuracy threshold are fitted on all of those. The out-of-fold metrics are
still optimistic for new traffic (the folds share writers and topics); leave-one-writer-
out (`uxmon crossval`) is the figure to trust.
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
from scorer.heads import build_member, mean_logit, save_head
from scorer.runtime import Runtime, one_thread
from scorer.types import Dialogue
from scorer.ux_judge import FEATURE_SPEC, featurize

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

INERT_SCALE = 1e12  # standardisation scale of a feature that was constant in training


class TrainingDataError(ScorerError, ValueError):
    """Examples that cannot train a head."""


@dataclass(frozen=True)
class TrainConfig:
    seed: int = 0
    folds: int = 5  # members of the ensemble; each class needs at least this many examples
    # L2 penalty on the standardised weights, as a share of the mean loss. Chosen by
    # leave-one-writer-out on the corpus (docs/validation.md): 0.1-10 all within 0.01 AUROC.
    l2: float = 1.0
    max_iter: int = 300  # L-BFGS iterations per member


def stratified_folds(labels: Sequence[int], folds: int, seed: int) -> list[int]:
    """The fold (0 .. folds-1) of each example: each class dealt round-robin over the folds
    after a seeded shuffle, so every fold holds both classes in the same proportion."""
    import numpy as np

    if folds < 2:
        raise TrainingDataError(f"expected at least 2 folds; got {folds}")
    y = np.asarray(labels)
    fold_of = np.empty(y.size, dtype=np.int64)
    rng = np.random.default_rng(seed)
    for cls in (0, 1):
        members = np.flatnonzero(y == cls)
        rng.shuffle(members)
        fold_of[members] = np.arange(members.size) % folds
    return [int(f) for f in fold_of]


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


def _check(examples: Sequence[tuple[Dialogue, int]], folds: int) -> list[int]:
    labels = []
    for i, (dialogue, label) in enumerate(examples):
        if not isinstance(dialogue, Dialogue):
            raise TrainingDataError(f"example {i}: expected a Dialogue, got {type(dialogue)}")
        if label not in (0, 1):
            raise TrainingDataError(f"example {i}: expected label 0 or 1, got {label!r}")
        labels.append(int(label))
    counts = {c: labels.count(c) for c in (0, 1)}
    if min(counts.values()) < folds:
        raise TrainingDataError(
            f"expected at least {folds} liked and {folds} disliked examples ({folds} folds); "
            f"got {counts[1]} liked, {counts[0]} disliked"
        )
    return labels


def _standardisation(features: np.ndarray) -> tuple[Any, Any]:
    """Per-feature (mean, std) over all examples, shared by every member of the ensemble."""
    import torch

    x = torch.from_numpy(features)
    mean, std = x.mean(0), x.std(0)
    # A feature constant in training (no recovery turns, no refusals in a team's data) taught
    # the net nothing; a huge scale makes it inert at inference instead of turning the first
    # live non-constant value into an input of a million.
    return mean, torch.where(std < 1e-6, torch.full_like(std, INERT_SCALE), std)


def _fit(xt: Any, y_train: np.ndarray, xv: Any, cfg: TrainConfig) -> tuple[Any, np.ndarray]:
    """One class-balanced, L2-penalised logistic regression on standardised rows `xt`;
    returns (member, its logits on `xv`)."""
    import torch

    torch.manual_seed(cfg.seed)
    xt64 = xt.to(torch.float64)
    yt = torch.from_numpy(y_train.astype("float64"))
    # Each class weighs half of the loss whatever its count: disliked turns matter as much
    # as liked ones (the product is judged on recall of both).
    n_pos, n_neg = yt.sum().clamp(min=1.0), (1 - yt).sum().clamp(min=1.0)
    weight = torch.where(yt > 0.5, 0.5 * yt.numel() / n_pos, 0.5 * yt.numel() / n_neg)
    w = torch.zeros(xt.shape[1], dtype=torch.float64, requires_grad=True)
    b = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=cfg.max_iter, line_search_fn="strong_wolfe")
    loss_fn = torch.nn.functional.binary_cross_entropy_with_logits

    def closure() -> torch.Tensor:
        opt.zero_grad()
        loss = loss_fn(xt64 @ w + b, yt, weight=weight) + cfg.l2 * w.pow(2).sum() / 2
        loss.backward()
        return loss

    opt.step(closure)
    member = build_member(xt.shape[1])
    with torch.no_grad():
        member.weight.copy_(w.detach().to(member.weight.dtype).unsqueeze(0))
        member.bias.copy_(b.detach().to(member.bias.dtype))
    member.eval()
    with torch.inference_mode():
        logits = member(xv).squeeze(-1).to(torch.float64).numpy()
    return member, logits


@dataclass(frozen=True)
class FittedHead:
    """What `fit_head` learns: the ensemble, its standardisation and its calibration."""

    members: list[Any]  # torch linear members, one per fold
    mean: Any
    std: Any
    temperature: float
    threshold: float
    oof_metrics: dict[str, float | int]  # calibrated out-of-fold predictions, all examples

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """Calibrated P(liked) for feature rows, as the saved head computes it."""
        import torch

        x = (torch.from_numpy(features) - self.mean) / self.std
        with torch.inference_mode():
            z = mean_logit(self.members, x)
        return sigmoid(z.to(torch.float64).numpy() / self.temperature)


@dataclass(frozen=True)
class TrainReport:
    out_dir: Path
    version: str
    n_examples: int
    fitted: FittedHead
    embed_seconds: float
    train_seconds: float


def fit_head(
    features: np.ndarray,
    labels: Sequence[int],
    cfg: TrainConfig,
    progress: bool = False,
    groups: Sequence[str] | None = None,
) -> FittedHead:
    """Cross-fit linear members on feature rows and calibrate their ensemble out of fold.

    The folds are `cfg.folds` stratified ones, or with `groups` (the records' writers) one
    fold per group: the calibration then comes from writers each member never saw, which
    is how the head meets new traffic.
    """
    import numpy as np
    import torch
    from tqdm.auto import trange

    y = np.asarray(labels, dtype=np.int64)
    if groups is None:
        fold_of = np.asarray(stratified_folds(labels, cfg.folds, cfg.seed))
    else:
        names = sorted(set(groups))
        if len(names) < 2:
            raise TrainingDataError(f"expected at least 2 groups; got {len(names)}")
        fold_of = np.asarray([names.index(g) for g in groups])
    n_folds = int(fold_of.max()) + 1
    mean, std = _standardisation(features)
    x = (torch.from_numpy(features) - mean) / std
    members = []
    oof_logits = np.empty(y.size, dtype=np.float64)
    with one_thread():
        for k in trange(n_folds, desc="fitting folds", disable=not progress):
            train, held = fold_of != k, fold_of == k
            member, held_logits = _fit(
                x[torch.from_numpy(train)], y[train], x[torch.from_numpy(held)], cfg
            )
            members.append(member)
            oof_logits[held] = held_logits
    temperature = fit_temperature(oof_logits, y)
    p_oof = sigmoid(oof_logits / temperature)
    threshold = balanced_threshold(p_oof, y)
    return FittedHead(
        members=members,
        mean=mean,
        std=std,
        temperature=temperature,
        threshold=threshold,
        oof_metrics=judge_metrics(p_oof, y, threshold).as_dict(),
    )


def train_judge(
    examples: Sequence[tuple[Dialogue, int]],
    out_dir: Path,
    *,
    seed: int = 0,
    folds: int = 5,
    l2: float | None = None,
    encoder: E5Encoder | None = None,
    model: str | None = None,
    cache_dir: Path | None = None,
    runtime: Runtime | None = None,
    config: TrainConfig | None = None,
    progress: bool = True,
    groups: Sequence[str] | None = None,
) -> TrainReport:
    """Train, calibrate and save a head to `out_dir` (replaced atomically).

    `encoder` (already built, loaded or not) wins over `model`; with neither, the bundled
    multilingual-e5-small is used. `config` overrides the hyper-parameters; `seed`,
    `folds` and `l2` given here win over it. `groups` (each example's writer or source)
    makes the folds one group each (see `fit_head`).
    """
    base = config or TrainConfig()
    chosen = {"seed": seed, "folds": folds, **({"l2": l2} if l2 is not None else {})}
    cfg = TrainConfig(**{**base.__dict__, **chosen})
    labels = _check(examples, cfg.folds)

    enc = encoder or E5Encoder(model, cache_dir=cache_dir, runtime=runtime)
    enc.load()
    t0 = time.perf_counter()
    features = featurize([d for d, _ in examples], enc, progress=progress)
    embed_seconds = time.perf_counter() - t0

    t1 = time.perf_counter()
    fitted = fit_head(features, labels, cfg, progress, groups=groups)
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
        "head": {"type": "linear-ensemble"},
        "training": dict(cfg.__dict__),
        "data_sha256": data_fingerprint(examples),
        "groups": sorted(set(groups)) if groups is not None else None,
        "n_examples": len(examples),
        "oof_metrics": fitted.oof_metrics,
        "seed": cfg.seed,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    version = save_head(
        out_dir,
        fitted.members,
        fitted.mean,
        fitted.std,
        {"temperature": fitted.temperature, "threshold": fitted.threshold},
        meta,
    )
    log.info(
        "trained ux_judge head %s: %d examples, %d folds, out-of-fold avg_acc %.3f",
        version[:8],
        len(examples),
        cfg.folds,
        fitted.oof_metrics["avg_acc"],
    )
    return TrainReport(
        out_dir=out_dir,
        version=version,
        n_examples=len(examples),
        fitted=fitted,
        embed_seconds=embed_seconds,
        train_seconds=train_seconds,
    )
