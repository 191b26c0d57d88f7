"""The standard cases of each Placement collection, from tests/api/endpoint_tests.py.

Each class states only its endpoint's URLs, rules and bodies; what is special about an
endpoint is tested in its own file (test_resource_classes.py, ...).
"""

import itertools

from tests.api import endpoint_tests as base
from tests.conftest import PlacementClient
from tests.factories import make_provider

_names = itertools.count()


def custom_name(prefix="CUSTOM_STD"):
    return f"{prefix}_{next(_names)}"


class TestResourceClasses(base.AllActions):
    collection_url = "/resource_classes"
    item_url = "/resource_classes/{key}"
    collection_key = "resource_classes"
    missing_key = "CUSTOM_NOTHING"
    update_status = 204  # PUT of an existing custom class (1.7)
    rules = {
        action: f"placement:resource_classes:{action}"
        for action in ("list", "show", "create", "update", "delete")
    }

    def existing(self):
        name = custom_name()
        assert (
            PlacementClient(version="latest").post(self.collection_url, {"name": name}).status
            == 201
        )
        return name

    def create(self, client):
        name = getattr(self, "_created", None) or custom_name()
        self._created = name  # a second create repeats the name (duplicate case)
        return client.post(self.collection_url, {"name": name}), name

    def update(self, client, key):
        return client.put(self.url(key))


class TestTraits(base.ListTests, base.ShowTests, base.CreateTests, base.DeleteTests):
    collection_url = "/traits"
    item_url = "/traits/{key}"
    collection_key = "traits"
    missing_key = "CUSTOM_NOTHING"
    show_status = 204  # a trait's page has no body
    rules = {
        "list": "placement:traits:list",
        "show": "placement:traits:show",
        "create": "placement:traits:update",  # PUT /traits/{name} creates
        "delete": "placement:traits:delete",
    }

    def existing(self):
        name = custom_name("CUSTOM_TRAIT")
        assert PlacementClient(version="latest").put(self.url(name)).status == 201
        return name

    def key_in_listing(self, key, listing):
        return key in listing

    def create(self, client):
        name = custom_name("CUSTOM_TRAIT")
        return client.put(self.url(name)), name


class TestResourceProviders(base.AllActions):
    collection_url = "/resource_providers"
    item_url = "/resource_providers/{key}"
    collection_key = "resource_providers"
    missing_key = "00000000-0000-4000-8000-000000000000"
    rules = {
        action: f"placement:resource_providers:{action}"
        for action in ("list", "show", "create", "update", "delete")
    }

    def existing(self):
        return str(make_provider(custom_name("rp")).uuid)

    def create(self, client):
        name = getattr(self, "_created", None) or custom_name("rp")
        self._created = name
        response = client.post(self.collection_url, {"name": name})
        key = response.json["uuid"] if response.status == 200 else None
        return response, key

    create_status = 200  # from 1.20 the created provider is returned

    def update(self, client, key):
        return client.put(self.url(key), {"name": custom_name("renamed")})


class TestInventories(base.AllActions):
    collection_key = "inventories"
    missing_key = "DISK_GB"
    duplicate_code = None  # Placement's 409 for a POST of a class the provider has: no code
    rules = {
        action: f"placement:resource_providers:inventories:{action}"
        for action in ("list", "show", "create", "update", "delete")
    }

    @property
    def provider(self):
        if not hasattr(self, "_provider"):
            self._provider = make_provider(custom_name("inv"), inventories={"VCPU": 8})
        return self._provider

    @property
    def collection_url(self):
        return f"/resource_providers/{self.provider.uuid}/inventories"

    @property
    def item_url(self):
        return self.collection_url + "/{key}"

    def existing(self):
        return "VCPU"

    def key_in_listing(self, key, listing):
        return key in listing

    def create(self, client):
        provider = client.get(f"/resource_providers/{self.provider.uuid}").json
        body = {
            "resource_class": "MEMORY_MB",
            "total": 1024,
            "resource_provider_generation": provider["generation"],
        }
        return client.post(self.collection_url, body), "MEMORY_MB"

    def update(self, client, key):
        provider = client.get(f"/resource_providers/{self.provider.uuid}").json
        body = {"total": 16, "resource_provider_generation": provider["generation"]}
        return client.put(self.url(key), body)
