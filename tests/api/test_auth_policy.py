"""Authentication strategies, policy defaults, operator policy files and CORS."""

import os

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from placementsite.core.api import policy
from placementsite.core.api.auth import RequestContext
from placementsite.core.api.tokens import token_create
from tests.conftest import PlacementClient

pytestmark = pytest.mark.django_db

LIST = "/resource_classes"


@pytest.fixture
def token_auth(settings):
    settings.PLACEMENT_AUTH_STRATEGY = "token"
    return settings


def user_token(username, *groups, superuser=False, active=True):
    """A Django user in ``groups`` (its roles) and one of its API tokens."""
    users = get_user_model().objects
    if superuser:
        user = users.create_superuser(username, "", "pw-" + username)
    else:
        user = users.create_user(username, "", "pw-" + username)
    user.is_active = active
    user.save()
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return token_create(user=user)[1]


def client(token):
    return PlacementClient(token=token, version="1.39")


def create_class(token, name="CUSTOM_AUTH_TEST"):
    return client(token).post(LIST, {"name": name})


# --- the token strategy -------------------------------------------------------


def test_token_strategy_without_token_is_401(token_auth):
    r = client(None).get(LIST)
    assert r.status == 401
    assert r.error["title"] == "Unauthorized"


def test_token_strategy_with_unknown_token_is_401(token_auth):
    assert client("0" * 40).get(LIST).status == 401


def test_token_of_inactive_user_is_401(token_auth):
    key = user_token("gone", superuser=True, active=False)
    assert client(key).get(LIST).status == 401


def test_root_needs_no_token_with_token_strategy(token_auth):
    assert client(None).get("/").status == 200


def test_superuser_token_is_admin(token_auth):
    key = user_token("root", superuser=True)
    assert client(key).get(LIST).status == 200


def test_noauth2_admin_token_is_not_accepted_by_token_strategy(token_auth):
    assert client("admin").get(LIST).status == 401


def test_groups_become_roles_and_project(token_auth):
    from placementsite.core.api.auth import token_context

    key = user_token("svc", "service", "project:p-42", "system-scope")
    context = token_context({"HTTP_X_AUTH_TOKEN": key})
    assert context.roles == ["service"]
    assert context.project_id == "p-42"
    assert context.system_scope == "all"


def test_member_group_implies_reader(token_auth):
    from placementsite.core.api.auth import token_context

    key = user_token("mem", "member")
    assert token_context({"HTTP_X_AUTH_TOKEN": key}).roles == ["member", "reader"]


# --- legacy defaults ------------------------------------------------------------


def test_legacy_non_admin_is_403(token_auth):
    key = user_token("alice", "member", "project:p1")
    r = client(key).get(LIST)
    assert r.status == 403
    assert "placement:resource_classes:list" in r.error["detail"]


def test_legacy_admin_group_may_write(token_auth):
    key = user_token("ops", "admin")
    assert create_class(key).status == 201


def test_legacy_noauth2_user_is_403(db):
    assert client("alice:p1").get(LIST).status == 403


# --- secure defaults --------------------------------------------------------------


@pytest.fixture
def secure(token_auth):
    token_auth.PLACEMENT_POLICY_DEFAULTS = "secure"
    return token_auth


def test_secure_system_reader_is_refused(secure):
    key = user_token("auditor", "reader", "system-scope")
    assert client(key).get(LIST).status == 403
    assert create_class(key).status == 403


def test_secure_project_reader_may_not_list(secure):
    key = user_token("tenant", "reader", "project:p1")
    assert client(key).get(LIST).status == 403


def test_secure_service_may_write(secure):
    key = user_token("nova", "service", "project:services")
    assert create_class(key).status == 201


def test_secure_admin_may_write(secure):
    key = user_token("ops", "admin")
    assert create_class(key).status == 201


def test_secure_member_may_not_write(secure):
    key = user_token("bob", "member", "project:p1")
    assert create_class(key).status == 403


