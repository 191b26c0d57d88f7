"""``manage.py report_host``: the host agent. Reads this machine (or a JSON file) and reports it.

report_host --url http://placement:8000 --token-file /etc/placement/agent-token
PLACEMENT_REPORT_TOKEN=... report_host --url http://placement:8000
report_host --local                                   # through the service, same database
report_host --from-json host.json --hostname h1 --local

The token (``X-Auth-Token`` with the service role) comes from a file only its user may read, or
from the environment: never from the command line, where ``ps`` shows it to every local user.
"""

import json
import os
import platform
import socket
import urllib.error
import urllib.request
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from providers.host_reports import HOSTNAME_RULE, hostname_valid
from providers.rest.serializers import HostReportSerializer
from providers.services.compute_nodes import compute_node_report

MIB = 1024 * 1024
TOKEN_ENV = "PLACEMENT_REPORT_TOKEN"
GIB = 1024 * MIB
NODE_DIR = Path("/sys/devices/system/node")


def _cpu_list(text):
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]`` (the kernel's cpulist format)."""
    cpus = []
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def _node_memory_mb(node):
    for line in (node / "meminfo").read_text().splitlines():
        if "MemTotal:" in line:
            return int(line.split()[-2]) // 1024
    return 0


def read_numa_topology(node_dir=NODE_DIR):
    """NUMA cells from sysfs (Linux); None on a single-node machine or elsewhere."""
    nodes = sorted(node_dir.glob("node[0-9]*"), key=lambda p: int(p.name[4:]))
    if len(nodes) < 2:
        return None
    return {
        "cells": [
            {
                "id": int(node.name[4:]),
                "cpus": _cpu_list((node / "cpulist").read_text()),
                "memory_mb": _node_memory_mb(node),
            }
            for node in nodes
        ]
    }


def _cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def read_this_host(disk_path="/"):
    """This machine's report, read with psutil."""
    import psutil

    return {
        "vcpus": psutil.cpu_count(logical=True) or 0,
        "memory_mb": psutil.virtual_memory().total // MIB,
        "local_gb": psutil.disk_usage(disk_path).total // GIB,
        "cpu_info": {"model": _cpu_model(), "arch": platform.machine()},
        "hypervisor_type": "QEMU",
        "stats": {"physical_cores": psutil.cpu_count(logical=False) or 0},
        "numa_topology": read_numa_topology(),
        "pci_devices": [],
    }


class Command(BaseCommand):
    help = "Report this host (read with psutil, or from a JSON file) to the service."

    def add_arguments(self, parser):
        parser.add_argument("--hostname", default=socket.gethostname())
        parser.add_argument("--url", help="the service's base URL, e.g. http://127.0.0.1:8000")
        parser.add_argument(
            "--token-file",
            help=f"a file holding the X-Auth-Token (service or admin role); else ${TOKEN_ENV}",
        )
        # Refused, with the reason: kept so that an old invocation fails clearly.
        parser.add_argument("--token", help="refused: use --token-file or $" + TOKEN_ENV)
        parser.add_argument("--local", action="store_true", help="write through the service")
        parser.add_argument("--from-json", help="a report as a JSON file instead of this machine")
        parser.add_argument("--disk-path", default="/", help="the path whose disk is local_gb")
        parser.add_argument(
            "--disk-pool",
            help="the shared-storage resource pool this host's disks are on (no local DISK_GB)",
        )

    def handle(
        self,
        *args,
        hostname,
        url,
        token_file,
        token,
        local,
        from_json,
        disk_path,
        disk_pool=None,
        **options,
    ):
        if token is not None:
            raise CommandError(
                f"--token would show the token to every local user (ps): use --token-file "
                f"or the {TOKEN_ENV} environment variable"
            )
        if bool(url) == bool(local):
            raise CommandError("Give exactly one of --url (with a token) or --local")
        token = self._token(token_file) if url else None
        if from_json:
            try:
                report = json.loads(Path(from_json).read_text())
            except (OSError, ValueError) as exc:
                raise CommandError(f"Cannot read {from_json}: {exc}") from None
        else:
            report = read_this_host(disk_path)
        if disk_pool:
            report["disk_pool"] = disk_pool
        if local:
            node = self._local(hostname, report)
        else:
            node = self._remote(url, token, hostname, report)
        self.stdout.write(f"reported {hostname}: {json.dumps(node, sort_keys=True)}")

    def _token(self, token_file):
        if token_file:
            path = Path(token_file)
            try:
                token = path.read_text().strip()
            except OSError as exc:
                raise CommandError(f"Cannot read --token-file {token_file}: {exc}") from None
            if path.stat().st_mode & 0o077:
                self.stderr.write(f"warning: {token_file} is readable by others (chmod 600 it)")
        else:
            token = os.environ.get(TOKEN_ENV, "").strip()
        if not token:
            raise CommandError(f"--url needs a token: --token-file FILE or ${TOKEN_ENV}")
        return token

    def _local(self, hostname, report):
        if not hostname_valid(hostname):
            raise CommandError(f"Invalid hostname {hostname!r}: {HOSTNAME_RULE}")
        serializer = HostReportSerializer(data=report, context={"hostname": hostname})
        if not serializer.is_valid():
            raise CommandError(f"Invalid report: {json.dumps(serializer.errors)}")
        node = compute_node_report(hostname=hostname, report=serializer.validated_data).node
        return {"vcpus": node.vcpus, "memory_mb": node.memory_mb, "local_gb": node.local_gb}

    def _remote(self, url, token, hostname, report):
        request = urllib.request.Request(
            f"{url.rstrip('/')}/api/compute-nodes/{hostname}/",
            data=json.dumps(report).encode(),
            method="PUT",
            headers={"Content-Type": "application/json", "X-Auth-Token": token},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                body = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise CommandError(f"{exc.code}: {exc.read().decode(errors='replace')}") from None
        except urllib.error.URLError as exc:
            raise CommandError(f"Cannot reach {url}: {exc.reason}") from None
        return {k: body[k] for k in ("vcpus", "memory_mb", "local_gb")}
