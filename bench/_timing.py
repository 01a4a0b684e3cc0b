"""Timing on a shared 2-core machine: best-of-N wall time, and the matmul peak measured in
the same run, so that efficiency is a ratio of two numbers taken under the same load.

STACK.md states the peaks measured when the project started (on an AMD Zen 4 host). The
machine this runs on today may differ (an Intel Xeon with AMX computes bf16 matmuls far
faster), so every bench reports efficiency against both the stated and the measured peak.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

STACK_BF16_PEAK_GFLOPS = 400.0
STACK_FP32_PEAK_GFLOPS = 156.0


def timed(fn: Callable[[], Any], reps: int) -> float:
    """Best wall time of `reps` calls (the machine is shared; the minimum is the signal)."""
    best = float("inf")
    for _ in range(max(reps, 1)):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def measure_peak(
    threads: int,
    dtype: str = "bfloat16",
    rows: int = 8 * 256,
    in_features: int = 896,
    out_features: int = 4864,
    reps: int = 20,
) -> float:
    """Best GFLOP/s of one `F.linear` of shape [rows, in] x [in, out] in `dtype`.

    The default shape is the GRM's largest linear on a batch of 8 x 256 tokens; the
    encoder's benches pass its own FFN shape. `F.linear` is what the models call, and on
    AMX it beats a square `torch.mm` of similar size, so it is the honest upper bound.
    """
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    kind = {"bfloat16": torch.bfloat16, "float32": torch.float32}[dtype]
    x = torch.randn(rows, in_features, dtype=kind)
    w = torch.randn(out_features, in_features, dtype=kind)
    with torch.inference_mode():
        for _ in range(3):
            F.linear(x, w)
        seconds = timed(lambda: F.linear(x, w), reps)
    return 2 * rows * in_features * out_features / seconds / 1e9


def load_average() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]
