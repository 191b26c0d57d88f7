"""A multi-instance boot is all or nothing, even when its request dies mid-way (the API worker
killed, the database restarted), and a create retried with the same ``Idempotency-Key``
returns the servers of the first one instead of booting them again.

The request runs in a thread of its own (its own database connection); a hook pauses it right
after one of its allocation writes, so that the test can look from another connection and then
kill the request's database session, as a worker killed mid-boot or a database restart does.
"""

import os
import select
import signal
import threading
import time

import pytest
from django.db import connection

from allocations.models import Allocation, Consumer
from allocations.services import allocations as allocation_service
from scheduling.models import Server
from tests.conftest import PlacementClient
from tests.scheduling.scheduler_helpers import make_flavor, make_host, usage

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]

KEY = "boot-7f3c"


@pytest.fixture
def cloud():
    api = PlacementClient(version="latest")
    make_flavor(api, "f", vcpus=2, ram=2048, disk=10)
    hosts = [make_host(api, f"cn{i}") for i in range(3)]  # 4 instances each
    return api, hosts


def create(api, *, count=3, key=KEY, name="web", project_id="p1"):
    headers = {"Idempotency-Key": key} if key is not None else {}
    body = {"name": name, "flavor": "f", "project_id": project_id, "user_id": "u1"}
    return api.post("/api/servers/", {**body, "count": count}, headers=headers)


class PausedWrite:
    """Pauses the request thread after its ``after``-th allocation write (of a boot: a claim)
    until released; records the database session it runs in."""

    def __init__(self, monkeypatch, after):
        self.after = after
        self.writes = 0
        self.reached = threading.Event()
        self.release = threading.Event()
        self.backend_pid = None
        original = allocation_service._AllocationWrite.run

        def run(write, *args, **kwargs):
            result = original(write, *args, **kwargs)
            self.writes += 1
            if self.writes == self.after:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_backend_pid()")
                    self.backend_pid = cursor.fetchone()[0]
                self.reached.set()
                assert self.release.wait(30), "never released"
            return result

        monkeypatch.setattr(allocation_service._AllocationWrite, "run", run)


def in_thread(work):
    """Start ``work()`` in a thread with its own connection; returns (thread, outcome)."""
    outcome = {}

    def run():
        try:
            outcome["response"] = work()
        except Exception as exc:  # the killed request's error, looked at by the test
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def kill_session(pid):
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])


def nothing_held(api, hosts):
    assert Server.objects.count() == 0
    assert Consumer.objects.count() == 0
    assert Allocation.objects.count() == 0
    assert api.get("/api/servers/").json["count"] == 0
    for host in hosts:
        assert usage(api, host) == {"VCPU": 0, "MEMORY_MB": 0, "DISK_GB": 0}


def test_a_boot_in_flight_shows_none_of_its_servers(cloud, monkeypatch):
    api, hosts = cloud
    pause = PausedWrite(monkeypatch, after=1)
    thread, outcome = in_thread(lambda: create(PlacementClient(version="latest"), key=None))
    assert pause.reached.wait(30)
    try:
        # The instances are claimed; another connection sees none of them yet.
        assert Server.objects.count() == 0
        assert Allocation.objects.count() == 0
    finally:
        pause.release.set()
        thread.join(30)
    assert outcome["response"].status == 201, outcome
    assert Server.objects.count() == 3


def boot_killed_after_writes(writes):
    """Run a create in a forked process (its own connection) and SIGKILL it right after its
    ``writes``-th allocation write: the API worker killed mid-boot, no Python cleanup runs."""
    reached_r, reached_w = os.pipe()
    connection.close()  # the child opens its own
    pid = os.fork()
    if pid == 0:  # the child: boot, stop at the hook, wait to be killed
        try:
            os.close(reached_r)
            original = allocation_service._AllocationWrite.run
            done = []

            def run(write, *args, **kwargs):
                result = original(write, *args, **kwargs)
                done.append(write)
                if len(done) == writes:
                    os.write(reached_w, b"x")
                    time.sleep(60)
                return result

            allocation_service._AllocationWrite.run = run
            create(PlacementClient(version="latest"))
        finally:
            os._exit(1)
    os.close(reached_w)
    try:
        assert select.select([reached_r], [], [], 30)[0], "the boot never reached its writes"
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(reached_r)


