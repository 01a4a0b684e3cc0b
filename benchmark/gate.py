"""Gate a scorer update: is the candidate's report worse than the baseline's?

The rule, precisely:

1. Pairing. Items are paired on cid. A pair counts when its outcome (see
   `benchmark.result.ItemResult`) is defined in both reports; for task 2 that means a
   reply was supplied in both. Items only in one report, or without an outcome in
   either, are dropped and counted. No pairs at all is an error, and so is a cid whose
   label differs between the reports (they did not score the same data).
2. Effect. H is the task's headline recomputed on the pairs: Avg-Acc for task 1 (the mean,
   over the two label classes, of the share judged correctly), Good% or Recovery Rate for
   tasks 2 and 3 (the share of successes). Δ = H(candidate) − H(baseline).
3. Significance. Exact two-sided McNemar test on the paired outcomes: with
   b = pairs the baseline got right and the candidate wrong, c = the reverse,
   p = P(X ≤ min(b, c)) · 2 (capped at 1) for X ~ Binomial(b + c, ½); p = 1 without
   discordant pairs. scipy's `binomtest` computes it when scipy is installed, an exact
   sum of binomial coefficients otherwise. For task 1 the test is on overall accuracy,
   which equals Avg-Acc's comparison when the classes are balanced, as in UXBench.
4. Uncertainty. A paired percentile bootstrap interval of Δ at level 1 − alpha: pairs
   are resampled with replacement (within each label class for task 1, so both classes
   keep their sizes), `n_resamples` times with a fixed seed, so the gate is repeatable.
5. Verdict. FAIL if and only if all three hold:
       Δ < −tolerance                    the candidate is worse by more than the tolerance,
       p < alpha                         the difference is not chance,
       CI upper bound < −tolerance       even the interval's best case is a drop beyond
                                         the tolerance.
   Otherwise PASS: better, equal, worse within tolerance, or worse but not shown to be.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rich.table import Table
from rich.text import Text

from benchmark.errors import BenchmarkError
from benchmark.metrics import Interval
from benchmark.result import Report
from benchmark.tasks import get_task

N_RESAMPLES = 2000
SEED = 0
_CHUNK = 250  # resamples drawn at once: bounds memory at _CHUNK × largest class


class GateError(BenchmarkError):
    """Reports that cannot be compared: different tasks, no common items, bad options."""


@dataclass(frozen=True, slots=True)
class GateResult:
    task: str
    headline: str
    baseline_scorer: str  # name@version
    candidate_scorer: str
    n_paired: int
    dropped: dict[str, int]  # baseline_only, candidate_only, no_outcome
    baseline: float  # headline on the pairs
    candidate: float
    delta: float  # candidate − baseline
    ci: Interval  # paired bootstrap interval of delta at level 1 − alpha
    b: int  # pairs the baseline got right and the candidate wrong
    c: int  # pairs the candidate got right and the baseline wrong
    p_value: float  # exact two-sided McNemar
    tolerance: float
    alpha: float
    passed: bool
    reason: str
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def compare(
    baseline: Report | Mapping[str, Any],
    candidate: Report | Mapping[str, Any],
    tolerance: float = 0.02,
    alpha: float = 0.05,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> GateResult:
    """Apply the gate (module docstring) to two reports or their parsed JSON."""
    base = baseline if isinstance(baseline, Report) else Report.from_dict(baseline)
    cand = candidate if isinstance(candidate, Report) else Report.from_dict(candidate)
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise GateError(f"expected a tolerance >= 0, got {tolerance!r}")
    if not 0 < alpha < 1:
        raise GateError(f"expected alpha in (0, 1), got {alpha!r}")
    if n_resamples < 1:
        raise GateError(f"expected at least one bootstrap resample, got {n_resamples}")
    if base.task != cand.task:
        raise GateError(
            f"expected reports of the same task, got {base.task!r} (baseline) and "
            f"{cand.task!r} (candidate)"
        )
    task = get_task(base.task)
    warnings = _warnings(base, cand)
    labels, b_out, c_out, dropped = _pairs(base, cand)
    strata = _strata(labels) if task.balanced else [np.arange(len(labels))]
    if task.balanced and len(strata) < 2:
        warnings.append("the pairs hold one label class only: Avg-Acc is that class's recall")
    b_value, c_value = _headline(b_out, strata), _headline(c_out, strata)
    delta = c_value - b_value
    ci = paired_bootstrap(b_out, c_out, strata, 1 - alpha, n_resamples, seed)
    worse_only = int(np.sum((b_out == 1) & (c_out == 0)))
    better_only = int(np.sum((b_out == 0) & (c_out == 1)))
    p = mcnemar_exact(worse_only, better_only)
    passed, reason = _verdict(delta, p, ci.high, tolerance, alpha)
    return GateResult(
        task=task.name,
        headline=task.headline,
        baseline_scorer=f"{base.scorer}@{base.scorer_version}",
        candidate_scorer=f"{cand.scorer}@{cand.scorer_version}",
        n_paired=len(labels),
        dropped=dropped,
        baseline=b_value,
        candidate=c_value,
        delta=delta,
        ci=ci,
        b=worse_only,
        c=better_only,
        p_value=p,
        tolerance=tolerance,
        alpha=alpha,
        passed=passed,
        reason=reason,
        warnings=warnings,
    )


def _warnings(base: Report, cand: Report) -> list[str]:
    out = []
    if base.task_version != cand.task_version:
        out.append(
            f"task versions differ ({base.task_version} vs {cand.task_version}): "
            "metrics may not mean the same"
        )
    if base.source.items_sha256 != cand.source.items_sha256:
        out.append("the reports' data fingerprints differ: only the common cids are compared")
    return out


def _pairs(
    base: Report, cand: Report
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], dict[str, int]]:
    b_items = {i.cid: i for i in base.items}
    c_items = {i.cid: i for i in cand.items}
    common = sorted(b_items.keys() & c_items.keys())
    labels, b_out, c_out = [], [], []
    no_outcome = 0
    for cid in common:
        bi, ci = b_items[cid], c_items[cid]
        if bi.label != ci.label:
            raise GateError(
                f"cid {cid!r} has label {bi.label} in the baseline and {ci.label} in the "
                "candidate: expected reports on the same data"
            )
        if bi.outcome is None or ci.outcome is None:
            no_outcome += 1
            continue
        labels.append(-1 if bi.label is None else bi.label)
        b_out.append(bi.outcome)
        c_out.append(ci.outcome)
    dropped = {
        "baseline_only": len(b_items.keys() - c_items.keys()),
        "candidate_only": len(c_items.keys() - b_items.keys()),
        "no_outcome": no_outcome,
    }
    if not labels:
        raise GateError(
            f"expected items common to both reports with an outcome in each, got none "
            f"(baseline {len(b_items)}, candidate {len(c_items)}, common {len(common)}, "
            f"without an outcome {no_outcome})"
        )
    as_array = np.asarray
    return (
        as_array(labels, dtype=np.int64),
        as_array(b_out, dtype=np.int64),
        as_array(c_out, dtype=np.int64),
        dropped,
    )


def _strata(labels: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """Indices per label class, liked first; absent classes are left out."""
    groups = [np.flatnonzero(labels == cls) for cls in (1, 0)]
    return [g for g in groups if len(g)]


def _headline(outcomes: NDArray[np.int64], strata: Sequence[NDArray[np.int64]]) -> float:
    return float(np.mean([outcomes[g].mean() for g in strata]))


def paired_bootstrap(
    baseline: NDArray[np.int64],
    candidate: NDArray[np.int64],
    strata: Sequence[NDArray[np.int64]],
    level: float,
    n_resamples: int = N_RESAMPLES,
    seed: int = SEED,
) -> Interval:
    """Percentile interval of the mean over strata of (candidate − baseline), resampling
    pairs with replacement within each stratum."""
    diff = candidate.astype(np.float64) - baseline.astype(np.float64)
    rng = np.random.default_rng(seed)
    stats = np.zeros(n_resamples)
    for group in strata:
        values = diff[group]
        for start in range(0, n_resamples, _CHUNK):
            stop = min(start + _CHUNK, n_resamples)
            draws = rng.integers(0, len(values), size=(stop - start, len(values)))
            stats[start:stop] += values[draws].mean(axis=1) / len(strata)
    estimate = float(np.mean([diff[g].mean() for g in strata]))
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return Interval(estimate, float(low), float(high), level)


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar p-value from the discordant counts b and c."""
    n = b + c
    if n == 0:
        return 1.0
    try:
        from scipy.stats import binomtest  # optional; the exact sum below is equivalent
    except ImportError:
        return binomial_two_sided(min(b, c), n)
    return float(binomtest(c, n, 0.5).pvalue)


