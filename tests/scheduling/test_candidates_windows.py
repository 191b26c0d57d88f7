"""A limit pushed down: ``GET /allocation_candidates`` with a ``limit`` answered window by
window of roots (scheduling.candidates' LIMIT_IN_WINDOWS) is the answer read whole.

Property test (seeded, bounded): on random small clouds (flat hosts, hosts with NUMA children
and devices below them, sharing storage providers in aggregates, some of them children of
another tree, traits, aggregates, existing usage) and random requests (unsuffixed and
granular groups, required and forbidden traits, member_of, in_tree, root_required,
same_subtree, group_policy, limits 1 to 20, an older microversion, a low candidate cap or work
budget), the windowed answer with windows of one or two roots (the next windows' sharing
anchors probed with their bounds or read all at once) and the answer with windowing off are
the same bytes through the HTTP endpoint. Runs on whichever database the suite runs
on (PostgreSQL and SQLite both).
"""

import random
import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from scheduling import candidates as engine
from scheduling import queries
from tests.factories import make_allocation, make_consumer, make_provider, trait

pytestmark = pytest.mark.django_db

SEEDS = range(30)
REQUESTS_PER_CLOUD = 8
AGGREGATES = [str(uuid.UUID(int=n)) for n in (101, 102)]
TRAITS = ["HW_CPU_X86_AVX2", "CUSTOM_A", "CUSTOM_B"]
SHARING = "MISC_SHARES_VIA_AGGREGATE"


def _some(rng, items, most=2):
    return rng.sample(items, rng.randint(0, min(most, len(items))))


def _used(rng, provider, inventories):
    """Some of the provider's inventory taken by a consumer (sometimes all of a class)."""
    if rng.random() < 0.3:
        taken = {name: rng.randint(1, total) for name, total in inventories.items()}
        make_allocation(provider, make_consumer(), taken)


def _flat(rng):
    inventories = {
        "VCPU": rng.choice([1, 2, 8]),
        "MEMORY_MB": rng.choice([512, 2048]),
        "DISK_GB": rng.choice([20, 100]),
    }
    if rng.random() < 0.3:
        del inventories["DISK_GB"]  # storage from a sharing provider only
    host = make_provider(
        inventories=inventories,
        traits=_some(rng, TRAITS),
        aggregates=_some(rng, AGGREGATES, 1),
    )
    _used(rng, host, inventories)
    return host


def _numa(rng, roots):
    host = make_provider(
        inventories={"DISK_GB": rng.choice([20, 100])},
        traits=_some(rng, TRAITS),
        aggregates=_some(rng, AGGREGATES, 1),
    )
    for _cell in range(rng.randint(1, 2)):
        inventories = {"VCPU": rng.choice([1, 4]), "MEMORY_MB": rng.choice([256, 1024])}
        cell = make_provider(parent=host, inventories=inventories, traits=_some(rng, TRAITS, 1))
        _used(rng, cell, inventories)
        if rng.random() < 0.5:
            make_provider(parent=cell, inventories={"SRIOV_NET_VF": rng.choice([1, 2])})
    if roots and rng.random() < 0.2:  # a child of this tree is a sharing provider
        make_provider(
            parent=host,
            inventories={"DISK_GB": 500},
            traits=[SHARING],
            aggregates=_some(rng, AGGREGATES, 2) or AGGREGATES[:1],
        )
    return host


def _sharing(rng):
    storage = make_provider(
        inventories={"DISK_GB": rng.choice([30, 1000])},
        traits=[SHARING, *_some(rng, TRAITS, 1)],
        aggregates=_some(rng, AGGREGATES, 2) or AGGREGATES[:1],
    )
    _used(rng, storage, {"DISK_GB": 30})
    return storage


