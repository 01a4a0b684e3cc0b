"""The one place that decides threads, dtype and batch shapes for local models."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@cache
def cpu_has_bf16() -> bool:
    """True when the CPU computes bf16 natively (AVX512-BF16 or AMX); else bf16 is slower."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as f:
            flags = f.read()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


@dataclass(frozen=True, slots=True)
class Runtime:
    """How local models run. `dtype="auto"` picks bf16 where the CPU has it, else fp32."""

    threads: int = 0  # 0 = all cores this process may use
    dtype: str = "auto"  # auto | bfloat16 | float32
    max_batch: int = 32

    def torch_threads(self) -> int:
        return self.threads or len(os.sched_getaffinity(0))

    def torch_dtype(self) -> torch.dtype:
        import torch

        if self.dtype == "auto":
            return torch.bfloat16 if cpu_has_bf16() else torch.float32
        try:
            return {"bfloat16": torch.bfloat16, "float32": torch.float32}[self.dtype]
        except KeyError:
            raise ValueError(
                f"dtype must be auto, bfloat16 or float32; got {self.dtype!r}"
            ) from None

    def apply(self) -> None:
        """Set torch's thread pool; call once before loading a model."""
        import torch

        torch.set_num_threads(self.torch_threads())


@contextmanager
def one_thread() -> Iterator[None]:
    """Run tiny models (the UX-Judge head's MLPs) on one thread, then restore the pool.

    A 24 x 128 matmul gains nothing from a second thread, and the threads' synchronisation
    collapses when another process holds a core: one epoch of a head on the 2,600 seed
    records took 0.5-1.2 s on 2 threads beside one busy process, 0.08 s on one thread.
    """
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def length_buckets(lengths: list[int], max_batch: int) -> list[list[int]]:
    """Group item indices into batches of similar length, so padding wastes little compute.

    Returns lists of indices into `lengths`; every index appears exactly once.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[i : i + max_batch] for i in range(0, len(order), max_batch)]
