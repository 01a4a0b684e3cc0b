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


def test_dropping_partitions_forgets_only_them() -> None:
    due = Due()
    due.put(0, b"a", 1.0)
    due.put(1, b"b", 1.0)
    due.drop({0})
    assert due.take(0, 2.0) == [] and due.take(1, 2.0) == [b"b"]
    due.put(2, b"c", 1.0)
    due.drop()
    assert len(due) == 0