def test_a_boot_whose_worker_is_killed_mid_way_leaves_nothing(cloud):
    api, hosts = cloud
    boot_killed_after_writes(1)
    time.sleep(0.2)  # PostgreSQL notices the closed session and ends its transaction
    nothing_held(api, hosts)

    # The client retries with the same key: the boot happens, once.
    response = create(api)
    assert response.status == 201, response
    assert len(response.json["servers"]) == 3
    assert Server.objects.count() == 3 == Consumer.objects.count()


def test_a_boot_whose_database_session_dies_mid_way_leaves_nothing(cloud, monkeypatch):
    api, hosts = cloud
    pause = PausedWrite(monkeypatch, after=1)
    thread, outcome = in_thread(lambda: create(PlacementClient(version="latest")))
    assert pause.reached.wait(30)
    kill_session(pause.backend_pid)  # a database restart mid-boot
    pause.release.set()
    thread.join(30)
    assert "response" not in outcome or outcome["response"].status >= 500, outcome
    nothing_held(api, hosts)


def test_a_boot_failing_after_some_claims_leaves_nothing(cloud, monkeypatch):
    api, hosts = cloud
    original = allocation_service._AllocationWrite.run
    writes = []

    def run(write, *args, **kwargs):
        result = original(write, *args, **kwargs)
        writes.append(write)
        if len(writes) == 1:
            raise RuntimeError("the request dies here")
        return result

    monkeypatch.setattr(allocation_service._AllocationWrite, "run", run)
    client = PlacementClient(version="latest")
    client.client.raise_request_exception = False
    response = create(client)
    assert response.status == 500
    nothing_held(api, hosts)


def test_a_retry_with_the_same_key_returns_the_same_servers(cloud):
    api, hosts = cloud
    first = create(api)
    assert first.status == 201, first
    used = {host: usage(api, host) for host in hosts}

    again = create(api)
    assert again.status == 201, again
    assert again.headers["Idempotent-Replayed"] == "true"
    assert [s["id"] for s in again.json["servers"]] == [s["id"] for s in first.json["servers"]]
    assert Server.objects.count() == 3 == Consumer.objects.count()
    assert {host: usage(api, host) for host in hosts} == used

    # Another key boots anew; so does the same key in another project.
    assert create(api, key="other").status == 201
    assert create(api, project_id="p2").status == 201
    assert Server.objects.count() == 9


def test_the_same_key_with_another_request_is_refused(cloud):
    api, _hosts = cloud
    assert create(api).status == 201
    response = create(api, count=2)
    assert response.status == 409
    assert response.error_code == "scheduler.idempotency_key_reused"
    assert Server.objects.count() == 3


def test_a_key_is_bounded(cloud):
    api, _hosts = cloud
    response = create(api, key="k" * 256)
    assert response.status == 400
    assert Server.objects.count() == 0


def test_concurrent_retries_boot_once(cloud, monkeypatch):
    api, hosts = cloud
    pause = PausedWrite(monkeypatch, after=1)
    first, first_outcome = in_thread(lambda: create(PlacementClient(version="latest")))
    assert pause.reached.wait(30)
    # The retry arrives while the first request is still booting.
    second, second_outcome = in_thread(lambda: create(PlacementClient(version="latest")))
    time.sleep(0.5)  # let it reach the key (it waits for the first; correctness needs no sleep)
    pause.release.set()
    first.join(30)
    second.join(30)
    answers = [first_outcome["response"], second_outcome["response"]]
    assert [a.status for a in answers] == [201, 201], answers
    ids = [[s["id"] for s in a.json["servers"]] for a in answers]
    assert ids[0] == ids[1] and len(ids[0]) == 3
    assert Server.objects.count() == 3 == Consumer.objects.count()
    assert sum(usage(api, host)["VCPU"] for host in hosts) == 6
