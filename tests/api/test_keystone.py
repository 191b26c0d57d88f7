"""PLACEMENT_AUTH_STRATEGY=keystone: keystonemiddleware's auth_token in front of the WSGI app.

Tokens are served by keystonemiddleware's own test fixture (AuthTokenFixture), so no Keystone
server is needed; every request goes through the real WSGI stack: auth_token, Django's handler,
the Placement plumbing and the views.
"""

import datetime as dt
import uuid

import pytest
import webob
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from keystoneauth1 import fixture as ksa_fixture
from keystonemiddleware.fixture import AuthTokenFixture

from placementsite.core.api import keystone
from tests.conftest import PlacementClient

pytestmark = pytest.mark.django_db

KEYSTONE_ENV = {
    "PLACEMENT_KEYSTONE_AUTH_URL": "http://keystone.example.test/identity",
    "PLACEMENT_KEYSTONE_WWW_AUTHENTICATE_URI": "http://keystone.example.test/identity",
    "PLACEMENT_KEYSTONE_USERNAME": "placement",
    "PLACEMENT_KEYSTONE_PASSWORD": "secret",
    "PLACEMENT_KEYSTONE_PROJECT_NAME": "service",
    "PLACEMENT_KEYSTONE_USER_DOMAIN_NAME": "Default",
    "PLACEMENT_KEYSTONE_PROJECT_DOMAIN_NAME": "Default",
    "PLACEMENT_KEYSTONE_REGION_NAME": "RegionOne",
}
HOUR = dt.timedelta(hours=1)


def utcnow():
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


@pytest.fixture
def tokens():
    with AuthTokenFixture() as fixture:
        yield fixture


@pytest.fixture
def wsgi_app(settings):
    """The WSGI application as placementsite.wsgi builds it with the keystone strategy."""
    settings.PLACEMENT_AUTH_STRATEGY = "keystone"
    # As Django's test client does: the test's transaction must outlive each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield keystone.wrap(WSGIHandler(), environ=KEYSTONE_ENV)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def call(wsgi_app):
    def call(path, token=None, method="GET", version="1.39", **headers):
        request = webob.Request.blank(path, method=method)
        if token is not None:
            request.headers["X-Auth-Token"] = token
        request.headers["OpenStack-API-Version"] = f"placement {version}"
        for name, value in headers.items():
            request.headers[name.replace("_", "-")] = value
        return request.get_response(wsgi_app)

    return call


def project_token(tokens, roles, project_id="p1", expires=None, user_id="u1"):
    token_id = uuid.uuid4().hex
    tokens.add_token_data(
        token_id=token_id,
        user_id=user_id,
        user_name=user_id,
        project_id=project_id,
        project_name=project_id,
        role_list=roles,
        expires=expires or utcnow() + HOUR,
    )
    return token_id


KEYSTONE_401 = {
    "error": {
        "code": 401,
        "title": "Unauthorized",
        "message": "The request you have made requires authentication.",
    }
}


def assert_keystone_401(response):
    """keystonemiddleware's own refusal, as the reference answers behind auth_token."""
    assert response.status_int == 401, response.body
    assert response.json == KEYSTONE_401
    assert response.headers["WWW-Authenticate"] == (
        'Keystone uri="http://keystone.example.test/identity"'
    )


def assert_placement_error(response, status):
    assert response.status_int == status
    error = response.json["errors"][0]
    assert error["status"] == status
    assert error["request_id"] == response.headers["openstack-request-id"]
    return error


def test_valid_admin_token_lists_providers(tokens, call):
    response = call("/resource_providers", project_token(tokens, ["admin", "member", "reader"]))
    assert response.status_int == 200, response.body
    assert response.json == {"resource_providers": []}


def test_no_token_is_keystonemiddlewares_401(call):
    assert_keystone_401(call("/resource_providers"))


def test_garbage_token_is_keystonemiddlewares_401(tokens, call):
    assert_keystone_401(call("/resource_providers", "not a token \u00e9"))


def test_unknown_token_is_401(tokens, call):
    assert_keystone_401(call("/resource_providers", uuid.uuid4().hex))


def test_revoked_token_is_401(tokens, call):
    token = project_token(tokens, ["admin"])
    tokens._token_data.pop(token)  # Keystone no longer validates it, as after a revocation
    assert_keystone_401(call("/resource_providers", token))


def test_expired_token_is_401(tokens, call):
    token = project_token(tokens, ["admin"], expires=utcnow() - dt.timedelta(minutes=1))
    assert_keystone_401(call("/resource_providers", token))


def test_api_refusals_stay_in_the_api_format(call):
    response = call("/api/flavors/")
    assert_placement_error(response, 401)
    assert response.json["errors"][0]["code"]


def test_root_and_healthcheck_need_no_token(call):
    assert call("/").status_int == 200
    assert call("/healthcheck").status_int == 200


def test_identity_headers_from_the_client_are_not_trusted(tokens, call):
    response = call(
        "/resource_providers",
        uuid.uuid4().hex,
        X_Identity_Status="Confirmed",
        X_Roles="admin",
        X_User_Id="mallory",
        X_Project_Id="p1",
    )
    assert_keystone_401(response)


def test_member_token_is_refused_by_admin_policy(tokens, call):
    response = call("/resource_providers", project_token(tokens, ["member", "reader"]))
    assert_placement_error(response, 403)


