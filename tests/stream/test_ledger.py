"""Durable counts (stream/ledger.py): marks, reconciliation after a cut-short batch, export."""

from __future__ import annotations

from collections import Counter

import pytest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.openmetrics.exposition import generate_latest as openmetrics

from stream.ledger import Entry, Family, Ledger, Mark, Tally, decode, encode

SCORED = "uxmon_turns_scored_total"
FAMILIES = [Family(SCORED, "Turns scored.", ("verdict",)), Family("uxmon_x_total", "X.", ())]


def counts(**by_verdict: int) -> Counter:
    return Counter({(SCORED, (verdict,)): n for verdict, n in by_verdict.items()})


def test_counts_survive_their_json() -> None:
    totals = counts(good=3, bad=1)
    assert decode(encode(totals)) == totals
    mark = Mark(41, 7, totals)
    assert Mark.from_json(mark.to_json(2)) == mark
    assert Mark.from_json(None) == Mark()
    assert Mark.from_json({"partition": 2, "offset": 9}) == Mark(9, 0, Counter())  # before
    assert Entry.from_json(Entry(8, totals).to_json()) == Entry(8, totals)


def test_a_batch_cut_short_is_counted_from_the_states_that_reached_the_broker() -> None:
    mark = Mark(offset=99, seq=5, totals=counts(good=10))
    landed = [Entry(6, counts(good=2)), Entry(6, counts(bad=1))]  # the mark of seq 6 did not
    older = [Entry(5, counts(good=4)), Entry(3, counts(bad=9))]  # already in the totals
    reconciled = mark.reconciled(landed + older)
    assert reconciled == Mark(99, 6, counts(good=12, bad=1))
    assert reconciled.reconciled(landed + older) is reconciled  # twice adds nothing
    assert mark.reconciled(older) is mark


def test_a_mark_moves_on_with_the_batch() -> None:
    mark = Mark(offset=10, seq=2, totals=counts(good=1))
    assert mark.after(3, 14, counts(good=1, bad=2)) == Mark(14, 3, counts(good=2, bad=2))
    assert mark.after(3, None, Counter()).offset == 10  # a timer tick handles no record


def test_a_tally_splits_by_conversation_and_sums_by_partition() -> None:
    tally = Tally()
    tally.add(0, "a", SCORED, "good")
    tally.add(0, "a", SCORED, "good")
    tally.add(0, None, SCORED, "bad", n=3)
    tally.add(1, "b", SCORED, "bad")
    assert tally.partitions() == {0, 1}
    assert tally.of_conversation(0, "a") == counts(good=2)
    assert tally.of_conversation(0, "b") == Counter()
    assert tally.of_partition(0) == counts(good=2, bad=3)


def scrape(ledger: Ledger) -> str:
    registry = CollectorRegistry()
    registry.register(ledger)
    return generate_latest(registry).decode()


def test_the_owned_partitions_are_exported_one_series_each() -> None:
    ledger = Ledger(FAMILIES)
    ledger.show(0, counts(good=2))
    ledger.show(3, counts(bad=1))
    first = scrape(ledger)  # a new series is born at 0, so increase() counts its start
    assert 'uxmon_turns_scored_total{partition="0",verdict="good"} 0.0' in first
    text = scrape(ledger)
    assert 'uxmon_turns_scored_total{partition="0",verdict="good"} 2.0' in text
    assert 'uxmon_turns_scored_total{partition="3",verdict="bad"} 1.0' in text
    assert 'uxmon_x_total{partition="3"} 0.0' in text  # label-less: at 0 until it moves
    assert ledger.total(SCORED) == 3
    ledger.hide([0])
    assert 'partition="0"' not in scrape(ledger)
    ledger.hide()
    assert "partition=" not in scrape(ledger)


def test_totals_taken_over_continue_their_series_and_new_label_sets_start_at_0() -> None:
    ledger = Ledger(FAMILIES)
    ledger.show(0, counts(good=5), inherited=True)  # the mark its last owner showed
    assert 'partition="0",verdict="good"} 5.0' in scrape(ledger)
    ledger.show(0, counts(good=6, bad=1))
    text = scrape(ledger)
    assert 'verdict="good"} 6.0' in text and 'verdict="bad"} 0.0' in text
    assert 'verdict="bad"} 1.0' in scrape(ledger)


def test_a_worker_whose_loop_stopped_shows_nothing() -> None:
    alive = [True]
    ledger = Ledger(FAMILIES, alive=lambda: alive[0])
    ledger.show(0, counts(good=2), inherited=True)
    assert 'partition="0"' in scrape(ledger)
    alive[0] = False
    assert "partition=" not in scrape(ledger)


def test_only_declared_counters_can_be_shown() -> None:
    with pytest.raises(ValueError, match="uxmon_nope_total"):
        Ledger(FAMILIES).show(0, Counter({("uxmon_nope_total", ()): 1}))


def test_each_series_carries_the_ids_behind_it_as_an_openmetrics_exemplar() -> None:
    tally = Tally()
    tally.add(0, "a", SCORED, "good", example={"conversation_id": "a", "turn_id": "t1"})
    tally.add(0, "b", SCORED, "good", example={"conversation_id": "b", "turn_id": "t2"})
    tally.add(0, "b", SCORED, "bad")  # no ids known: no exemplar
    ledger = Ledger(FAMILIES)
    registry = CollectorRegistry()
    registry.register(ledger)
    ledger.show(0, tally.of_partition(0), exemplars=tally.exemplars[0])
    first = openmetrics(registry).decode()
    assert "# {" not in first  # a series' first read is its birth at 0, without exemplar
    text = openmetrics(registry).decode()
    [good] = [line for line in text.splitlines() if 'verdict="good"' in line]
    assert good.startswith('uxmon_turns_scored_total{partition="0",verdict="good"} 2.0 # {')
    assert 'conversation_id="b",turn_id="t2"} 1.0' in good  # the newest
    [bad] = [line for line in text.splitlines() if 'verdict="bad"' in line]
    assert "#" not in bad
    assert "# {" not in scrape(ledger)  # the classic text format has no exemplars
    ledger.hide([0])
    ledger.show(0, tally.of_partition(0), inherited=True)
    assert "# {" not in openmetrics(registry).decode()  # a new owner shows its own only