def _cloud(rng):
    """Random trees, in random kinds one after the other (ids interleave kinds)."""
    for name in TRAITS:
        trait(name)  # every trait a request may name exists
    roots = []
    for _index in range(rng.randint(4, 18)):
        kind = rng.choice(["flat", "flat", "numa", "numa", "sharing"])
        if kind == "flat":
            roots.append(_flat(rng))
        elif kind == "numa":
            roots.append(_numa(rng, roots))
        else:
            roots.append(_sharing(rng))
    return roots


def _resources(rng, names=("VCPU", "MEMORY_MB", "DISK_GB")):
    amounts = {"VCPU": [1, 2], "MEMORY_MB": [256, 512], "DISK_GB": [10, 50]}
    chosen = rng.sample(list(names), rng.randint(1, len(names)))
    return ",".join(f"{name}:{rng.choice(amounts[name])}" for name in chosen)


def _traits(rng):
    picked = _some(rng, TRAITS, 2)
    return ",".join(f"!{t}" if rng.random() < 0.3 else t for t in picked)


def _granular(rng, params):
    """One or two numbered groups (and same_subtree over them, sometimes)."""
    suffixes = rng.sample(["1", "2", "_NET"], rng.randint(1, 2))
    for suffix in suffixes:
        group = rng.choice(["SRIOV_NET_VF:1", "VCPU:1", "VCPU:1,MEMORY_MB:256", "DISK_GB:10"])
        params.append(f"resources{suffix}={group}")
        if rng.random() < 0.3:
            params.append(f"required{suffix}={rng.choice(TRAITS)}")
    params.append(f"group_policy={rng.choice(['none', 'isolate'])}")
    if rng.random() < 0.3:
        params.append("same_subtree=" + ",".join(sorted(suffixes)))


def _unsuffixed_rules(rng, params, roots):
    if rng.random() < 0.35 and (traits := _traits(rng)):
        params.append(f"required={traits}")
    if rng.random() < 0.3:
        params.append("member_of=" + rng.choice([AGGREGATES[0], "in:" + ",".join(AGGREGATES)]))
    if rng.random() < 0.1:
        params.append(f"in_tree={rng.choice(roots).uuid}")


def _request(rng, roots):
    """A random query string, and the microversion to send it at."""
    params = []
    if rng.random() < 0.85:
        params.append(f"resources={_resources(rng)}")
    if rng.random() < 0.35 or not params:
        _granular(rng, params)
    if params[0].startswith("resources="):  # the unsuffixed group's other rules
        _unsuffixed_rules(rng, params, roots)
    if rng.random() < 0.15:
        params.append(f"root_required={rng.choice(['CUSTOM_B', '!CUSTOM_A'])}")
    params.append(f"limit={rng.randint(1, 20)}")
    later = ("root_required", "same_subtree", "in_tree", "resources_", "required_")
    plain = not any(p.startswith(later) for p in params)  # nothing past 1.28
    version = "1.28" if plain and rng.random() < 0.25 else "latest"
    return "&".join(params), version


def _limits(rng, settings):
    """Sometimes a candidate cap or a work budget below what the request would find."""
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = rng.choice([1000, 1000, 3])
    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = rng.choice([100000, 100000, 7, 40])


@pytest.mark.parametrize("seed", SEEDS)
def test_windowed_answer_is_the_whole_answer(api, settings, monkeypatch, seed):
    rng = random.Random(seed)
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    roots = _cloud(rng)
    monkeypatch.setattr(engine, "WINDOW_ROOTS_PER_CANDIDATE", 0)
    for _ in range(REQUESTS_PER_CLOUD):
        query, version = _request(rng, roots)
        _limits(rng, settings)
        url = f"/allocation_candidates?{query}"
        monkeypatch.setattr(engine, "LIMIT_IN_WINDOWS", False)
        whole = api.get(url, version=version)
        monkeypatch.setattr(engine, "LIMIT_IN_WINDOWS", True)
        monkeypatch.setattr(engine, "FIRST_WINDOW_ROOTS", rng.choice([1, 2]))
        # The next windows' sharing anchors probed with their bounds, or every one read.
        monkeypatch.setattr(engine, "WINDOW_ANCHORS_PROBED", rng.choice([0, 3, 2048]))
        windowed = api.get(url, version=version)
        assert whole.status == 200, (seed, query, whole)
        assert windowed.status == whole.status, (seed, query)
        assert windowed.json == whole.json, (seed, query, version)
        assert windowed.content == whole.content, (seed, query, version)