def test_project_scope_comes_from_the_token(tokens, call, settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    token = project_token(tokens, ["reader"], project_id="p1")
    assert call("/usages?project_id=p1", token).status_int == 200
    assert_placement_error(call("/usages?project_id=p2", token), 403)


def test_system_scoped_token_is_system_scoped(tokens, call, settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    token = ksa_fixture.V3Token(user_id="admin-user", expires=utcnow() + HOUR)
    token.set_system_scope()
    token.add_role(name="admin")
    token_id = tokens.add_token(token)
    # Placement's rules are project scoped: a system-scoped token is refused.
    assert_placement_error(call("/resource_providers", token_id), 403)


def domain_token(tokens, roles, domain_id="default"):
    token = ksa_fixture.V3Token(user_id="domain-admin", expires=utcnow() + HOUR)
    token.set_domain_scope(id=domain_id, name=domain_id)
    for role in roles:
        token.add_role(name=role)
    return tokens.add_token(token)


@pytest.mark.parametrize("defaults", ["secure", "legacy", "admin-only", "open"])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/resource_providers"),
        ("PUT", "/traits/CUSTOM_DOMAIN_MADE"),
        ("GET", "/usages?project_id=p1"),
        ("GET", "/api/servers/"),
        ("GET", "/api/flavors/"),
    ],
)
def test_domain_scoped_admin_is_refused(tokens, call, settings, defaults, method, path):
    settings.PLACEMENT_POLICY_DEFAULTS = defaults
    token = domain_token(tokens, ["admin", "member", "reader"])
    response = call(path, token, method=method)
    assert response.status_int == 403, response.body
    assert response.json["errors"][0]["status"] == 403


def test_legacy_service_role_writes_allocations_and_lists_providers(tokens, call, settings):
    """nova with the service role alone, under enforce_new_defaults = False."""
    settings.PLACEMENT_POLICY_DEFAULTS = "legacy"
    nova = project_token(tokens, ["service"], project_id="service", user_id="nova")
    assert call("/resource_providers", nova).status_int == 200
    assert call("/traits/CUSTOM_BY_NOVA", nova, method="PUT").status_int == 201


def test_legacy_reader_reads_its_own_projects_usages(tokens, call, settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "legacy"
    reader = project_token(tokens, ["reader"], project_id="pa")
    assert call("/usages?project_id=pa", reader).status_int == 200
    assert_placement_error(call("/usages?project_id=pb", reader), 403)


def test_valid_service_token_is_accepted(tokens, call):
    user = project_token(tokens, ["admin"])
    service = project_token(tokens, ["service"], project_id="service", user_id="nova")
    response = call("/resource_providers", user, X_Service_Token=service)
    assert response.status_int == 200


def test_invalid_service_token_is_401(tokens, call):
    user = project_token(tokens, ["admin"])
    response = call("/resource_providers", user, X_Service_Token=uuid.uuid4().hex)
    assert_keystone_401(response)


def test_service_token_without_the_service_role_is_401(tokens, call):
    user = project_token(tokens, ["admin"])
    service = project_token(tokens, ["member"], project_id="service", user_id="nova")
    response = call("/resource_providers", user, X_Service_Token=service)
    assert_keystone_401(response)


def test_keystone_strategy_without_the_middleware_refuses_everyone(settings, db):
    """Served without auth_token (e.g. manage.py runserver), no header is believed."""
    settings.PLACEMENT_AUTH_STRATEGY = "keystone"
    client = PlacementClient(token="anything", version="latest")
    response = client.get(
        "/resource_providers",
        headers={"X-Identity-Status": "Confirmed", "X-Roles": "admin", "X-User-Id": "x"},
    )
    assert response.status == 401


def test_options_come_from_a_placement_config_file(tmp_path):
    conf_file = tmp_path / "placement.conf"
    conf_file.write_text(
        "[keystone_authtoken]\n"
        "auth_type = password\n"
        "auth_url = http://keystone.file.test/identity\n"
        "www_authenticate_uri = http://keystone.file.test/identity\n"
        "username = placement\n"
        "password = from-file\n"
        "memcached_servers = 127.0.0.1:11211\n"
        "region_name = RegionTwo\n"
    )
    conf = keystone.auth_token_config(
        {
            "PLACEMENT_KEYSTONE_CONFIG_FILE": str(conf_file),
            "PLACEMENT_KEYSTONE_REGION_NAME": "RegionThree",
        }
    )
    section = conf["keystone_authtoken"]
    assert section.auth_url == "http://keystone.file.test/identity"
    assert section.password == "from-file"
    assert section.memcached_servers == ["127.0.0.1:11211"]
    assert section.region_name == "RegionThree"  # the environment wins over the file
    assert section.delay_auth_decision is True
    assert section.service_token_roles_required is True


def test_unknown_keystone_option_refuses_startup():
    with pytest.raises(ImproperlyConfigured, match="PLACEMENT_KEYSTONE_AUTH_ULR"):
        keystone.auth_token_config({**KEYSTONE_ENV, "PLACEMENT_KEYSTONE_AUTH_ULR": "x"})


def test_missing_config_file_refuses_startup(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="is not a file"):
        keystone.auth_token_config({"PLACEMENT_KEYSTONE_CONFIG_FILE": str(tmp_path / "no")})
