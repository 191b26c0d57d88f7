"""provider_tree_create: a new host's whole tree in one write, with the rules of the
one-by-one services, and the host sync's use of it."""

import pytest

from placementsite.core.exceptions import DuplicateName, InvalidRequest
from providers.models import Inventory, ResourceProvider, ResourceProviderTrait
from providers.services.provider_trees import NewProvider, provider_tree_create
from tests.providers.hosts import report, sync, tree

pytestmark = pytest.mark.django_db

LATEST = (1, 39)


def _tree(children=()):
    return {
        "root": NewProvider(
            name="host-a",
            inventories={"DISK_GB": {"total": 100, "max_unit": 100}},
            traits=("COMPUTE_VOLUME_MULTI_ATTACH",),
        ),
        "children": list(children)
        or [
            NewProvider(
                name="host-a_numa0",
                inventories={"VCPU": {"total": 8, "allocation_ratio": 16.0}},
                traits=("HW_NUMA_ROOT",),
            ),
            NewProvider(name="host-a_empty"),
        ],
    }


def test_creates_the_tree_as_the_api_shows_it(api):
    root, numa, empty = provider_tree_create(**_tree(), microversion=LATEST)

    shown = tree(api, "host-a")
    assert set(shown) == {"host-a", "host-a_numa0", "host-a_empty"}
    assert shown["host-a_numa0"]["parent"] == str(root.uuid)
    assert shown["host-a_empty"]["parent"] == str(root.uuid)
    assert shown["host-a"]["inventories"]["DISK_GB"]["total"] == 100
    # Omitted fields take Placement's defaults, as PUT .../inventories gives them.
    assert shown["host-a_numa0"]["inventories"]["VCPU"] == {
        "total": 8,
        "reserved": 0,
        "min_unit": 1,
        "max_unit": 2147483647,
        "step_size": 1,
        "allocation_ratio": 16.0,
    }
    assert shown["host-a"]["traits"] == ["COMPUTE_VOLUME_MULTI_ATTACH"]
    assert shown["host-a_numa0"]["traits"] == ["HW_NUMA_ROOT"]
    # Written to once: generation 1; never written: 0, as if each was created alone.
    assert [shown[p.name]["generation"] for p in (root, numa, empty)] == [1, 1, 0]


def test_a_taken_name_is_a_duplicate_and_nothing_is_written(api):
    api.post("/resource_providers", {"name": "host-a_numa0"})

    with pytest.raises(DuplicateName) as refused:
        provider_tree_create(**_tree(), microversion=LATEST)

    assert refused.value.code == "placement.duplicate_name"
    assert "host-a_numa0" in refused.value.detail
    assert list(ResourceProvider.objects.values_list("name", flat=True)) == ["host-a_numa0"]


@pytest.mark.parametrize(
    "child, words",
    [
        (NewProvider(name="c", inventories={"VCPU": {"total": 4, "reserved": 5}}), "reserved"),
        (NewProvider(name="c", inventories={"VCPU": {"total": 0}}), "JSON does not validate"),
        (NewProvider(name="c", inventories={"CUSTOM_NOPE": {"total": 1}}), "CUSTOM_NOPE"),
        (NewProvider(name="c", traits=("CUSTOM_NOPE",)), "No such trait CUSTOM_NOPE"),
    ],
)
def test_a_refused_part_is_a_400_and_nothing_is_written(api, child, words):
    with pytest.raises(InvalidRequest) as refused:
        provider_tree_create(**_tree([child]), microversion=LATEST)

    assert words in refused.value.detail
    assert not ResourceProvider.objects.exists()
    assert not Inventory.objects.exists()
    assert not ResourceProviderTrait.objects.exists()


def test_sync_of_a_new_host_with_a_refused_child_syncs_the_rest(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = [
        "vcpu",
        "tests.providers.plugin_fixtures:BadChildPlugin",
    ]
    api.put("/api/compute-nodes/host-b/", report())
    sync()

    shown = tree(api, "host-b")
    assert set(shown) == {"host-b", "host-b_broken", "host-b_fine"}
    assert shown["host-b"]["inventories"]["VCPU"]["total"] == 16
    assert shown["host-b_fine"]["inventories"]["DISK_GB"]["total"] == 10
    assert shown["host-b_broken"]["inventories"] == {}
    node = api.get("/api/compute-nodes/host-b/").json
    assert node["sync_status"] == "partial"
    assert "host-b_broken" in node["sync_error"]
