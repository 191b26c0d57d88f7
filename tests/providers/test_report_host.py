"""The host agent: ``report_host`` reads the machine or a file and reports it."""

import json

import psutil
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from providers.management.commands.report_host import read_numa_topology
from providers.models import ComputeNode
from tests.providers.hosts import report


def _run(*args):
    lines = []

    class Out:
        def write(self, text):
            lines.append(text)

    call_command("report_host", *args, stdout=Out())
    return "".join(lines)


@pytest.mark.django_db
def test_local_report_reads_this_machine_with_psutil():
    _run("--local", "--hostname", "this-box")
    node = ComputeNode.objects.get(hostname="this-box")
    assert node.vcpus == psutil.cpu_count(logical=True)
    assert node.memory_mb == psutil.virtual_memory().total // (1024 * 1024)
    assert node.local_gb == psutil.disk_usage("/").total // 1024**3
    assert node.reported_at is not None


@pytest.mark.django_db
def test_local_report_from_a_json_file(tmp_path):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(report(vcpus=3)))
    _run("--local", "--hostname", "from-file", "--from-json", str(path))
    assert ComputeNode.objects.get(hostname="from-file").vcpus == 3


@pytest.mark.django_db
def test_a_host_on_shared_storage_names_its_pool(settings):
    settings.PLACEMENT_SYNC_ON_REPORT = False
    _run("--local", "--hostname", "pooled", "--disk-pool", "ceph1")
    assert ComputeNode.objects.get(hostname="pooled").disk_pool == "ceph1"


@pytest.mark.django_db
def test_invalid_report_stores_nothing(tmp_path):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(report(vcpus=-1)))
    with pytest.raises(CommandError, match="vcpus"):
        _run("--local", "--hostname", "bad", "--from-json", str(path))
    assert not ComputeNode.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_report_over_http_to_a_live_server(live_server, tmp_path):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(report(vcpus=7)))
    token_file = tmp_path / "token"
    token_file.write_text("admin\n")
    token_file.chmod(0o600)
    output = _run(
        "--url",
        live_server.url,
        "--token-file",
        str(token_file),
        "--hostname",
        "remote",
        "--from-json",
        str(path),
    )
    assert '"vcpus": 7' in output
    assert ComputeNode.objects.get(hostname="remote").vcpus == 7


@pytest.mark.django_db(transaction=True)
def test_refused_report_over_http_is_an_error_with_the_answer(live_server, monkeypatch):
    monkeypatch.setenv("PLACEMENT_REPORT_TOKEN", "alice:p1")
    with pytest.raises(CommandError, match="403"):
        _run("--url", live_server.url, "--hostname", "remote")


@pytest.mark.django_db(transaction=True)
def test_token_from_the_environment(live_server, tmp_path, monkeypatch):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(report(vcpus=5)))
    monkeypatch.setenv("PLACEMENT_REPORT_TOKEN", "admin")
    _run("--url", live_server.url, "--hostname", "env", "--from-json", str(path))
    assert ComputeNode.objects.get(hostname="env").vcpus == 5


def test_a_token_on_the_command_line_is_refused():
    with pytest.raises(CommandError, match="--token-file"):
        _run("--url", "http://127.0.0.1:1", "--token", "secret", "--hostname", "x")


def test_url_without_a_token_is_refused(monkeypatch):
    monkeypatch.delenv("PLACEMENT_REPORT_TOKEN", raising=False)
    with pytest.raises(CommandError, match="needs a token"):
        _run("--url", "http://127.0.0.1:1", "--hostname", "x")


def test_url_and_local_are_exclusive():
    with pytest.raises(CommandError, match="exactly one"):
        _run("--hostname", "x")


def test_numa_cells_from_sysfs(tmp_path):
    for node, cpus, kb in ((0, "0-3", 8388608), (1, "4-7,12", 4194304)):
        folder = tmp_path / f"node{node}"
        folder.mkdir()
        (folder / "cpulist").write_text(cpus + "\n")
        (folder / "meminfo").write_text(f"Node {node} MemTotal:       {kb} kB\n")
    assert read_numa_topology(tmp_path) == {
        "cells": [
            {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
            {"id": 1, "cpus": [4, 5, 6, 7, 12], "memory_mb": 4096},
        ]
    }
    (tmp_path / "node1" / "cpulist").unlink()
    single = tmp_path / "single"
    single.mkdir()
    assert read_numa_topology(single) is None
