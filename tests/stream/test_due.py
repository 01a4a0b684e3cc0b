from stream.due import Due


def test_keys_come_due_in_time_order_and_only_once() -> None:
    due = Due()
    due.put(0, b"b", 20.0)
    due.put(0, b"a", 10.0)
    due.put(1, b"c", 5.0)
    assert due.take(0, 9.0) == []
    assert due.take(0, 25.0) == [b"a", b"b"]
    assert due.take(0, 25.0) == []  # taken keys leave the index until set again
    assert due.take(1, 5.0) == [b"c"] and len(due) == 0


def test_a_later_write_supersedes_the_time_it_replaces() -> None:
    due = Due()
    due.put(0, b"a", 10.0)
    due.put(0, b"a", 30.0)  # the user answered: the limit moved on
    assert due.take(0, 20.0) == []
    assert due.take(0, 30.0) == [b"a"]
    due.put(0, b"b", 10.0)
    due.put(0, b"b", None)  # nothing to time out any more
    assert due.take(0, 100.0) == [] and len(due) == 0


def test_superseded_entries_do_not_pile_up() -> None:
    due = Due()
    for at in range(10_000):
        due.put(0, b"a", float(at))
    assert len(due) == 1
    assert len(due._partitions[0].heap) <= 2 * 1 + 1024 + 1
    assert due.take(0, 1e9) == [b"a"]


def test_a_partition_loads_at_once_and_clear_forgets_all() -> None:
    due = Due()
    due.put(0, b"old", 1.0)
    due.put(1, b"b", 1.0)
    due.load(0, [(b"c", 3.0), (b"a", 1.0), (b"b2", 2.0)])  # replaces partition 0
    assert due.take(0, 2.0) == [b"a", b"b2"] and len(due) == 2
    due.put(0, b"c", 5.0)  # a write after the load supersedes it
    assert due.take(0, 4.0) == [] and due.take(0, 5.0) == [b"c"]
    due.clear()
    assert len(due) == 0 and due.take(1, 2.0) == []
