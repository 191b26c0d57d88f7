"""A PostgreSQL streaming replica of the test primary, on this machine, for the replica tests.

``pg_basebackup -R`` copies the primary's cluster (the local one, 127.0.0.1:5432) into a
temporary directory, and that copy runs as a hot standby on a free port, fed by streaming
replication. The primary needs ``wal_level`` replica (PostgreSQL's default), wal senders and a
``host replication`` entry for 127.0.0.1 in pg_hba.conf: ``scripts/_provision.sh``
(``provision_replication``) adds it; ``unavailable_reason()`` says what is missing, and the
tests skip with it.

Run as root (as CI does), the copy belongs to and runs as the ``postgres`` user: PostgreSQL
refuses to run as root.
"""

import atexit
import contextlib
import copy
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg2
from django.db import connections
from django.test import override_settings

from placementsite.core import replicas
from tests.gunicorn_server import free_port

# The replica mirrors these of the primary: a standby refuses to start with less.
_MIRRORED_SETTINGS = (
    "max_connections",
    "max_worker_processes",
    "max_wal_senders",
    "max_prepared_transactions",
    "max_locks_per_transaction",
)


def _bindir():
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_basebackup").exists() and (candidate / "pg_ctl").exists():
            return candidate
    found = shutil.which("pg_ctl")
    return Path(found).parent if found and shutil.which("pg_basebackup") else None


