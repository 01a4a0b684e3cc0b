"""UX-Judge heads: the small trained artefact that sits on the frozen encoder.

A head directory holds

    head.safetensors   the members' weights plus the feature standardisation (mean, std)
    calibration.json   {"temperature": T, "threshold": t}
    meta.json          version, encoder fingerprint, feature spec, data sizes, metrics

A head is an ensemble: `uxmon judge train` fits one linear model (a logistic regression on
the standardised features) per cross-validation fold, and the head's logit is their mean.

`ux_judge_default/` next to this file is the head uxmon ships. A head's version is a hash
of its weights and calibration, so any retrain or recalibration changes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorer.errors import ModelMissingError, ScorerError

if TYPE_CHECKING:
    import torch

DEFAULT_HEAD = Path(__file__).resolve().parent / "ux_judge_default"
WEIGHTS = "head.safetensors"
CALIBRATION = "calibration.json"
META = "meta.json"


class HeadFormatError(ScorerError):
    """A head directory that is incomplete or inconsistent."""


def build_member(in_dim: int) -> torch.nn.Linear:
    """One member: a linear logit for "the user liked this reply"."""
    from torch import nn

    return nn.Linear(in_dim, 1)


def mean_logit(members: Sequence[torch.nn.Module], x: torch.Tensor) -> torch.Tensor:
    """The ensemble's logit for standardised feature rows: the mean of its members'."""
    import torch

    return torch.stack([net(x).squeeze(-1) for net in members]).mean(0)


def _member_prefix(i: int) -> str:
    return f"member{i}."


@dataclass(frozen=True)
class Head:
    """A loaded head, ready to turn feature rows into calibrated probabilities."""

    members: tuple[torch.nn.Module, ...]
    mean: torch.Tensor
    std: torch.Tensor
    temperature: float
    threshold: float
    meta: dict[str, Any]
    version: str

    def logits(self, features: torch.Tensor) -> torch.Tensor:
        """Raw (uncalibrated) logits, one per feature row: the mean of the members'."""
        return mean_logit(self.members, (features - self.mean) / self.std)


def _canonical_json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def head_version(weights: bytes, calibration: bytes) -> str:
    """sha256 of what decides a head's output: its weight file and its calibration."""
    return hashlib.sha256(weights + b"\0" + calibration).hexdigest()


def read_meta(head_dir: Path) -> dict[str, Any]:
    """The head's meta.json (cheap; no torch), raising ModelMissingError if absent."""
    path = head_dir / META
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelMissingError(
            f"no UX-Judge head at {head_dir}: expected {META}, {WEIGHTS}, {CALIBRATION} "
            "(train one with `uxmon judge train`)"
        ) from None
    except ValueError as exc:
        raise HeadFormatError(f"{path}: expected JSON ({exc})") from None
    if not isinstance(meta, dict) or "version" not in meta or "encoder" not in meta:
        raise HeadFormatError(f"{path}: expected an object with 'version' and 'encoder'")
    return meta


def save_head(
    out_dir: Path,
    members: Sequence[torch.nn.Module],
    mean: torch.Tensor,
    std: torch.Tensor,
    calibration: dict[str, float],
    meta: dict[str, Any],
) -> str:
    """Write a head directory atomically (temp dir + rename); returns the head version."""
    from safetensors.torch import save

    if not members:
        raise HeadFormatError("expected at least one member to save; got none")
    tensors = {
        f"{_member_prefix(i)}{k}": v.detach().contiguous()
        for i, net in enumerate(members)
        for k, v in net.state_dict().items()
    }
    dtype = tensors[f"{_member_prefix(0)}weight"].dtype
    tensors["feature_mean"] = mean.detach().to(dtype=dtype).contiguous()
    tensors["feature_std"] = std.detach().to(dtype=dtype).contiguous()
    weights = save(tensors, metadata={"format": "pt"})
    calib = _canonical_json(calibration)
    version = head_version(weights, calib)
    out_dir = out_dir.resolve()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        fresh = staging / "head"
        fresh.mkdir()
        (fresh / WEIGHTS).write_bytes(weights)
        (fresh / CALIBRATION).write_bytes(calib)
        (fresh / META).write_bytes(_canonical_json({**meta, "version": version}))
        if out_dir.exists():
            os.replace(out_dir, staging / "previous")
        os.replace(fresh, out_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return version


def _prefixes(tensors: Mapping[str, Any]) -> list[str]:
    """The key prefix of each member stored in a weight file."""
    count = 0
    while f"{_member_prefix(count)}weight" in tensors:
        count += 1
    if not count:
        raise ValueError("no member weights")
    return [_member_prefix(i) for i in range(count)]


def _member(tensors: Mapping[str, torch.Tensor], prefix: str) -> torch.nn.Module:
    state = {k[len(prefix) :]: v for k, v in tensors.items() if k.startswith(prefix)}
    if set(state) != {"weight", "bias"} or state["weight"].shape[0] != 1:
        raise ValueError(f"member {prefix} is not a linear logit")
    net = build_member(int(state["weight"].shape[1]))
    net.load_state_dict(state)
    return net.eval()


def load_head(head_dir: Path) -> Head:
    """Load a head directory written by `save_head`, checking it is complete and unaltered."""
    import torch
    from safetensors.torch import load

    meta = read_meta(head_dir)
    try:
        weights = (head_dir / WEIGHTS).read_bytes()
        calib_bytes = (head_dir / CALIBRATION).read_bytes()
    except FileNotFoundError as exc:
        raise HeadFormatError(f"{head_dir}: expected {exc.filename}; it is missing") from None
    version = head_version(weights, calib_bytes)
    if version != meta["version"]:
        raise HeadFormatError(
            f"{head_dir}: meta.json names version {str(meta['version'])[:12]} but the weights "
            f"and calibration hash to {version[:12]}; the directory was altered"
        )
    calib = json.loads(calib_bytes)
    tensors = load(weights)
    try:
        nets = tuple(_member(tensors, prefix) for prefix in _prefixes(tensors))
        mean, std = tensors["feature_mean"], tensors["feature_std"]
    except (KeyError, RuntimeError, ValueError) as exc:
        raise HeadFormatError(f"{head_dir}/{WEIGHTS}: not a UX-Judge MLP head ({exc})") from None
    return Head(
        members=nets,
        mean=mean.to(torch.float32),
        std=std.to(torch.float32),
        temperature=float(calib["temperature"]),
        threshold=float(calib["threshold"]),
        meta=meta,
        version=version,
    )
