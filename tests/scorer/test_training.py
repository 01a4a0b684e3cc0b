"""Head training: the folds, cross-fitting, input checks, and reproducibility with the real
encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.errors import ScorerError
from scorer.heads import CALIBRATION, META, WEIGHTS
from scorer.training import (
    TrainConfig,
    TrainingDataError,
    _fit,
    _standardisation,
    fit_head,
    stratified_folds,
    train_judge,
)
from scorer.types import Dialogue


def test_folds_are_stratified_complete_and_seeded() -> None:
    labels = [1] * 30 + [0] * 70
    folds = stratified_folds(labels, 5, seed=3)
    assert sorted(set(folds)) == [0, 1, 2, 3, 4]
    for k in range(5):
        members = [i for i, f in enumerate(folds) if f == k]
        assert len(members) == 20 and sum(labels[i] for i in members) == 6
    assert stratified_folds(labels, 5, seed=3) == folds
    assert stratified_folds(labels, 5, seed=4) != folds


def test_one_fold_is_refused() -> None:
    with pytest.raises(TrainingDataError, match="at least 2 folds"):
        stratified_folds([0, 1, 0, 1], 1, seed=0)


def _separable(n: int, seed: int = 0) -> tuple[object, object]:
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    y = (x[:, 0] + 0.3 * rng.normal(size=n) > 0).astype(np.int64)
    return x, y


def test_the_l2_penalty_shrinks_the_weights() -> None:
    import numpy as np
    import torch

    x, y = _separable(200)
    assert isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
    xs = torch.from_numpy(x)
    loose, _ = _fit(xs, y, xs, TrainConfig(l2=0.01))
    tight, _ = _fit(xs, y, xs, TrainConfig(l2=10.0))
    assert float(tight.weight.detach().norm()) < 0.5 * float(loose.weight.detach().norm())


def test_fit_head_cross_fits_one_member_per_fold_and_calibrates_out_of_fold() -> None:
    import numpy as np

    x, y = _separable(200)
    assert isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
    fitted = fit_head(x, y.tolist(), TrainConfig(folds=4))
    assert len(fitted.members) == 4
    assert fitted.temperature > 0 and 0.0 < fitted.threshold < 1.0
    assert fitted.oof_metrics["n_liked"] + fitted.oof_metrics["n_disliked"] == 200
    assert fitted.oof_metrics["auroc"] > 0.9  # out of fold, yet the signal is plain
    p = fitted.probabilities(x)
    assert p.shape == (200,) and ((p > 0) & (p < 1)).all()
    # the ensemble is the mean logit of its members
    import torch

    xs = (torch.from_numpy(x) - fitted.mean) / fitted.std
    with torch.inference_mode():
        z = torch.stack([m(xs).squeeze(-1) for m in fitted.members]).double().mean(0).numpy()
    assert np.allclose(p, 1 / (1 + np.exp(-z / fitted.temperature)), atol=1e-6)


@pytest.mark.parametrize(
    ("examples", "message"),
    [
        ([(Dialogue("q", "r"), 1)] * 10, "at least"),
        ([(Dialogue("q", "r"), 2)] * 10, "label 0 or 1"),
        ([("not a dialogue", 1)] * 10, "expected a Dialogue"),
    ],
)
def test_bad_examples_are_refused_before_any_model_loads(
    examples: list[tuple[Dialogue, int]], message: str, tmp_path: Path
) -> None:
    with pytest.raises(TrainingDataError, match=message):
        train_judge(examples, tmp_path / "h", encoder=None, progress=False)
    assert issubclass(TrainingDataError, ScorerError)


def test_a_feature_constant_in_training_stays_inert_at_inference() -> None:
    # Column 1 is always 0 in training (like is_recovery on Task-1 data, or refusals in a
    # team's export). A live 1.0 there must not move the logit; column 0 still must.
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    x = np.zeros((64, 2), dtype=np.float32)
    x[:, 0] = rng.normal(size=64)
    y = (x[:, 0] > 0).astype(np.int64)
    mean, std = _standardisation(x)
    xs = (torch.from_numpy(x) - mean) / std
    net, _ = _fit(xs[:48], y[:48], xs[48:], TrainConfig())
    probe = torch.tensor([[0.5, 0.0], [0.5, 1.0], [-0.5, 0.0]])
    with torch.inference_mode():
        logits = net((probe - mean) / std).squeeze(-1)
    assert torch.isfinite(std).all() and std[1] > 1e6
    assert float(logits[0]) == pytest.approx(float(logits[1]), abs=1e-5)
    assert float(logits[0]) != pytest.approx(float(logits[2]), abs=1e-3)


@pytest.mark.models
def test_head_dir_contents(trained_head: Path) -> None:
    assert {p.name for p in trained_head.iterdir()} == {WEIGHTS, CALIBRATION, META}
    meta = json.loads((trained_head / META).read_text())
    assert set(meta["oof_metrics"]) >= {"good_acc", "bad_acc", "avg_acc", "auroc", "ece"}
    assert meta["n_examples"] == 48 and meta["seed"] == 0
    assert meta["head"]["type"] == "linear-ensemble" and meta["training"]["folds"] == 5
    assert meta["encoder"]["family"] == "e5s" and len(meta["encoder"]["fingerprint"]) == 64
    calib = json.loads((trained_head / CALIBRATION).read_text())
    assert calib["temperature"] > 0 and 0.0 <= calib["threshold"] <= 1.0


@pytest.mark.models
def test_same_data_and_seed_give_the_same_bytes(
    e5_encoder: object, labelled_dialogues: list[tuple[Dialogue, int]], tmp_path: Path
) -> None:
    from scorer.encoder import E5Encoder

    assert isinstance(e5_encoder, E5Encoder)
    runs = {}
    for name, seed in (("a", 7), ("b", 7), ("c", 8)):
        report = train_judge(
            labelled_dialogues,
            tmp_path / name,
            seed=seed,
            encoder=e5_encoder,
            progress=False,
        )
        runs[name] = report
    same = [(tmp_path / n / WEIGHTS).read_bytes() for n in ("a", "b")]
    assert same[0] == same[1]
    assert runs["a"].version == runs["b"].version != runs["c"].version


@pytest.mark.models
def test_training_learns_the_obvious_signal(
    e5_encoder: object, labelled_dialogues: list[tuple[Dialogue, int]], tmp_path: Path
) -> None:
    from scorer.encoder import E5Encoder

    assert isinstance(e5_encoder, E5Encoder)
    report = train_judge(labelled_dialogues, tmp_path / "h", encoder=e5_encoder, progress=False)
    assert report.fitted.oof_metrics["auroc"] >= 0.8
