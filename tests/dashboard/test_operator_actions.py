"""The dashboard's actions that came with their own API endpoints: drain a host, manage server
groups and resource pools. Each is a POST with CSRF that calls the owning app's service, says
what came of it, and is refused (403 page, nothing done) without the admin's permission for the
same change or the API endpoint's policy rule for the same user."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from placementsite.celery import app as celery_app
from providers.models import ComputeNode, ResourcePool
from scheduling.models import Flavor, Migration, Server, ServerGroup, ServerGroupMember
from scheduling.tasks import drain_host
from tests.dashboard.test_pools_page import pooled  # noqa: F401 (a fixture)
from tests.providers.hosts import report, sync
from tests.scheduling.move_helpers import boot_one, setup_hosts
from tests.scheduling.scheduler_helpers import boot, make_flavor

pytestmark = pytest.mark.django_db

VIEW_HOSTS = ["view_computenode", "view_resourceprovider", "view_inventory", "view_allocation"]
VIEW_HOSTS += ["view_consumer"]
VIEW_POOLS = ["view_resourcepool", "view_resourceprovider", "view_inventory", "view_allocation"]
VIEW_GROUPS = ["view_servergroup", "view_server"]


def _user(name, codenames, roles=(), projects=()):
    """A staff user with these admin permissions and, as groups, these API roles and
    projects (what their API token would carry)."""
    user = get_user_model().objects.create_user(name, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    for group in [*roles, *(f"project:{p}" for p in projects)]:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _post(client, url, data=None, *, page="/dashboard/"):
    """A POST as the browser sends it: with the CSRF token of ``page`` (a GET first)."""
    client.get(page)
    token = client.cookies["csrftoken"].value
    return client.post(url, {**(data or {}), "csrfmiddlewaretoken": token})


def _messages(client, page):
    html = client.get(page).content.decode()
    return html.split('id="messages"', 1)[1].split("</div>", 1)[0] if "messages" in html else ""


# --- drain a host ----------------------------------------------------------------------------


@pytest.fixture
def eager_tasks():
    """The drain's task runs in this process when the page asks for it (as a worker would:
    tests/dashboard/test_drain_worker.py has a real one)."""
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


@pytest.fixture
def loaded(api, settings, eager_tasks):
    """cn1 and cn2, compute hosts that reported and were synced; two servers on cn1."""
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    for name in ("cn1", "cn2"):
        assert api.put(f"/api/compute-nodes/{name}/", report()).status == 201
    sync()
    make_flavor(api, "m1.small", vcpus=2, ram=1024, disk=10)
    servers = []
    for i in range(2):
        booted = boot(api, name=f"web-{i}", scheduler_hints={"target_host": "cn1"})
        assert booted.status == 201, booted
        servers.append(booted.json["servers"][0])
    providers = api.get("/resource_providers").json["resource_providers"]
    return {p["name"]: p["uuid"] for p in providers}, servers


def _host_page(hosts, name="cn1"):
    return f"/dashboard/providers/{hosts[name]}/"


def test_a_host_is_drained_from_its_page(api, loaded):
    hosts, servers = loaded
    settles = ["view_migration", "view_lifecyclerecord"]
    admin = _user("drainer", [*VIEW_HOSTS, "change_computenode", *settles], roles=["admin"])
    page = admin.get(_host_page(hosts)).content.decode()
    assert 'action="/dashboard/hosts/cn1/drain/"' in page
    r = _post(admin, "/dashboard/hosts/cn1/drain/", {"reason": "DIMM swap"})
    # No "next": the Migrations page, where the moves it started are settled.
    assert r.status_code == 302 and r["Location"] == "/dashboard/migrations/"
    node = ComputeNode.objects.get(hostname="cn1")
    assert (node.enabled, node.disabled_reason) == (False, "DIMM swap")
    moves = Migration.objects.filter(server__uuid__in=[s["id"] for s in servers])
    assert sorted(m.status for m in moves) == ["migrating", "migrating"]
    assert {s.host.name for s in Server.objects.all()} == {"cn2"}
    page = admin.get("/dashboard/migrations/").content.decode()
    shown = page.split('id="messages"', 1)[1].split("</div>", 1)[0]
    assert "cn1 is disabled (DIMM swap) and draining: a worker is moving its 2 servers off." in (
        " ".join(shown.split())
    )
    history = page.split('id="history"', 1)[1]
    assert "host drained" in history and "cn1 (DIMM swap): 2 servers moving, 0 not moved" in history


def test_a_drain_records_the_servers_it_could_not_move(api, loaded):
    hosts, _servers = loaded
    assert api.request("PATCH", "/api/compute-nodes/cn2/", {"enabled": False}).status == 200
    admin = _user("drainer", [*VIEW_HOSTS, "change_computenode"], roles=["admin"])
    _post(admin, "/dashboard/hosts/cn1/drain/", {"next": _host_page(hosts)})
    assert "cn1 is disabled (drained) and draining" in _messages(admin, _host_page(hosts))
    assert not Migration.objects.filter(status="migrating").exists()
    settler = _user("settler", ["view_migration", "view_lifecyclerecord", "view_allocation"])
    history = settler.get("/dashboard/migrations/?action=drain_refused").content.decode()
    history = history.split('id="history"', 1)[1]
    assert "web-0 stays on cn1: " in history and "web-1 stays on cn1: " in history
    assert "server not moved by a drain" in history
    drained = settler.get("/dashboard/migrations/?action=drained").content.decode()
    assert "cn1 (drained): 0 servers moving, 2 not moved" in drained


def test_a_drain_the_broker_cannot_take_leaves_the_host_disabled_and_says_so(
    api, loaded, monkeypatch
):
    from kombu.exceptions import OperationalError

    def refused(*args, **kwargs):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(drain_host, "apply_async", refused)
    hosts, _servers = loaded
    admin = _user("drainer", [*VIEW_HOSTS, "change_computenode"], roles=["admin"])
    r = _post(admin, "/dashboard/hosts/cn1/drain/", {"reason": "fan", "next": _host_page(hosts)})
    assert r.status_code == 302
    shown = " ".join(_messages(admin, _host_page(hosts)).split())
    assert "cn1 is disabled (fan), but no worker could be asked to move its 2 servers" in shown
    assert not ComputeNode.objects.get(hostname="cn1").enabled
    assert not Migration.objects.exists()
    assert {s.host.name for s in Server.objects.all()} == {"cn1"}


def test_draining_needs_the_change_permission_and_the_drain_policy(api, loaded):
    hosts, _servers = loaded
    # The admin's permission without the API's admin role (the drain rule is admin only).
    changer = _user("changer", [*VIEW_HOSTS, "change_computenode"], roles=["member"])
    assert (
        'action="/dashboard/hosts/cn1/drain/"'
        not in changer.get(_host_page(hosts)).content.decode()
    )
    r = _post(changer, "/dashboard/hosts/cn1/drain/", {"reason": "x"})
    assert r.status_code == 403
    assert "placement:api:compute_nodes:drain does not allow you" in r.content.decode()
    # The API's admin role without the admin's permission.
    viewer = _user("viewer", VIEW_HOSTS, roles=["admin"])
    r = _post(viewer, "/dashboard/hosts/cn1/drain/", {"reason": "x"})
    assert r.status_code == 403 and "You may not change hosts" in r.content.decode()
    assert ComputeNode.objects.get(hostname="cn1").enabled
    assert not Migration.objects.exists()


def test_a_drain_needs_a_post_with_the_csrf_token(api, loaded):
    admin = _user("drainer", [*VIEW_HOSTS, "change_computenode"], roles=["admin"])
    assert admin.get("/dashboard/hosts/cn1/drain/").status_code == 405
    assert admin.post("/dashboard/hosts/cn1/drain/").status_code == 403  # no token
    assert ComputeNode.objects.get(hostname="cn1").enabled


def test_draining_an_unknown_host_is_a_404(api, loaded):
    admin = _user("drainer", [*VIEW_HOSTS, "change_computenode"], roles=["admin"])
    assert _post(admin, "/dashboard/hosts/nope/drain/").status_code == 404


# --- resource pools --------------------------------------------------------------------------


def _pool_admin():
    codenames = [*VIEW_POOLS, "change_resourcepool", "delete_resourcepool"]
    return _user("pool-admin", codenames, roles=["admin"])


def test_a_pool_is_disabled_with_a_reason_and_enabled(pooled):  # noqa: F811
    admin = _pool_admin()
    page = admin.get("/dashboard/pools/").content.decode()
    assert 'action="/dashboard/pools/ceph1/disable/"' in page
    _post(admin, "/dashboard/pools/ceph1/disable/", {"reason": "firmware"})
    pool = ResourcePool.objects.get(name="ceph1")
    assert (pool.enabled, pool.disabled_reason) == (False, "firmware")
    assert "Pool ceph1 is disabled: firmware" in _messages(admin, "/dashboard/pools/")
    assert pooled.get("/api/resource-pools/ceph1/").json["enabled"] is False  # as the API sees
    _post(admin, "/dashboard/pools/ceph1/enable/")
    assert ResourcePool.objects.get(name="ceph1").enabled
    assert "Pool ceph1 is enabled." in _messages(admin, "/dashboard/pools/")


def test_disabling_a_pool_without_a_reason_is_refused(pooled):  # noqa: F811
    admin = _pool_admin()
    _post(admin, "/dashboard/pools/ceph1/disable/", {"reason": "  "})
    assert ResourcePool.objects.get(name="ceph1").enabled
    assert "Say why pool ceph1 is disabled" in _messages(admin, "/dashboard/pools/")


def test_only_an_unused_pool_is_deleted(pooled):  # noqa: F811
    admin = _pool_admin()
    page = admin.get("/dashboard/pools/").content.decode()
    # ceph1 holds 300 GB: no button, and the service refuses a forged POST.
    assert 'action="/dashboard/pools/ceph1/delete/"' not in page
    assert 'action="/dashboard/pools/net1/delete/"' in page
    _post(admin, "/dashboard/pools/ceph1/delete/")
    assert ResourcePool.objects.filter(name="ceph1").exists()
    assert "cannot be deleted: allocations are held" in _messages(admin, "/dashboard/pools/")
    _post(admin, "/dashboard/pools/net1/delete/")
    assert not ResourcePool.objects.filter(name="net1").exists()
    assert "Pool net1 is deleted" in _messages(admin, "/dashboard/pools/")


def test_an_unknown_pool_says_so(pooled):  # noqa: F811
    admin = _pool_admin()
    _post(admin, "/dashboard/pools/nope/enable/")
    assert "No resource pool nope" in _messages(admin, "/dashboard/pools/")


def test_pool_actions_need_the_permissions_and_the_policy(pooled):  # noqa: F811
    # Change and delete permissions, but the API's member role only (update and delete are
    # admin or service; delete admin only).
    member = _user(
        "member", [*VIEW_POOLS, "change_resourcepool", "delete_resourcepool"], roles=["member"]
    )
    page = member.get("/dashboard/pools/").content.decode()
    assert "/disable/" not in page and "/delete/" not in page
    for verb, data in (("disable", {"reason": "x"}), ("delete", {})):
        r = _post(member, f"/dashboard/pools/net1/{verb}/", data)
        assert r.status_code == 403, verb
        assert "does not allow you" in r.content.decode()
    # A service may disable a pool through the API, never delete one: so here.
    service = _user(
        "svc", [*VIEW_POOLS, "change_resourcepool", "delete_resourcepool"], roles=["service"]
    )
    assert _post(service, "/dashboard/pools/net1/delete/").status_code == 403
    viewer = _user("viewer", VIEW_POOLS, roles=["admin"])
    assert _post(viewer, "/dashboard/pools/net1/disable/", {"reason": "x"}).status_code == 403
    assert ResourcePool.objects.get(name="net1").enabled
    assert _post(service, "/dashboard/pools/net1/disable/", {"reason": "x"}).status_code == 302
    assert not ResourcePool.objects.get(name="net1").enabled


# --- server groups ---------------------------------------------------------------------------


GROUP_ADMIN = [*VIEW_GROUPS, "add_servergroup", "delete_servergroup"]


def test_a_group_is_created_listed_with_its_members_and_deleted(api):
    setup_hosts(api)
    admin = _user("group-admin", GROUP_ADMIN, roles=["admin"])
    r = _post(
        admin,
        "/dashboard/server-groups/create/",
        {"name": "web", "policy": "anti-affinity", "max_server_per_host": "2", "project_id": "p1"},
    )
    assert r.status_code == 302 and r["Location"] == "/dashboard/server-groups/"
    group = ServerGroup.objects.get(name="web")
    assert (group.policy, group.rules, group.project_id) == (
        "anti-affinity",
        {"max_server_per_host": 2},
        "p1",
    )
    assert "Server group web (anti-affinity) is created." in _messages(
        admin, "/dashboard/server-groups/"
    )
    server = boot_one(api, name="web-a", scheduler_hints={"group": str(group.uuid)})
    page = admin.get("/dashboard/server-groups/").content.decode()
    row = page.split('data-group="web"', 1)[1].split("</tr>", 1)[0]
    assert "max 2 per host" in row and ">web-a<" in row and f">{server['host']}<" in row
    _post(admin, f"/dashboard/server-groups/{group.uuid}/delete/")
    assert not ServerGroup.objects.exists()
    assert Server.objects.filter(uuid=server["id"]).exists()  # the server keeps running
    assert "Server group web is deleted" in _messages(admin, "/dashboard/server-groups/")


def test_a_group_the_service_refuses_says_why(db):
    admin = _user("group-admin", GROUP_ADMIN, roles=["admin"])
    data = {"name": "db", "policy": "affinity", "max_server_per_host": "2", "project_id": "p1"}
    _post(admin, "/dashboard/server-groups/create/", data)
    assert not ServerGroup.objects.exists()
    assert "only the anti-affinity policy takes rules" in _messages(
        admin, "/dashboard/server-groups/"
    )


def test_a_bad_group_form_is_shown_again_with_its_errors(db):
    admin = _user("group-admin", GROUP_ADMIN, roles=["admin"])
    r = _post(admin, "/dashboard/server-groups/create/", {"name": "", "policy": "nope"})
    assert r.status_code == 400
    body = r.content.decode()
    assert 'aria-label="Dashboard"' in body and "field-error" in body
    assert not ServerGroup.objects.exists()


def test_a_member_manages_its_own_projects_groups_only(db):
    """As the API's rule: a project's members manage its groups; admins any project's."""
    member = _user("member", GROUP_ADMIN, roles=["member"], projects=["p1"])
    ok = {"name": "mine", "policy": "affinity", "project_id": "p1"}
    assert _post(member, "/dashboard/server-groups/create/", ok).status_code == 302
    other = {"name": "theirs", "policy": "affinity", "project_id": "p2"}
    r = _post(member, "/dashboard/server-groups/create/", other)
    assert r.status_code == 403 and "placement:api:server_groups:create" in r.content.decode()
    assert list(ServerGroup.objects.values_list("name", flat=True)) == ["mine"]
    theirs = ServerGroup.objects.create(name="theirs", policy="affinity", project_id="p2")
    page = member.get("/dashboard/server-groups/").content.decode()
    assert f"/dashboard/server-groups/{theirs.uuid}/delete/" not in page
    assert _post(member, f"/dashboard/server-groups/{theirs.uuid}/delete/").status_code == 403
    assert ServerGroup.objects.filter(pk=theirs.pk).exists()


