"""Standard cases of a Placement collection endpoint, written once (after NetBox's
``utilities/testing/api.py``).

A test class for an endpoint combines the mixins of the actions it has (:class:`ListTests`,
:class:`ShowTests`, :class:`CreateTests` or :class:`UniqueCreateTests`, :class:`UpdateTests`,
:class:`DeleteTests`, or :class:`AllActions`), names its URLs, policy rules and bodies, and gets each action's
standard cases: the happy path, 404 on a missing item, 409 on a duplicate, and a 403 in
Placement's error format from the action's own policy rule. The file then states only what
is special about the endpoint. Everything goes through the whole HTTP stack
(``PlacementClient``).
"""

import pytest

from tests.conftest import PlacementClient


class EndpointTests:
    """What every mixin reads: override the attributes and methods below."""

    collection_url = ""  # "/resource_classes"
    item_url = ""  # "/resource_classes/{key}"
    collection_key = ""  # the list's key in the collection body: "resource_classes"
    version = "latest"
    rules = {}  # action ("list", "show", "create", "update", "delete") -> policy rule
    show_status = 200
    create_status = 201
    update_status = 200
    delete_status = 204
    duplicate_code = "placement.duplicate_name"  # the 409's code (UniqueCreateTests); None: any
    missing_key = ""  # a key that names nothing

    # --- what the subclass says about its data --------------------------------------

    def existing(self):
        """Make one item; return its key in ``item_url``."""
        raise NotImplementedError

    def create(self, client):
        """POST (or PUT) a new item; return ``(response, key)``."""
        raise NotImplementedError

    def update(self, client, key):
        """Change the item ``key``; return the response."""
        raise NotImplementedError

    def key_in_listing(self, key, listing):
        """Whether the list body's items (``listing``) include ``key``."""
        return any(key in item.values() for item in listing)

    # --- plumbing ------------------------------------------------------------------

    @pytest.fixture
    def client(self, db):
        return PlacementClient(version=self.version)

    def url(self, key):
        return self.item_url.format(key=key)

    @pytest.fixture
    def forbid(self, policy_file):
        """``forbid(rule)``: a policy file that refuses ``rule`` to everyone."""
        return lambda rule: policy_file({rule: "!"})


def assert_refused_by(response, rule):
    """A 403 naming ``rule``: Placement's error body, which /api/ also answers in."""
    assert response.status == 403, response
    assert rule in response.error["detail"]


class ListTests(EndpointTests):
    def test_list_includes_an_existing_item(self, client):
        key = self.existing()
        response = client.get(self.collection_url)
        assert response.status == 200, response
        assert self.key_in_listing(key, response.json[self.collection_key])

    def test_list_is_refused_by_its_rule(self, client, forbid):
        forbid(self.rules["list"])
        assert_refused_by(client.get(self.collection_url), self.rules["list"])


class ShowTests(EndpointTests):
    def test_show_an_existing_item(self, client):
        key = self.existing()
        assert client.get(self.url(key)).status == self.show_status

    def test_show_a_missing_item_is_404(self, client):
        response = client.get(self.url(self.missing_key))
        assert response.status == 404, response
        assert response.error["status"] == 404

    def test_show_is_refused_by_its_rule(self, client, forbid):
        key = self.existing()
        forbid(self.rules["show"])
        assert_refused_by(client.get(self.url(key)), self.rules["show"])


class CreateTests(EndpointTests):
    def test_create_then_show(self, client):
        response, key = self.create(client)
        assert response.status == self.create_status, response
        if "show" in self.rules:
            assert client.get(self.url(key)).status == self.show_status

    def test_create_is_refused_by_its_rule(self, client, forbid):
        forbid(self.rules["create"])
        response, _key = self.create(client)
        assert_refused_by(response, self.rules["create"])


class UniqueCreateTests(CreateTests):
    """Creating what exists is a 409 with ``duplicate_code``."""

    def test_create_a_duplicate_is_409(self, client):
        self.create(client)
        response, _key = self.create(client)
        assert response.status == 409, response
        if self.duplicate_code is not None:
            assert response.error_code == self.duplicate_code


class UpdateTests(EndpointTests):
    def test_update_an_existing_item(self, client):
        key = self.existing()
        assert self.update(client, key).status == self.update_status

    def test_update_is_refused_by_its_rule(self, client, forbid):
        key = self.existing()
        forbid(self.rules["update"])
        assert_refused_by(self.update(client, key), self.rules["update"])


class DeleteTests(EndpointTests):
    def test_delete_then_show_is_404(self, client):
        key = self.existing()
        assert client.delete(self.url(key)).status == self.delete_status
        if "show" in self.rules:
            assert client.get(self.url(key)).status == 404

    def test_delete_a_missing_item_is_404(self, client):
        assert client.delete(self.url(self.missing_key)).status == 404

    def test_delete_is_refused_by_its_rule(self, client, forbid):
        key = self.existing()
        forbid(self.rules["delete"])
        assert_refused_by(client.delete(self.url(key)), self.rules["delete"])


class AllActions(ListTests, ShowTests, UniqueCreateTests, UpdateTests, DeleteTests):
    """An endpoint with every action."""
