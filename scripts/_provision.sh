# Shared by scripts/test and .ci/run: install and start what the tests talk to.
# Usage: . scripts/_provision.sh; provision_browser; provision_postgresql; provision_redis
#
# Each function installs Debian packages only when this machine can (apt-get, and root or
# password-less sudo) and PLACEMENT_TEST_INSTALL is not 0; otherwise it says what is missing
# and returns 1, and the tests that need it skip with a reason naming what to install.

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

can_install() {
    [ "${PLACEMENT_TEST_INSTALL:-1}" != 0 ] || return 1
    command -v apt-get >/dev/null 2>&1 || return 1
    [ "$(id -u)" = 0 ] || sudo -n true >/dev/null 2>&1
}

_apt_updated=""
apt_install() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    can_install || return 1
    # Wait for another apt run on the same machine rather than failing on its lock.
    local lock=(-o DPkg::Lock::Timeout=600)
    if [ -z "$_apt_updated" ]; then
        as_root apt-get "${lock[@]}" update -qq || return 1
        _apt_updated=1
    fi
    echo "provision: installing ${missing[*]}" >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get "${lock[@]}" install -y -qq "${missing[@]}" >/dev/null
}

# Headless Chromium and its driver for the browser tests (tests marked `browser`).
provision_browser() {
    if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
        return 0
    fi
    apt_install chromium chromium-driver && return 0
    echo "provision: chromium and chromedriver are missing; the browser tests will be skipped" \
        "(apt-get install chromium chromium-driver)" >&2
    return 1
}

# PostgreSQL on 127.0.0.1:5432, user postgres without a password.
provision_postgresql() {
    if ! command -v pg_isready >/dev/null 2>&1 || ! command -v pg_ctlcluster >/dev/null 2>&1; then
        apt_install postgresql postgresql-client || {
            echo "provision: PostgreSQL is not installed (apt-get install postgresql)" >&2
            return 1
        }
    fi
    if ! pg_isready -q -h 127.0.0.1 -p 5432; then
        can_install || { echo "provision: PostgreSQL is not running on 127.0.0.1:5432" >&2; return 1; }
        as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
        for _ in $(seq 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
    fi
    if ! psql -h 127.0.0.1 -U postgres -d postgres -Atqc "select 1" >/dev/null 2>&1; then
        can_install || { echo "provision: PostgreSQL refuses user postgres on 127.0.0.1" >&2; return 1; }
        # A freshly installed server asks for passwords on TCP: trust loopback, as the tests expect.
        local hba
        hba="$(as_root su postgres -c "psql -Atqc 'show hba_file'")"
        as_root sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
        as_root su postgres -c "psql -qc 'select pg_reload_conf()'" >/dev/null
    fi
}

# Streaming replication from 127.0.0.1 (tests/replica.py makes a replica of the local cluster with
# pg_basebackup): wal_level replica (the default) and wal senders, and a pg_hba entry for
# replication connections, which "host all all" does not cover.
provision_replication() {
    command -v pg_isready >/dev/null 2>&1 || return 1
    local settings
    settings="$(psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
        "select current_setting('wal_level') || ' ' || current_setting('max_wal_senders')" 2>/dev/null)" || return 1
    if [ "${settings% *}" = minimal ] || [ "${settings#* }" = 0 ]; then
        echo "provision: PostgreSQL has wal_level=${settings% *}, max_wal_senders=${settings#* }:" \
            "the replica tests will be skipped (set wal_level=replica, max_wal_senders>=2, restart)" >&2
        return 1
    fi
    # A replica starts streaming where its base backup ended: keep the WAL written meanwhile
    # (other databases of the cluster keep writing), rather than a replication slot that a
    # killed test run would leave behind, holding WAL forever.
    local keep
    keep="$(psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
        "select setting::bigint >= 256 from pg_settings where name = 'wal_keep_size'")"
    if [ "$keep" != t ]; then
        psql -h 127.0.0.1 -U postgres -d postgres -qc "alter system set wal_keep_size = '1GB'" \
            -c 'select pg_reload_conf()' >/dev/null || return 1
    fi
    local hba
    hba="$(psql -h 127.0.0.1 -U postgres -d postgres -Atqc 'show hba_file')" || return 1
    grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$hba" \
        2>/dev/null && return 0
    can_install || {
        echo "provision: $hba has no replication entry for 127.0.0.1; the replica tests will be" \
            "skipped (add: host replication all 127.0.0.1/32 trust)" >&2
        return 1
    }
    as_root sed -i '1i host replication all 127.0.0.1/32 trust' "$hba"
    psql -h 127.0.0.1 -U postgres -d postgres -qc 'select pg_reload_conf()' >/dev/null
}

# Redis on 127.0.0.1:6379 (the Celery worker tests, marked `redis`).
redis_up() { (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; }

provision_redis() {
    redis_up && return 0
    apt_install redis-server redis-tools || {
        echo "provision: Redis is missing; the Celery worker tests will be skipped" \
            "(apt-get install redis-server)" >&2
        return 1
    }
    mkdir -p /tmp/placement-redis
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
        --dir /tmp/placement-redis --logfile /tmp/placement-redis/redis.log
    for _ in $(seq 30); do redis_up && break; sleep 1; done
}