def _windows_read(monkeypatch):
    """The windows of roots the engine selects from, as ``(first, last)``, recorded."""
    read = []
    windows = engine._root_windows

    def recording(size, sharing, progress):
        for window in windows(size, sharing, progress):
            read.append((window.first, window.last))
            yield window

    monkeypatch.setattr(engine, "_root_windows", recording)
    return read


def _hosts(count):
    inventories = {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100}
    return [make_provider(inventories=inventories) for _ in range(count)]


def test_plain_request_with_a_limit_reads_the_first_windows_only(api, settings, monkeypatch):
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    hosts = _hosts(12)
    monkeypatch.setattr(engine, "FIRST_WINDOW_ROOTS", 2)
    monkeypatch.setattr(engine, "WINDOW_ROOTS_PER_CANDIDATE", 0)
    read = _windows_read(monkeypatch)

    response = api.get("/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10&limit=3")

    assert [list(r["allocations"]) for r in response.json["allocation_requests"]] == [
        [str(host.uuid)] for host in hosts[:3]
    ]
    # Two roots, then four: the third candidate is in the second window; the rest unread.
    assert read == [(engine._LOWEST_ID, hosts[1].id), (hosts[2].id, hosts[5].id)]
    assert list(response.json["provider_summaries"]) == [str(host.uuid) for host in hosts[:3]]


def test_trait_and_aggregate_request_is_windowed(api, settings, monkeypatch):
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    make_provider(
        inventories={"DISK_GB": 1000}, traits=[SHARING], aggregates=AGGREGATES[:1]
    )  # a sharing provider: read with every window
    for _ in range(6):
        make_provider(
            inventories={"VCPU": 8, "MEMORY_MB": 4096},
            traits=["HW_CPU_X86_AVX2"],
            aggregates=AGGREGATES[:1],
        )
    monkeypatch.setattr(engine, "FIRST_WINDOW_ROOTS", 2)
    read = _windows_read(monkeypatch)

    response = api.get(
        "/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10"
        f"&required=HW_CPU_X86_AVX2&member_of={AGGREGATES[0]}&limit=1"
    )

    assert len(response.json["allocation_requests"]) == 1
    assert len(read) == 1  # the sharing provider and a host: the first window holds the answer


def _sharing_cloud(avx2_every):
    """A sharing storage provider and 12 hosts in its aggregate, every ``avx2_every``-th with
    AVX2 (the sharing provider, the first root, never)."""
    make_provider(inventories={"DISK_GB": 1000}, traits=[SHARING], aggregates=AGGREGATES[:1])
    for index in range(12):
        make_provider(
            inventories={"VCPU": 8, "MEMORY_MB": 4096},
            traits=["HW_CPU_X86_AVX2"] if index % avx2_every == 0 else [],
            aggregates=AGGREGATES[:1],
        )


