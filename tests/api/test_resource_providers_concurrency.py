"""Provider writes racing each other keep the trees consistent."""

import threading

import pytest
from django.db import connection

from providers.models import ResourceProvider
from tests.conftest import PlacementClient
from tests.factories import make_provider

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]


def run_together(*calls):
    """Run each call in its own thread (own connection), released at once."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, call):
        try:
            barrier.wait()
            results[index] = call(PlacementClient(version="latest"))
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def assert_trees_consistent():
    """Every provider's root is the top of its parent chain, with no loop."""
    rows = {p.pk: (p.parent_id, p.root_id) for p in ResourceProvider.objects.all()}
    for pk in rows:
        seen, current = set(), pk
        while rows[current][0] is not None:
            assert current not in seen, "loop in the provider tree"
            seen.add(current)
            current = rows[current][0]
        assert rows[pk][1] == current


def test_crossed_moves_never_make_a_loop():
    a = make_provider("a")
    b = make_provider("b", parent=a)
    d = make_provider("d")
    e = make_provider("e", parent=d)
    results = run_together(
        lambda c: c.put(
            f"/resource_providers/{a.uuid}", {"name": "a", "parent_provider_uuid": str(e.uuid)}
        ),
        lambda c: c.put(
            f"/resource_providers/{d.uuid}", {"name": "d", "parent_provider_uuid": str(b.uuid)}
        ),
    )
    assert sorted(r.status for r in results) == [200, 400]
    assert_trees_consistent()


def test_child_created_while_its_parent_moves_gets_the_new_root():
    old_root, new_root = make_provider("old"), make_provider("new")
    mid = make_provider("mid", parent=old_root)
    results = run_together(
        lambda c: c.put(
            f"/resource_providers/{mid.uuid}",
            {"name": "mid", "parent_provider_uuid": str(new_root.uuid)},
        ),
        lambda c: c.post(
            "/resource_providers", {"name": "leaf", "parent_provider_uuid": str(mid.uuid)}
        ),
    )
    assert [r.status for r in results] == [200, 200]
    assert_trees_consistent()
    assert ResourceProvider.objects.get(name="leaf").root_id == new_root.pk


def test_child_created_while_its_parent_is_deleted():
    parent = make_provider("parent")
    results = run_together(
        lambda c: c.delete(f"/resource_providers/{parent.uuid}"),
        lambda c: c.post(
            "/resource_providers", {"name": "leaf", "parent_provider_uuid": str(parent.uuid)}
        ),
    )
    deleted, created = results
    # Either the delete went first (the child is refused) or the child did (delete refused).
    assert (deleted.status, created.status) in [(204, 400), (409, 200)]
    assert_trees_consistent()