def _as_service_user(command):
    """``command`` run as ``postgres`` when we are root (PostgreSQL will not run as root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


class StreamingReplica:
    """A hot standby of ``primary`` (``{"host", "port", "user"}``) on a port of its own."""

    def __init__(self, primary):
        self.primary = primary
        self.bindir = _bindir()
        self.port = free_port()
        self.directory = None
        self.data = None

    # --- lifecycle ---------------------------------------------------------------------------

    def create(self):
        self.directory = Path(tempfile.mkdtemp(prefix="placement-replica-"))
        self.data = self.directory / "data"
        if os.geteuid() == 0:
            service = pwd.getpwnam("postgres")
            os.chown(self.directory, service.pw_uid, service.pw_gid)
        self.directory.chmod(0o700)
        atexit.register(self.destroy)
        self._run(
            str(self.bindir / "pg_basebackup"),
            "-h",
            self.primary["host"],
            "-p",
            str(self.primary["port"]),
            "-U",
            self.primary["user"],
            "-D",
            str(self.data),
            "-R",  # standby.signal and primary_conninfo
            "-X",
            "stream",
            "-c",
            "fast",
        )
        mirrored = self._primary_settings()
        # The Debian cluster keeps its configuration outside the data directory: write one.
        settings = {
            "port": self.port,
            "listen_addresses": "'127.0.0.1'",
            "unix_socket_directories": f"'{self.data}'",
            "hot_standby": "on",
            "hot_standby_feedback": "on",
            "fsync": "off",
            "shared_buffers": "'32MB'",
            "logging_collector": "off",
            **mirrored,
        }
        (self.data / "postgresql.conf").write_text(
            "".join(f"{name} = {value}\n" for name, value in settings.items())
        )
        (self.data / "pg_hba.conf").write_text(
            "local all all trust\nhost all all 127.0.0.1/32 trust\n"
        )
        for name in ("postgresql.conf", "pg_hba.conf"):
            shutil.chown(self.data / name, *self._owner())
        self.start()
        return self

    def start(self):
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.directory / "replica.log"),
            "-w",
            "-t",
            "60",
            "start",
        )
        self.wait_ready()

    def stop(self):
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def destroy(self):
        if self.directory is None:
            return
        if (self.data / "postmaster.pid").exists():
            subprocess.run(
                _as_service_user(
                    [str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]
                ),
                capture_output=True,
                check=False,
            )
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None

    # --- the standby -------------------------------------------------------------------------

    def url(self, database):
        return f"postgres://{self.primary['user']}@127.0.0.1:{self.port}/{database}"

    def connect(self, database="postgres"):
        connection = psycopg2.connect(
            host="127.0.0.1", port=self.port, user=self.primary["user"], dbname=database
        )
        connection.autocommit = True
        return connection

    def query(self, sql, database="postgres"):
        connection = self.connect(database)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchone() if cursor.description else None
        finally:
            connection.close()

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.query("SELECT pg_is_in_recovery()")[0]:
                    return
            except psycopg2.OperationalError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica did not start: {self.log()[-2000:]}")
            time.sleep(0.2)

    def wait_caught_up(self, timeout=120):
        """Until the replica has replayed everything the primary has flushed so far."""
        target = self._primary_query("SELECT pg_current_wal_flush_lsn()::text")[0]
        deadline = time.monotonic() + timeout
        while not self.query(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")[0]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replica did not catch up with {target}")
            time.sleep(0.05)

    def pause_replay(self):
        self.query("SELECT pg_wal_replay_pause()")

    def resume_replay(self):
        self.query("SELECT pg_wal_replay_resume()")

    def log(self):
        path = self.directory / "replica.log" if self.directory else None
        return path.read_text(errors="replace") if path and path.exists() else ""

    # --- helpers -----------------------------------------------------------------------------

    def _owner(self):
        if os.geteuid() == 0:
            return "postgres", "postgres"
        return os.geteuid(), os.getegid()

    def _primary_query(self, sql):
        connection = psycopg2.connect(
            host=self.primary["host"],
            port=self.primary["port"],
            user=self.primary["user"],
            dbname="postgres",
        )
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return cursor.fetchone()
        finally:
            connection.close()

    def _primary_settings(self):
        names = ", ".join(f"current_setting('{name}')" for name in _MIRRORED_SETTINGS)
        return dict(zip(_MIRRORED_SETTINGS, self._primary_query(f"SELECT {names}"), strict=True))

    def _run(self, *command):
        result = subprocess.run(
            _as_service_user(list(command)), capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise RuntimeError(
                f"{Path(command[0]).name} failed ({result.returncode}): "
                f"{result.stderr[-2000:]}{self.log()[-2000:]}"
            )
        return result.stdout


def unavailable_reason(primary):
    """Why a replica of ``primary`` cannot be made here, or ``None``."""
    if _bindir() is None:
        return "pg_basebackup and pg_ctl are not installed (apt-get install postgresql)"
    if primary["host"] not in ("127.0.0.1", "localhost"):
        return "the test database is not on this machine"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a postgres user to run the replica as"
    try:
        connection = psycopg2.connect(
            host=primary["host"], port=primary["port"], user=primary["user"], dbname="postgres"
        )
    except psycopg2.OperationalError as exc:
        return f"the primary cannot be reached: {exc}"
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT current_setting('wal_level'), current_setting('max_wal_senders')::int,"
                " (SELECT count(*) FROM pg_stat_replication),"
                " (SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user),"
                " (SELECT setting::bigint FROM pg_settings WHERE name = 'wal_keep_size'),"
                " EXISTS (SELECT 1 FROM pg_hba_file_rules WHERE type = 'host'"
                "   AND 'replication' = ANY(database) AND error IS NULL"
                "   AND (address IS NULL OR address IN ('127.0.0.1', 'all', 'samehost')))"
            )
            wal_level, senders, used, may_replicate, keep_mb, hba = cursor.fetchone()
    finally:
        connection.close()
    if wal_level == "minimal":
        return "the primary has wal_level=minimal (set replica and restart it)"
    if senders - used < 1:
        return f"the primary has no free wal sender (max_wal_senders={senders})"
    if not may_replicate:
        return f"user {primary['user']} may not replicate (ALTER ROLE ... REPLICATION)"
    if keep_mb < 256:
        return (
            f"the primary keeps {keep_mb} MB of WAL (wal_keep_size): a replica could not start"
            " streaming after its base backup on a busy cluster (scripts/_provision.sh sets 1GB)"
        )
    if not hba:
        return (
            "pg_hba.conf has no replication entry for 127.0.0.1 (scripts/_provision.sh"
            " provision_replication adds: host replication all 127.0.0.1/32 trust)"
        )
    return None


# Replica aliases the tests may point anywhere: defined for every run (as mirrors of the
# test database, so never created, flushed or wrapped in a test's transaction), read from
# only while ``configured_replica`` says so.
TEST_ALIASES = ("replica1", "replica2")


def define_test_aliases(databases):
    """Adds the test aliases to ``settings.DATABASES`` (before the test databases are set up)."""
    for alias in TEST_ALIASES:
        if alias not in databases:
            settings_dict = copy.deepcopy(databases["default"])
            settings_dict["TEST"] = {**settings_dict.get("TEST", {}), "MIRROR": "default"}
            settings_dict.setdefault("OPTIONS", {})["connect_timeout"] = 2
            databases[alias] = settings_dict


@contextlib.contextmanager
def configured_replica(alias="replica1", **where):
    """Until the block ends, reads may use ``alias``: the test database on the server ``where``
    gives (``HOST``, ``PORT``), by default the primary itself (a server not in recovery is
    always current). The test must allow the alias (``databases="__all__"``)."""
    settings_dict = connections.settings[alias]
    saved = {key: settings_dict.get(key) for key in ("HOST", "PORT")}
    for conn in connections.all(initialized_only=True):
        if conn.alias == alias:
            conn.close()
    settings_dict.update(where)
    enabled = [*replicas.replica_aliases(), alias]
    replicas.forget_down_replicas()
    try:
        with override_settings(PLACEMENT_READ_REPLICAS=enabled):
            yield alias
    finally:
        connections[alias].close()
        settings_dict.update(saved)
        replicas.forget_down_replicas()
