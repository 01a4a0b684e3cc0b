"""The GRM's verdict head: the fit, its calibration out of group, and its file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from scorer.verdict_head import (
    VerdictHeadError,
    fit_calibrated_head,
    fit_verdict_head,
    load_verdict_head,
    save_verdict_head,
)


def _states(n: int = 400, dim: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, dim)) * np.r_[50.0, np.ones(dim - 1)]  # one huge dimension
    y = (x[:, 1] - x[:, 2] + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    return x.astype(np.float32), y


def test_the_head_learns_what_the_base_margin_misses() -> None:
    from benchmark.metrics import auroc

    x, y = _states()
    base = -0.1 * x[:, 1]  # a base model that ranks the wrong way round
    head = fit_verdict_head(x[:300], y[:300], base[:300].astype(np.float64), l2=0.1)
    margins = head.margins(x[300:], base[300:])
    assert auroc(y[300:], base[300:]) < 0.3 and auroc(y[300:], margins) > 0.9


def test_more_l2_stays_closer_to_the_base_model() -> None:
    x, y = _states()
    base = np.zeros(len(y))
    loose = fit_verdict_head(x, y, base, l2=0.01)
    tight = fit_verdict_head(x, y, base, l2=10.0)
    assert np.linalg.norm(tight.direction) < np.linalg.norm(loose.direction)


def test_calibration_comes_from_groups_left_out() -> None:
    x, y = _states()
    groups = [f"g{i % 4}" for i in range(len(y))]
    fitted = fit_calibrated_head(x, y, np.zeros(len(y)), groups, l2=0.1)
    assert fitted.oof_margins.shape == (len(y),)
    p = np.array([fitted.threshold.p_good(m) for m in fitted.oof_margins])
    verdict = p >= 0.5
    balanced = (verdict[y == 1].mean() + (~verdict[y == 0]).mean()) / 2
    assert balanced > 0.85
    with pytest.raises(VerdictHeadError, match="at least 2 groups"):
        fit_calibrated_head(x, y, np.zeros(len(y)), ["one"] * len(y), l2=0.1)


def test_a_head_round_trips_and_refuses_another_model(tmp_path: Path) -> None:
    x, y = _states(dim=8)
    fitted = fit_calibrated_head(x, y, np.zeros(len(y)), ["a", "b"] * 200, l2=0.1)
    version = save_verdict_head(tmp_path / "h", fitted.head, fitted.threshold, {"model_id": "m@1"})
    loaded = load_verdict_head(tmp_path / "h", hidden=8, model_id="m@1")
    assert loaded.version == version == fitted.head.version
    assert np.allclose(loaded.direction, fitted.head.direction)
    assert (tmp_path / "h" / "threshold.json").is_file()
    with pytest.raises(VerdictHeadError, match="hidden size 8"):
        load_verdict_head(tmp_path / "h", hidden=16, model_id="m@1")
    with pytest.raises(VerdictHeadError, match="trained on m@1"):
        load_verdict_head(tmp_path / "h", hidden=8, model_id="other@2")
    with pytest.raises(VerdictHeadError, match="expected"):
        load_verdict_head(tmp_path / "nowhere", hidden=8, model_id="m@1")
