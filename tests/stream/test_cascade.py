"""The GRM budget: priorities, the token bucket and the per-batch bound."""

from __future__ import annotations

from stream.cascade import Budget, Candidate, Chosen, Skipped


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def budget(clock: Clock, **overrides: float) -> Budget:
    options = {
        "rate": 1.0,
        "burst": 4.0,
        "max_per_batch": 3,
        "uncertain_margin": 0.1,
        "sample_rate": 0.0,
    }
    options.update(overrides)
    return Budget(clock=clock, **options)  # type: ignore[arg-type]


def test_recovery_first_then_the_least_certain_and_every_turn_is_accounted_for() -> None:
    b = budget(Clock(), max_per_batch=3)
    candidates = [
        Candidate(0, False, 0.95, 0.5),  # confident
        Candidate(1, False, 0.52, 0.5),  # most uncertain
        Candidate(2, True, 0.99, 0.5),  # recovery reply
        Candidate(3, False, 0.42, 0.5),  # uncertain, but the batch bound is reached
        Candidate(4, False, 0.45, 0.5),  # uncertain
    ]
    choice = b.choose(candidates)
    assert choice.chosen == {2: Chosen.RECOVERY, 1: Chosen.UNCERTAIN, 4: Chosen.UNCERTAIN}
    assert choice.skipped == {3: Skipped.QUEUE_FULL, 0: Skipped.CONFIDENT}
    assert set(choice.chosen) | set(choice.skipped) == {c.index for c in candidates}


def test_the_bucket_refills_at_the_rate_and_recovery_ignores_it() -> None:
    clock = Clock()
    b = budget(clock, burst=2.0, max_per_batch=10)
    uncertain = [Candidate(i, False, 0.5, 0.5) for i in range(5)]
    first = b.choose(uncertain)
    assert len(first.chosen) == 2 and list(first.skipped.values()).count(Skipped.BUDGET) == 3
    clock.now = 1.0  # one more token
    assert len(b.choose(uncertain).chosen) == 1
    # a flood of recovery replies is scored in full, and the debt delays the rest
    flood = [Candidate(i, True, 0.9, 0.5) for i in range(6)]
    assert len(b.choose(flood).chosen) == 6
    clock.now = 3.0
    assert b.choose(uncertain).chosen == {}  # still paying back: tokens -2 + 2 = 0


def test_sampling_draws_from_confident_turns() -> None:
    b = budget(Clock(), sample_rate=1.0, max_per_batch=2)
    choice = b.choose([Candidate(0, False, 0.99, 0.5), Candidate(1, False, 0.01, 0.5)])
    assert choice.chosen == {0: Chosen.SAMPLE, 1: Chosen.SAMPLE}


def test_the_batch_bound_holds_for_recovery_replies_too() -> None:
    b = budget(Clock(), max_per_batch=2)
    choice = b.choose([Candidate(i, True, 0.5, 0.5) for i in range(3)])
    assert choice.chosen == {0: Chosen.RECOVERY, 1: Chosen.RECOVERY}
    assert choice.skipped == {2: Skipped.QUEUE_FULL}
