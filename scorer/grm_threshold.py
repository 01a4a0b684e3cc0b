"""The GRM's decision threshold: fit it on labelled data, store it, load it.

A small judge model's raw verdict leans to one side, so `score >= 0.5` is a poor cut. Its
verdict margin (log P(good) - log P(bad)) still ranks replies well, so we pick the margin
that maximises balanced accuracy (the mean of recall on liked and on disliked replies,
UXBench's Avg-Acc), and fit a slope so that sigmoid(slope * (margin - cut)) is a calibrated
probability whose 0.5 falls exactly on the cut. The fitting itself is scorer.calibration's,
shared with the other scorers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scorer.errors import ScorerError

DEFAULT_THRESHOLD_PATH = Path(__file__).parent / "thresholds" / "grm_default.json"


class ThresholdError(ScorerError):
    """A threshold file or calibration input that cannot be used."""


@dataclass(frozen=True, slots=True)
class Threshold:
    """A cut on the verdict margin; `score` is the same cut on P(good)/(P(good)+P(bad))."""

    margin: float
    slope: float = 1.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def score(self) -> float:
        return sigmoid(self.margin)

    @classmethod
    def from_score(cls, score: float) -> Threshold:
        if not 0.0 < score < 1.0:
            raise ThresholdError(f"a GRM threshold must lie strictly between 0 and 1; got {score}")
        return cls(math.log(score / (1.0 - score)))

    def p_good(self, margin: float) -> float:
        return sigmoid(self.slope * (margin - self.margin))


def sigmoid(x: float) -> float:
    """Numerically stable logistic function."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def calibrate(
    margins: Sequence[float], labels: Sequence[int], meta: dict[str, Any] | None = None
) -> Threshold:
    """Fit the cut (balanced accuracy) and the slope (log-loss) on labelled margins.

    Unparseable verdicts have no margin; leave them out (and count them separately).
    """
    from scorer.calibration import CalibrationError, auroc, balanced_threshold, fit_temperature

    try:
        raw = [sigmoid(m) for m in margins]
        cut = _logit(balanced_threshold(raw, labels))
        temperature = fit_temperature([m - cut for m in margins], labels)
        ranking = auroc(margins, labels)
    except CalibrationError as exc:
        raise ThresholdError(f"cannot calibrate the GRM threshold: {exc}") from None
    threshold = Threshold(cut, 1.0 / temperature, dict(meta or {}))
    threshold.meta.update(
        n=len(labels),
        n_liked=int(sum(labels)),
        train_balanced_accuracy=round(balanced_accuracy(margins, labels, cut), 4),
        train_auroc=round(ranking, 4),
    )
    return threshold


def balanced_accuracy(margins: Sequence[float], labels: Sequence[int], cut: float) -> float:
    """UXBench Avg-Acc of the verdict `margin >= cut`."""
    pos = [m >= cut for m, y in zip(margins, labels, strict=True) if y == 1]
    neg = [m < cut for m, y in zip(margins, labels, strict=True) if y == 0]
    return (sum(pos) / len(pos) + sum(neg) / len(neg)) / 2


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1.0 - p))


def save_threshold(threshold: Threshold, path: Path = DEFAULT_THRESHOLD_PATH) -> None:
    body = {"score": threshold.score, **asdict(threshold)}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", "utf-8")
    tmp.replace(path)


def load_threshold(path: Path = DEFAULT_THRESHOLD_PATH) -> Threshold:
    """Read a threshold file; a missing default means the uncalibrated 0.5 cut."""
    try:
        body = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        if path == DEFAULT_THRESHOLD_PATH:
            return Threshold(0.0, 1.0, {"source": "uncalibrated"})
        raise ThresholdError(f"threshold file {path} does not exist") from None
    except ValueError as exc:
        raise ThresholdError(f"threshold file {path} is not JSON: {exc}") from None
    try:
        return Threshold(float(body["margin"]), float(body.get("slope", 1.0)), body.get("meta", {}))
    except (KeyError, TypeError, ValueError):
        raise ThresholdError(f"threshold file {path} needs a numeric 'margin'") from None