def test_secure_with_noauth2_roles_header(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    service = {"X-Roles": "service"}
    reader = {"X-Roles": "reader"}
    assert client("nova:services").get(LIST, headers=service).status == 200
    assert client("auditor:p1").get(LIST, headers=reader).status == 403


def context(*roles, project="p1", system_scope=None):
    return RequestContext(
        user_id="u1", project_id=project, roles=list(roles), system_scope=system_scope
    )


def test_secure_usages_allowed_to_reader_of_the_same_project(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    assert policy.check("placement:usages", context("reader"), {"project_id": "p1"})


def test_secure_usages_refused_to_reader_of_another_project(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    assert not policy.check("placement:usages", context("reader"), {"project_id": "p2"})


def test_secure_usages_refused_to_system_reader(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    reader = context("reader", project=None, system_scope="all")
    assert not policy.check("placement:usages", reader, {"project_id": "p2"})


def test_secure_usages_of_own_project_over_http(settings):
    """The project comes from X-Project-Id, as oslo.context reads it."""
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    own = {"X-Roles": "member,reader", "X-Project-Id": "p-own"}
    r = client("user").get("/usages?project_id=p-own", headers=own)
    assert r.status == 200
    assert r.json == {"usages": {}}
    assert client("user").get("/usages?project_id=p-other", headers=own).status == 403


def test_secure_reshaper_is_for_the_service_role_only(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    body = {"inventories": {}, "allocations": {}}
    admin = {"X-Roles": "admin,member,reader", "X-Project-Id": "p1"}
    service = {"X-Roles": "service", "X-Project-Id": "services"}
    assert client("user").post("/reshaper", body, headers=admin).status == 403
    # Past the policy check: the empty reshape is refused by the schema, not by policy.
    assert client("user").post("/reshaper", body, headers=service).status == 400


# --- scope: every rule is project scoped ------------------------------------------------

SYSTEM_ADMIN = {"X-Roles": "admin,member,reader", "OpenStack-System-Scope": "all"}


@pytest.mark.parametrize("defaults", ["legacy", "secure", "open"])
def test_system_scoped_admin_is_refused_everywhere(settings, defaults):
    settings.PLACEMENT_POLICY_DEFAULTS = defaults
    r = client("admin").get(LIST, headers=SYSTEM_ADMIN)
    assert r.status == 403
    assert "placement:resource_classes:list" in r.error["detail"]
    assert create_class("admin").status == 201  # the same token, project scoped
    assert client("admin").post(LIST, {"name": "CUSTOM_B"}, headers=SYSTEM_ADMIN).status == 403


def test_system_scope_still_reads_the_root(db):
    assert client("admin").get("/", headers=SYSTEM_ADMIN).status == 200


def test_system_scope_beats_a_policy_file_that_allows_all(settings, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:resource_classes:list": "@"\n')
    settings.PLACEMENT_POLICY_FILE = str(path)
    assert client("admin").get(LIST, headers=SYSTEM_ADMIN).status == 403


def test_noauth2_context_project_and_roles():
    from placementsite.core.api.auth import noauth2_context

    plain = noauth2_context({"HTTP_X_AUTH_TOKEN": "alice:p1"})
    assert (plain.project_id, plain.roles, plain.system_scope) == ("p1", [], None)
    assert noauth2_context({"HTTP_X_AUTH_TOKEN": "admin"}).roles == ["admin"]
    header = noauth2_context({"HTTP_X_AUTH_TOKEN": "alice:p1", "HTTP_X_PROJECT_ID": "p9"})
    assert header.project_id == "p9"
    system = noauth2_context(
        {"HTTP_X_AUTH_TOKEN": "alice:p1", "HTTP_OPENSTACK_SYSTEM_SCOPE": "all"}
    )
    assert (system.project_id, system.system_scope) == (None, "all")


def test_superuser_token_is_project_scoped(token_auth):
    """A superuser is an admin, never system scoped (which would lock it out)."""
    from placementsite.core.api.auth import token_context

    key = user_token("root", superuser=True)
    context = token_context({"HTTP_X_AUTH_TOKEN": key})
    assert context.system_scope is None
    assert "admin" in context.roles


def test_secure_usages_refused_to_project_member_without_reader_role(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    assert not policy.check("placement:usages", context("member"), {"project_id": "p1"})


# --- open defaults ------------------------------------------------------------------


def test_open_lets_any_authenticated_user_write(token_auth):
    token_auth.PLACEMENT_POLICY_DEFAULTS = "open"
    key = user_token("bob", "member", "project:p1")
    assert create_class(key).status == 201


def test_open_still_needs_a_token(token_auth):
    token_auth.PLACEMENT_POLICY_DEFAULTS = "open"
    assert client(None).get(LIST).status == 401


def test_open_keeps_admin_api_for_admins(settings):
    settings.PLACEMENT_POLICY_DEFAULTS = "open"
    assert not policy.check("admin_api", context("member"))
    assert policy.check("admin_api", context("admin"))


# --- decisions remembered -------------------------------------------------------------


def oslo_decisions(monkeypatch):
    """The decisions oslo.policy is asked for from now on, as ``(rule, project)``."""
    asked = []
    engine = policy.enforcer()
    authorize = engine.authorize

    def counting(rule, target, credentials, *args, **kwargs):
        asked.append((rule, credentials["project_id"]))
        return authorize(rule, target, credentials, *args, **kwargs)

    monkeypatch.setattr(engine, "authorize", counting)
    return asked


def test_the_same_callers_decision_is_taken_once_over_http(monkeypatch, db):
    """Without a policy file the registered defaults decide alike each time: oslo.policy is
    asked once per caller and rule, and every answer is the same."""
    asked = oslo_decisions(monkeypatch)
    reader = {"X-Roles": "reader"}
    assert [client("alice:p1").get(LIST, headers=reader).status for _ in range(3)] == [403] * 3
    assert [client("admin").get(LIST).status for _ in range(3)] == [200] * 3
    assert client("bob:p2").get(LIST, headers=reader).status == 403
    assert [project for _rule, project in asked[::2]] == ["p1", "p2"]
    assert [rule for rule, _project in asked] == ["placement:resource_classes:list"] * 3


def test_a_rule_registered_later_forgets_the_decisions(monkeypatch, db):
    asked = oslo_decisions(monkeypatch)
    assert policy.check("admin_api", context("admin"))
    assert policy.check("admin_api", context("admin"))
    policy.enforcer().register_default(policy.rule("test:later", "@", "A test's rule."))
    assert policy.check("admin_api", context("admin"))
    assert asked == [("admin_api", "p1"), ("admin_api", "p1")]


def test_policy_file_decisions_are_taken_each_time(monkeypatch, policy_file):
    policy_file({"placement:resource_classes:list": "@"})
    asked = oslo_decisions(monkeypatch)
    assert [client("admin").get(LIST).status for _ in range(2)] == [200, 200]
    assert len(asked) == 2


# --- operator policy file -------------------------------------------------------------


def test_policy_file_overrides_one_rule(token_auth, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:resource_classes:list": "role:reader"\n')
    token_auth.PLACEMENT_POLICY_FILE = str(path)
    key = user_token("viewer", "reader", "project:p1")
    assert client(key).get(LIST).status == 200
    assert create_class(key).status == 403  # every other rule keeps its default


def test_policy_file_can_forbid_admins(settings, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:resource_classes:create": "!"\n')
    settings.PLACEMENT_POLICY_FILE = str(path)
    assert create_class("admin").status == 403
    assert client("admin").get(LIST).status == 200


def test_policy_file_edits_are_picked_up(settings, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:resource_classes:list": "!"\n')
    settings.PLACEMENT_POLICY_FILE = str(path)
    assert client("admin").get(LIST).status == 403
    path.write_text('"placement:resource_classes:list": "@"\n')
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert client("admin").get(LIST).status == 200


def test_policy_rule_may_refer_to_another_rule(settings, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text(
        '"readers": "role:reader and not role:banned"\n'
        '"placement:resource_classes:list": "rule:readers"\n'
    )
    settings.PLACEMENT_POLICY_FILE = str(path)
    plain = {"X-Roles": "reader"}
    banned = {"X-Roles": "reader,banned"}
    assert client("alice:p1").get(LIST, headers=plain).status == 200
    assert client("alice:p1").get(LIST, headers=banned).status == 403


# --- CORS ---------------------------------------------------------------------------------

ORIGIN = "https://dashboard.example.org"


@pytest.fixture
def cors(settings):
    settings.CORS_ALLOWED_ORIGINS = [ORIGIN]
    settings.CORS_URLS_REGEX = r"^.*$"
    return settings


def test_cors_allowed_origin_gets_allow_origin(cors):
    r = client("admin").get(LIST, headers={"Origin": ORIGIN})
    assert r.status == 200
    assert r.headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "openstack-api-version" in r.headers["Access-Control-Expose-Headers"]


def test_cors_vary_keeps_the_microversion_header(cors):
    r = client("admin").get(LIST, headers={"Origin": ORIGIN})
    vary = [v.strip().lower() for v in r.headers["Vary"].split(",")]
    assert vary == ["openstack-api-version", "origin"]


def test_cors_other_origin_gets_no_allow_origin(cors):
    r = client("admin").get(LIST, headers={"Origin": "https://evil.example.com"})
    assert "Access-Control-Allow-Origin" not in r.headers


def test_cors_preflight_needs_no_token(cors):
    r = client(None).request(
        "OPTIONS",
        LIST,
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "x-auth-token, openstack-api-version",
        },
    )
    assert r.status == 200
    assert r.headers["Access-Control-Allow-Origin"] == ORIGIN
    allowed = r.headers["Access-Control-Allow-Headers"]
    assert "x-auth-token" in allowed
    assert "openstack-api-version" in allowed


def test_cors_preflight_echoes_only_the_requested_allowed_headers(cors):
    r = client(None).request(
        "OPTIONS",
        "/",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "OpenStack-API-Version, x-not-allowed",
        },
    )
    assert r.status == 200
    assert r.headers["Access-Control-Allow-Headers"] == "openstack-api-version"


def test_cors_off_without_allowed_origins(db):
    r = client("admin").get(LIST, headers={"Origin": ORIGIN})
    assert "Access-Control-Allow-Origin" not in r.headers
    assert r.headers["Vary"] == "openstack-api-version"


def test_cors_origins_setting_enables_the_middleware(monkeypatch):
    """PLACEMENT_CORS_ALLOWED_ORIGINS is what turns CORS on, at settings import."""
    import importlib

    import placementsite.settings as site_settings

    monkeypatch.setenv("PLACEMENT_CORS_ALLOWED_ORIGINS", f"{ORIGIN}, https://b.example")
    try:
        reloaded = importlib.reload(site_settings)
        assert reloaded.CORS_ALLOWED_ORIGINS == [ORIGIN, "https://b.example"]
        assert reloaded.CORS_URLS_REGEX == r"^.*$"
        assert reloaded.MIDDLEWARE[0] == "placementsite.core.api.cors.CorsMiddleware"
    finally:
        monkeypatch.delenv("PLACEMENT_CORS_ALLOWED_ORIGINS")
        importlib.reload(site_settings)


def test_token_user_and_groups_are_read_in_one_statement(token_auth):
    """The token strategy reads the token, its user and the user's groups in one round trip
    per request; the roles and project are those of the groups, as the dashboard's context."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from placementsite.core.api import auth

    key = user_token("operator", "service", "project:p7")
    user = get_user_model().objects.get(username="operator")
    with CaptureQueriesContext(connection) as captured:
        assert client(key).get(LIST).status == 200
    token_reads = [q["sql"] for q in captured.captured_queries if "knox_authtoken" in q["sql"]]
    assert len(token_reads) == 1 and "auth_user_groups" in token_reads[0]
    context = auth.token_context({auth.TOKEN_HEADER: key})
    assert context == auth.user_context(user)
    assert (context.project_id, context.roles) == ("p7", ["service"])
