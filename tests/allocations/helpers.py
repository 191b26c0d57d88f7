"""Small builders shared by the allocation tests."""

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from providers.models import Inventory, ResourceProvider


def body(
    allocations, *, generation=None, project="proj-a", user="user-a", consumer_type="INSTANCE"
):
    """A PUT body at the latest microversion: ``allocations`` maps providers to resources."""
    return {
        "allocations": {str(rp): {"resources": res} for rp, res in allocations.items()},
        "project_id": project,
        "user_id": user,
        "consumer_generation": generation,
        "consumer_type": consumer_type,
    }


def snapshot():
    """Everything an allocation write may change, to assert a failed write changed nothing."""
    return {
        "allocations": sorted(
            Allocation.objects.values_list(
                "consumer__uuid", "resource_provider__uuid", "resource_class__name", "used"
            )
        ),
        "consumers": sorted(
            Consumer.objects.values_list(
                "uuid",
                "generation",
                "project__external_id",
                "user__external_id",
                "consumer_type__name",
            ),
            key=str,
        ),
        "providers": sorted(ResourceProvider.objects.values_list("uuid", "generation")),
        "inventories": sorted(
            Inventory.objects.values_list(
                "resource_provider__uuid", "resource_class__name", "total", "reserved"
            )
        ),
        "projects": sorted(Project.objects.values_list("external_id", flat=True)),
        "users": sorted(User.objects.values_list("external_id", flat=True)),
        "consumer_types": sorted(ConsumerType.objects.values_list("name", flat=True)),
    }


def generation(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation
