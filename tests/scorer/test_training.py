"""Head training: the split, input checks, and reproducibility with the real encoder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scorer.errors import ScorerError
from scorer.heads import CALIBRATION, META, WEIGHTS
from scorer.training import TrainConfig, TrainingDataError, _fit, stratified_split, train_judge
from scorer.types import Dialogue


def test_split_is_stratified_disjoint_and_seeded() -> None:
    labels = [1] * 30 + [0] * 70
    train, val = stratified_split(labels, 0.2, seed=3)
    assert sorted(train + val) == list(range(100))
    assert sum(labels[i] for i in val) == 6 and len(val) == 20
    assert stratified_split(labels, 0.2, seed=3) == (train, val)
    assert stratified_split(labels, 0.2, seed=4) != (train, val)


def test_split_keeps_both_classes_on_both_sides() -> None:
    train, val = stratified_split([1, 1, 0, 0], 0.01, seed=0)
    assert {0, 1} <= {[1, 1, 0, 0][i] for i in val}
    assert {0, 1} <= {[1, 1, 0, 0][i] for i in train}


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
    net, mean, std, _, _ = _fit(x[:48], y[:48], x[48:], y[48:], TrainConfig(epochs=5), False)
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
    assert set(meta["val_metrics"]) >= {"good_acc", "bad_acc", "avg_acc", "auroc", "ece"}
    assert meta["n_train"] + meta["n_val"] == 48 and meta["seed"] == 0
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
            epochs=5,
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
    report = train_judge(
        labelled_dialogues, tmp_path / "h", encoder=e5_encoder, epochs=40, progress=False
    )
    assert report.val_metrics["auroc"] >= 0.8