@pytest.mark.parametrize("probed", [2048, 0])
def test_next_windows_read_their_own_sharing_anchors_while_small(
    api, settings, monkeypatch, probed
):
    """A window after the first holding at most WINDOW_ANCHORS_PROBED roots reads the sharing
    anchors of its own trees with its bound (every tree's anchors can cost tens of ms at
    100,000 providers); a larger one reads every anchor, once. Both answer the same."""
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    _sharing_cloud(avx2_every=3)
    url = (
        "/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10"
        f"&required=HW_CPU_X86_AVX2&member_of={AGGREGATES[0]}&limit=3"
    )
    monkeypatch.setattr(engine, "LIMIT_IN_WINDOWS", False)
    whole = api.get(url)
    monkeypatch.setattr(engine, "LIMIT_IN_WINDOWS", True)
    monkeypatch.setattr(engine, "FIRST_WINDOW_ROOTS", 2)
    monkeypatch.setattr(engine, "WINDOW_ROOTS_PER_CANDIDATE", 0)
    monkeypatch.setattr(engine, "WINDOW_ANCHORS_PROBED", probed)
    every = []
    sharing_anchors = queries.sharing_anchors
    monkeypatch.setattr(queries, "sharing_anchors", lambda: every.append(1) or sharing_anchors())
    read = _windows_read(monkeypatch)

    windowed = api.get(url)

    assert windowed.content == whole.content
    assert len(windowed.json["allocation_requests"]) == 3  # an AVX2 host with the shared disk
    assert len(read) >= 2  # a window after the first was read
    assert len(every) == (0 if probed else 1)


@pytest.mark.parametrize(
    "query",
    [
        "resources=VCPU:1",  # no limit
        "resources=VCPU:1&limit=2&resources1=VCPU:1&same_subtree=1&group_policy=none",
    ],
)
def test_requests_read_whole_without_windows(api, settings, monkeypatch, query):
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    _hosts(3)
    read = _windows_read(monkeypatch)
    response = api.get(f"/allocation_candidates?{query}")
    assert response.status == 200, response
    assert read == []


def test_randomised_order_is_read_whole(api, settings, monkeypatch):
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = True
    _hosts(3)
    read = _windows_read(monkeypatch)
    response = api.get("/allocation_candidates?resources=VCPU:1&limit=1")
    assert len(response.json["allocation_requests"]) == 1
    assert read == []


def _warm_statements(api, url):
    """The answer to ``url`` once its caches are warm, and the statements it ran."""
    assert api.get(url).status == 200
    with CaptureQueriesContext(connection) as captured:
        response = api.get(url)
    assert response.status == 200, response
    return response, [query["sql"] for query in captured.captured_queries]


def test_a_request_answered_in_its_first_window_costs_three_statements(api, settings, monkeypatch):
    """The first window's bound and its trees' sharing anchors are read with the request's
    names, its sharing providers outside it with its selection, and the summaries of its few
    trees (members, inventories, traits) in one statement: the same body as the summaries
    read in three."""
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    make_provider(inventories={"DISK_GB": 1000}, traits=[SHARING], aggregates=AGGREGATES[:1])
    for index in range(3):
        host = make_provider(
            inventories={"VCPU": 8, "MEMORY_MB": 4096},
            traits=["CUSTOM_A", "HW_CPU_X86_AVX2"],
            aggregates=AGGREGATES[:1],
        )
        make_provider(parent=host, inventories={"SRIOV_NET_VF": 4}, traits=["CUSTOM_B"] * index)
    url = "/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10&limit=2"
    response, statements = _warm_statements(api, url)

    assert len(response.json["allocation_requests"]) == 2
    assert len(statements) == 3, "\n".join(statements)
    monkeypatch.setattr(queries, "FEW_TREES", 0)  # the summaries in three statements
    assert api.get(url).content == response.content


def test_groups_asking_the_same_read_their_selection_once(api, settings):
    """Six granular groups asking one VGPU each (a wide request) run one selection statement
    per window, not six: the names with the first window, the selection, the summaries."""
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    for _ in range(2):
        root = make_provider(inventories={"VCPU": 8})
        for _ in range(8):
            make_provider(parent=root, inventories={"VGPU": 1})
    groups = "&".join(f"resources{n}=VGPU:1" for n in range(1, 7))
    url = f"/allocation_candidates?{groups}&group_policy=none&limit=3"
    response, statements = _warm_statements(api, url)

    assert len(response.json["allocation_requests"]) == 3
    assert len(statements) == 3, "\n".join(statements)
    # Each candidate takes one VGPU from each of six of a tree's eight children.
    for request in response.json["allocation_requests"]:
        assert sum(a["resources"]["VGPU"] for a in request["allocations"].values()) == 6
