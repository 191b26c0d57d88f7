"""GET /allocation_candidates: query counts and early stopping on wide trees."""

import gc
import io
import time
import uuid

import pytest

from placementsite.wsgi import application
from tests.factories import make_provider

SHARED = str(uuid.UUID(int=7))
PERFLOAD = "resources=VCPU:1,MEMORY_MB:256,DISK_GB:10&required=HW_CPU_X86_AVX2"
NESTED = (
    "resources_CPU=VCPU:1,MEMORY_MB:256&resources_NET=SRIOV_NET_VF:1"
    "&resources=DISK_GB:10&group_policy=none&same_subtree=_CPU,_NET"
)


def compute_nodes(count):
    make_provider(
        f"ss-{uuid.uuid4()}",
        inventories={"DISK_GB": 10000},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[SHARED],
    )
    for _index in range(count):
        cn = make_provider(
            inventories={"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100},
            traits=["HW_CPU_X86_AVX2"],
            aggregates=[SHARED],
        )
        for _numa in range(2):
            node = make_provider(parent=cn, inventories={"VCPU": 4, "MEMORY_MB": 2048})
            make_provider(parent=node, inventories={"SRIOV_NET_VF": 8})


def queries_for(django_assert_max_num_queries, api, query, maximum):
    with django_assert_max_num_queries(maximum) as captured:
        response = api.get(f"/allocation_candidates?{query}")
    assert response.status == 200
    return len(captured.captured_queries), response


@pytest.mark.parametrize("query", [PERFLOAD, NESTED], ids=["perfload", "nested"])
def test_query_count_does_not_grow_with_providers(api, django_assert_max_num_queries, query):
    compute_nodes(1)
    small, response = queries_for(django_assert_max_num_queries, api, query, 20)
    assert response.json["allocation_requests"]
    compute_nodes(49)
    large, response = queries_for(django_assert_max_num_queries, api, query, small)
    assert len(response.json["allocation_requests"]) > 50
    assert large == small


def wide_tree(roots, children):
    for _ in range(roots):
        root = make_provider(inventories={"MEMORY_MB": 1024})
        for _ in range(children):
            make_provider(parent=root, inventories={"CUSTOM_ACCEL": 1})


WIDE = "&".join(f"resources{n}=CUSTOM_ACCEL:1" for n in range(1, 7)) + "&group_policy=isolate"


def test_wide_tree_with_limit_stops_early(api, db):
    wide_tree(roots=20, children=8)
    started = time.monotonic()
    response = api.get(f"/allocation_candidates?{WIDE}&limit=10")
    elapsed = time.monotonic() - started
    assert response.status == 200
    assert len(response.json["allocation_requests"]) == 10
    assert elapsed < 5  # the reference needs about a minute per root here


def test_wide_tree_isolate_gives_distinct_providers(api, db):
    wide_tree(roots=1, children=8)
    response = api.get(f"/allocation_candidates?{WIDE}&limit=50")
    for request in response.json["allocation_requests"]:
        assert len(request["allocations"]) == 6


def test_wide_tree_is_capped_by_max_candidates(api, db, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 100
    wide_tree(roots=2, children=8)
    response = api.get(f"/allocation_candidates?{WIDE}")
    assert len(response.json["allocation_requests"]) == 100


def live_responses():
    from django.http import HttpResponseBase

    # type(), not isinstance(): isinstance() on a weakref proxy whose referent died (another
    # test may leave one) raises ReferenceError; type() of a proxy is the proxy type itself.
    return sum(1 for obj in gc.get_objects() if issubclass(type(obj), HttpResponseBase))


@pytest.mark.django_db(transaction=True)
def test_answer_is_freed_with_the_request_not_by_the_cyclic_collector():
    """A large answer must not wait in memory for the garbage collector.

    DRF keeps the response on the view, and the view is in a reference cycle with its request:
    unless that reference is dropped, each answer (megabytes on a large cloud) outlives its
    request until the next full collection, and a worker's memory grows with every request.
    """
    compute_nodes(5)
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/allocation_candidates",
        "QUERY_STRING": PERFLOAD,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "wsgi.url_scheme": "http",
        "wsgi.errors": io.StringIO(),
        "HTTP_X_AUTH_TOKEN": "admin",
        "HTTP_OPENSTACK_API_VERSION": "placement 1.39",
    }
    gc.collect()
    gc.disable()
    try:
        before = live_responses()
        statuses = []
        for _ in range(3):
            body = b"".join(
                application(
                    dict(environ, **{"wsgi.input": io.BytesIO()}),
                    lambda status, headers: statuses.append(status),
                )
            )
            assert b"allocation_requests" in body
        assert statuses == ["200 OK"] * 3
        assert live_responses() == before
    finally:
        gc.enable()
