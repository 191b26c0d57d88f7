"""What a warm boot costs in SQL statements, pinned (issue 22): the pass reads the cloud in a
fixed number of set-based queries whatever the hosts, and the claim writes in a fixed number
too, so a multi-instance boot costs what one boot does. The counts include the savepoints the
test's own transaction turns the request's outermost transaction into (two statements that a
served request does not send)."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

# The flavor; the pass (resource classes with the bound of the engine's first window of roots
# and the sharing providers of its trees in one statement (the pass reads
# PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS candidates: one window on a small cloud), the
# engine's selection, the hosts with their aggregates and metadata, unavailable hosts, the
# trees' inventories); the claim
# (its savepoint, owners, provider locks, consumers, inventories with usage, allocations,
# generations, the servers); the devices of the answer; the request's transaction. The usage
# rows (allocations' ProviderUsage) are written by the allocations' insert on PostgreSQL, by a
# statement of their own on SQLite (which has no INSERT in a WITH): 25 and 35 before them.
WARM_BOOT = {"postgresql": 18, "sqlite": 25}
# The same, for three instances at once: the same statements, each writing three rows.
WARM_BOOT_OF_THREE = {"postgresql": 18, "sqlite": 35}


def statements(api, **body):
    with CaptureQueriesContext(connection) as captured:
        assert boot(api, "f", **body).status == 201
    return [query["sql"] for query in captured.captured_queries]


def test_a_warm_boot_costs_a_fixed_number_of_statements(api):
    response = api.post(
        "/api/aggregates/",
        {"name": "fast", "availability_zone": "az-fast", "metadata": {"ssd": "true"}},
    )
    assert response.status == 201, response
    aggregate = response.json["uuid"]
    for index in range(6):
        make_host(api, f"cn{index}", aggregates=[aggregate] if index % 2 else ())
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    assert boot(api, "f", name="warm").status == 201  # caches warm

    one = statements(api, name="one")
    three = statements(api, name="three", count=3)

    assert len(one) == WARM_BOOT[connection.vendor], "\n".join(one)
    assert len(three) == WARM_BOOT_OF_THREE[connection.vendor], "\n".join(three)
    if connection.vendor == "postgresql":
        # The provider rows are locked once, in one statement, however many instances.
        assert sum("FOR UPDATE" in sql for sql in three) == 1