def binomial_two_sided(k: int, n: int) -> float:
    """2 · P(X ≤ k), capped at 1, for X ~ Binomial(n, ½) and k ≤ n/2; exact integer sums."""
    tail = sum(math.comb(n, i) for i in range(k + 1))
    return min(1.0, 2 * tail / 2**n)


def _verdict(
    delta: float, p: float, ci_high: float, tolerance: float, alpha: float
) -> tuple[bool, str]:
    drop = delta < -tolerance
    significant = p < alpha
    confident = ci_high < -tolerance
    if drop and significant and confident:
        return False, "worse beyond the tolerance, significantly"
    if not drop:
        return True, "no drop beyond the tolerance"
    if not significant:
        return True, f"drop not significant (p ≥ {alpha:g})"
    return True, "interval reaches within the tolerance"


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value * 100:.1f}%"


def _pp(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value * 100:+.1f} pp"


def _says(fails: bool, passing: str, failing: str) -> Text:
    """A check's finding in words: red when it is one of the conditions for FAIL."""
    return Text(failing, style="bold red") if fails else Text(passing, style="green")


def table(result: GateResult) -> Table:
    """The gate's decision as a rich table: each check, its value, when it counts against
    the candidate, and what it found, in words (red: against the candidate). The gate
    fails only when all three checks are against the candidate."""
    level = f"{result.ci.level * 100:g}%"
    verdict = Text("PASS", style="bold green") if result.passed else Text("FAIL", style="bold red")
    out = Table(
        title=f"uxmon gate · {result.task} · {result.headline}",
        title_justify="left",
    )
    out.add_column("check")
    out.add_column("value", justify="right")
    out.add_column("against the candidate if", justify="right")
    out.add_column("finding")
    tol = _pp(-result.tolerance)
    beyond = result.delta < -result.tolerance
    significant = result.p_value < result.alpha
    confident = result.ci.high < -result.tolerance
    out.add_row(f"baseline  {result.baseline_scorer}", _pct(result.baseline), "", "")
    out.add_row(f"candidate {result.candidate_scorer}", _pct(result.candidate), "", "")
    out.add_section()
    out.add_row(
        "Δ candidate − baseline",
        _pp(result.delta),
        f"< {tol}",
        _says(
            beyond,
            "no drop" if result.delta >= 0 else "drop within tolerance",
            "drop beyond tolerance",
        ),
    )
    out.add_row(
        "McNemar exact p",
        f"{result.p_value:.3g} (b={result.b}, c={result.c})",
        f"< {result.alpha:g}",
        _says(
            significant and result.delta < 0,
            "gain is not chance" if significant else "could be chance",
            "drop is not chance",
        ),
    )
    out.add_row(
        f"{level} CI of Δ",
        f"{_pp(result.ci.low)} … {_pp(result.ci.high)}",
        f"upper < {tol}",
        _says(
            confident,
            "reaches within tolerance",
            "wholly beyond tolerance",
        ),
    )
    out.add_section()
    against = sum((beyond, significant and result.delta < 0, confident))
    out.add_row(
        Text("verdict", style="bold"), verdict, "all three", f"{against} of 3 against the candidate"
    )
    d = result.dropped
    notes = [
        f"{'PASS' if result.passed else 'FAIL'}: {result.reason}.",
        f"{result.n_paired} paired items; dropped {d['baseline_only']} baseline-only, "
        f"{d['candidate_only']} candidate-only, {d['no_outcome']} without an outcome.",
        "b: baseline right, candidate wrong; c: the reverse.",
    ]
    notes += [f"warning: {w}" for w in result.warnings]
    out.caption = "\n".join(notes)
    out.caption_justify = "left"
    return out
