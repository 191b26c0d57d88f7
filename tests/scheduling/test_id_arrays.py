"""The PostgreSQL array literal of a long list of ids, formatted once for the same ids in a
row (scheduling.queries._long_array): reused only for equal ids, never stale."""

from scheduling import queries


def test_long_array_is_formatted_once_for_the_same_ids_and_never_stale():
    ids = list(range(1, 300))
    first = queries._long_array(ids)
    assert first == "{" + ",".join(map(str, ids)) + "}"
    assert queries._long_array(list(ids)) is first  # equal ids: the same text
    assert queries._long_array([*ids[:-1], 1000]).endswith(",1000}")  # others: their own
    assert queries._long_array(ids[:150]) == "{" + ",".join(map(str, ids[:150])) + "}"
