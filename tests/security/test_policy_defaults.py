"""PLACEMENT_POLICY_DEFAULTS as Placement 16 runs on oslo.policy: ``secure`` (the default, as
``enforce_new_defaults`` is since oslo.policy 4.4), ``legacy`` (each rule its new default or its
deprecated admin-only rule, as ``enforce_new_defaults = False``), ``admin-only`` and ``open``;
scope always enforced; policy files in YAML or JSON."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import PlacementClient, new_uuid
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

NOVA = {"token": "nova:service", "headers": {"X-Roles": "service"}}
MEMBER = {"token": "m:pa", "headers": {"X-Roles": "member,reader"}}
READER_A = {"token": "r:pa", "headers": {"X-Roles": "reader"}}
ADMIN = {"token": "admin"}


@pytest.fixture
def api():
    return PlacementClient(version="1.39")


@pytest.fixture
def defaults(settings):
    def use(flavour):
        settings.PLACEMENT_POLICY_DEFAULTS = flavour

    return use


def allocation_body(provider):
    return {
        "allocations": {str(provider.uuid): {"resources": {"VCPU": 1}}},
        "project_id": "pa",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }


def status(api, method, path, who, body=None):
    return api.request(method, path, body, **who).status


# (defaults, caller, method, path) -> allowed
CASES = [
    # Placement 16 out of the box: admins and services; a project's readers read its usages.
    ("secure", NOVA, "GET", "/resource_providers", True),
    ("secure", ADMIN, "GET", "/resource_providers", True),
    ("secure", MEMBER, "GET", "/resource_providers", False),
    ("secure", READER_A, "GET", "/usages?project_id=pa", True),
    ("secure", READER_A, "GET", "/usages?project_id=pb", False),
    ("secure", NOVA, "GET", "/api/servers/", True),
    ("secure", MEMBER, "GET", "/api/servers/", False),
    # enforce_new_defaults = False: the new defaults, or admin.
    ("legacy", NOVA, "GET", "/resource_providers", True),
    ("legacy", ADMIN, "GET", "/resource_providers", True),
    ("legacy", MEMBER, "GET", "/resource_providers", False),
    ("legacy", READER_A, "GET", "/usages?project_id=pa", True),
    ("legacy", READER_A, "GET", "/usages?project_id=pb", False),
    ("legacy", NOVA, "GET", "/api/servers/", True),
    ("legacy", MEMBER, "GET", "/api/servers/", False),
    # Admins only, as this service's legacy was before.
    ("admin-only", NOVA, "GET", "/resource_providers", False),
    ("admin-only", ADMIN, "GET", "/resource_providers", True),
    ("admin-only", READER_A, "GET", "/usages?project_id=pa", False),
    ("admin-only", NOVA, "GET", "/api/servers/", False),
    ("admin-only", ADMIN, "GET", "/api/servers/", True),
    # Any authenticated caller.
    ("open", MEMBER, "GET", "/resource_providers", True),
    ("open", MEMBER, "GET", "/api/servers/", True),
]


@pytest.mark.parametrize(
    ("flavour", "who", "method", "path", "allowed"),
    CASES,
    ids=[f"{c[0]}-{c[1]['token']}-{c[3]}" for c in CASES],
)
def test_who_may_do_what(api, defaults, flavour, who, method, path, allowed):
    defaults(flavour)
    response = api.request(method, path, **who)
    if allowed:
        assert response.status == 200, response
    else:
        assert response.status == 403, response


@pytest.mark.parametrize(
    ("flavour", "allowed"), [("secure", True), ("legacy", True), ("admin-only", False)]
)
def test_nova_with_the_service_role_writes_allocations(api, defaults, flavour, allowed):
    defaults(flavour)
    provider = make_provider(inventories={"VCPU": 8})
    response = api.put(f"/allocations/{new_uuid()}", allocation_body(provider), **NOVA)
    assert response.status == (204 if allowed else 403), response


@pytest.mark.parametrize(
    ("flavour", "who", "allowed"),
    [
        ("secure", NOVA, True),
        ("secure", ADMIN, False),  # the reshaper is the service's alone
        ("legacy", ADMIN, True),  # ... or admin's, by the deprecated rule
        ("legacy", NOVA, True),
        ("admin-only", NOVA, False),
        ("admin-only", ADMIN, True),
    ],
)
def test_reshaper(api, defaults, flavour, who, allowed):
    defaults(flavour)
    response = api.post("/reshaper", {"inventories": {}, "allocations": {}}, **who)
    assert (response.status != 403) == allowed, response


@pytest.mark.parametrize("flavour", ["secure", "legacy", "admin-only", "open"])
@pytest.mark.parametrize(
    "scope",
    [{"OpenStack-System-Scope": "all"}, {"X-Domain-Id": "default"}],
    ids=["system", "domain"],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/resource_providers"), ("PUT", "/traits/CUSTOM_SCOPED"), ("GET", "/api/servers/")],
)
def test_system_and_domain_scoped_tokens_are_refused(api, defaults, flavour, scope, method, path):
    defaults(flavour)
    response = api.request(method, path, headers={**scope, "X-Roles": "admin"})
    assert response.status == 403, response


def test_a_json_policy_file_overrides_a_rule(api, settings, tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps({"placement:resource_providers:list": "role:reader"}))
    settings.PLACEMENT_POLICY_FILE = str(path)
    assert status(api, "GET", "/resource_providers", READER_A) == 200
    assert status(api, "GET", "/resource_classes", READER_A) == 403


def test_a_policy_file_may_override_a_base_rule(api, settings, policy_file):
    policy_file({"admin_or_service_api": "role:admin or role:service or role:operator"})
    operator = {"token": "o:ops", "headers": {"X-Roles": "operator"}}
    assert status(api, "GET", "/resource_providers", operator) == 200


def test_an_unparsable_check_string_refuses(api, policy_file):
    policy_file({"placement:resource_providers:list": "role:admin and ("})
    assert status(api, "GET", "/resource_providers", ADMIN) == 403


def test_secure_is_the_default():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLACEMENT_POLICY")}
    env["DJANGO_SETTINGS_MODULE"] = "placementsite.settings"
    code = "from django.conf import settings; print(settings.PLACEMENT_POLICY_DEFAULTS)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "secure", done.stderr


def test_only_the_named_policy_file_is_read(api, monkeypatch, tmp_path):
    """No policy.yaml found by searching (the working directory, oslo.config's directories)."""
    (tmp_path / "policy.yaml").write_text('"placement:resource_providers:list": "!"\n')
    monkeypatch.chdir(tmp_path)
    assert status(api, "GET", "/resource_providers", ADMIN) == 200
