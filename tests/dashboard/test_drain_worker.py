"""The dashboard's drain with a real Celery worker on Redis: the page disables the host and
answers at once; the worker moves the servers off, and the Migrations page shows their moves
and the drain in its history."""

import re

import pytest
import requests
from django.contrib.auth import get_user_model
from django.test import Client

from providers.models import ComputeNode
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from scheduling.models import Flavor, LifecycleRecord, Migration, Server
from scheduling.services.servers import servers_create
from tests.gunicorn_server import running_gunicorn
from tests.providers.hosts import report

pytestmark = [pytest.mark.postgresql, pytest.mark.live, pytest.mark.redis]

PLUGINS = "vcpu,memory,disk"


def _logged_in(base, user):
    """A requests session logged in as ``user`` (a session made here, in the shared
    database), holding the dashboard's CSRF cookie."""
    client = Client()
    client.force_login(user)
    session = requests.Session()
    session.cookies.set("sessionid", client.cookies["sessionid"].value)
    assert session.get(f"{base}/dashboard/hosts/", timeout=30).status_code == 200
    return session


def test_a_worker_moves_the_servers_of_a_host_drained_from_the_dashboard(celery_worker, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    for name in ("compute-1", "compute-2"):
        compute_node_report(hostname=name, report=report())
    compute_nodes_sync()
    flavor = Flavor.objects.create(name="m1.small", vcpus=2, ram=2048, disk=10)
    for name in ("web-1", "web-2"):
        servers_create(
            name=name,
            flavor=flavor,
            project_id="p",
            user_id="u",
            hints={"target_host": "compute-1"},
        )
    root = get_user_model().objects.create_superuser("root", password="root-password-1")
    worker = celery_worker(env={"PLACEMENT_RESOURCE_PLUGINS": PLUGINS})
    env = {
        "PLACEMENT_RESOURCE_PLUGINS": PLUGINS,
        "CELERY_BROKER_URL": worker.broker_url,
        "CELERY_TASK_DEFAULT_QUEUE": worker.queue,
    }
    with running_gunicorn(workers=1, env=env) as base:
        session = _logged_in(base, root)
        response = session.post(
            f"{base}/dashboard/hosts/compute-1/drain/",
            data={"reason": "kernel upgrade", "csrfmiddlewaretoken": session.cookies["csrftoken"]},
            timeout=30,
        )
        assert response.url == f"{base}/dashboard/migrations/", response.text[-2000:]
        shown = " ".join(re.sub(r"<[^>]+>", " ", response.text).split())
        assert (
            "compute-1 is disabled (kernel upgrade) and draining: "
            "a worker is moving its 2 servers off." in shown
        )
        node = ComputeNode.objects.get(hostname="compute-1")
        assert (node.enabled, node.disabled_reason) == (False, "kernel upgrade")

        worker.wait_for(lambda: LifecycleRecord.objects.filter(action="drained").exists())
        assert {s.host.name for s in Server.objects.select_related("host")} == {"compute-2"}
        moves = Migration.objects.select_related("server")
        assert sorted((m.server.name, m.kind, m.status) for m in moves) == [
            ("web-1", "live-migrate", "migrating"),
            ("web-2", "live-migrate", "migrating"),
        ]
        page = session.get(f"{base}/dashboard/migrations/", timeout=30).text
    in_flight = page.split('id="in-flight"', 1)[1].split("</table>", 1)[0]
    assert "web-1" in in_flight and "web-2" in in_flight
    history = page.split('id="history"', 1)[1]
    assert "compute-1 (kernel upgrade): 2 servers moving, 0 not moved" in history
    assert LifecycleRecord.objects.get(action="drained").origin == "task"