def test_group_actions_need_the_admins_permissions(db):
    viewer = _user("viewer", VIEW_GROUPS, roles=["admin"])
    group = ServerGroup.objects.create(name="g", policy="affinity", project_id="p1")
    page = viewer.get("/dashboard/server-groups/").content.decode()
    assert 'id="server-group-create"' not in page and "/delete/" not in page
    data = {"name": "x", "policy": "affinity", "project_id": "p1"}
    r = _post(viewer, "/dashboard/server-groups/create/", data)
    assert r.status_code == 403 and "You may not create server groups" in r.content.decode()
    assert _post(viewer, f"/dashboard/server-groups/{group.uuid}/delete/").status_code == 403
    assert list(ServerGroup.objects.values_list("name", flat=True)) == ["g"]
    assert viewer.post("/dashboard/server-groups/create/").status_code == 403  # no CSRF token


def test_deleting_an_unknown_group_is_a_404(db):
    admin = _user("group-admin", GROUP_ADMIN, roles=["admin"])
    r = _post(admin, "/dashboard/server-groups/00000000-0000-4000-8000-000000000000/delete/")
    assert r.status_code == 404


def test_the_groups_page_is_paged_newest_first_and_filtered(db):
    viewer = _user("viewer", VIEW_GROUPS)
    for i in range(55):
        ServerGroup.objects.create(name=f"g{i:02d}", policy="affinity", project_id=f"p{i % 2}")
    first = viewer.get("/dashboard/server-groups/").content.decode()
    assert "55 groups" in first and 'data-group="g54"' in first and 'data-group="g04"' not in first
    second = viewer.get("/dashboard/server-groups/?page=2").content.decode()
    assert 'data-group="g04"' in second and 'data-group="g05"' not in second
    filtered = viewer.get("/dashboard/server-groups/?q=g1").content.decode()
    assert filtered.count("data-group=") == 10  # g10..g19


def _groups_with_members(count, flavor):
    for i in range(count):
        group = ServerGroup.objects.create(name=f"q{i}", policy="affinity", project_id=f"p{i}")
        for j in range(2):
            server = Server.objects.create(
                name=f"s{i}-{j}", flavor=flavor, project_id=f"p{i}", user_id="u"
            )
            ServerGroupMember.objects.create(group=group, server=server)


def test_the_groups_page_costs_the_same_queries_for_one_group_or_many(db):
    admin = _user("group-admin", GROUP_ADMIN, roles=["admin"])
    flavor = Flavor.objects.create(name="m1.tiny", vcpus=1, ram=512, disk=1)
    _groups_with_members(1, flavor)
    admin.get("/dashboard/server-groups/")
    with CaptureQueriesContext(connection) as one:
        admin.get("/dashboard/server-groups/")
    _groups_with_members(30, flavor)
    with CaptureQueriesContext(connection) as many:
        page = admin.get("/dashboard/server-groups/").content.decode()
    assert page.count('data-action="delete"') == 31
    assert len(many.captured_queries) == len(one.captured_queries)
