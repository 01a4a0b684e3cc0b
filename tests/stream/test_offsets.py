from __future__ import annotations

from faust.types import TP

from stream.offsets import Cursors, Hole

P0 = TP("turns", 0)
P1 = TP("turns", 1)


def started(**offsets: int) -> Cursors:
    cursors = Cursors()
    cursors.start({TP("turns", int(p[1:])): o for p, o in offsets.items()})
    return cursors


def test_nothing_is_applied_before_reading_starts() -> None:
    cursors = Cursors()
    admission = cursors.admit([(P0, 0), (P0, 1)])
    assert admission.apply == [] and admission.wait == [0, 1]
    assert admission.holes == {}  # the start seeks back anyway


def test_records_at_the_cursor_are_applied_in_order_per_partition() -> None:
    cursors = started(p0=12, p1=3)
    admission = cursors.admit([(P0, 12), (P1, 3), (P0, 13), (P1, 4)])
    assert admission.apply == [0, 1, 2, 3]
    assert (cursors.next(P0), cursors.next(P1)) == (14, 5)


def test_a_record_past_a_hole_waits_and_so_does_everything_after_it() -> None:
    cursors = started(p0=12, p1=0)
    # 12 arrives, 13..14 were dropped by the consumer, 15 and 16 come next.
    admission = cursors.admit([(P0, 12), (P0, 15), (P1, 0), (P0, 16)])
    assert admission.apply == [0, 2]
    assert admission.wait == [1, 3]
    assert admission.holes == {P0: Hole(P0, expected=13, seen=15)}
    assert cursors.next(P0) == 13  # the cursor does not move past the hole


def test_a_re_read_fills_the_hole_and_replays_are_recognised() -> None:
    cursors = started(p0=12)
    cursors.admit([(P0, 12), (P0, 15)])
    # After the seek back to 13: stale 16 still drains, then 13.. arrive again.
    admission = cursors.admit([(P0, 16), (P0, 12), (P0, 13), (P0, 14), (P0, 15), (P0, 16)])
    assert admission.wait == [0]
    assert admission.applied_before == [1]
    assert admission.apply == [2, 3, 4, 5]
    assert cursors.next(P0) == 17


def test_a_hole_taken_as_absent_is_skipped_and_only_forward() -> None:
    cursors = started(p0=12)
    cursors.skip_to(P0, 20)
    assert cursors.admit([(P0, 19), (P0, 20)]).apply == [1]
    cursors.skip_to(P0, 5)  # never backwards
    assert cursors.next(P0) == 21
    cursors.skip_to(P1, 9)  # nor for a partition that is not being read
    assert cursors.next(P1) is None


def test_a_new_assignment_forgets_every_cursor() -> None:
    cursors = started(p0=12)
    cursors.reset()
    assert cursors.next(P0) is None
    assert cursors.admit([(P0, 12)]).wait == [0]
