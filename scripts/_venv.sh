# Shared by scripts/serve and scripts/test: make .venv and install a requirements file into it.
# Usage: . scripts/_venv.sh; ensure_venv requirements.txt

ensure_build_deps() {
    # psycopg2 builds against libpq: it needs pg_config and a C compiler.
    if command -v pg_config >/dev/null 2>&1 && command -v gcc >/dev/null 2>&1; then
        return 0
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "psycopg2 needs pg_config (libpq development files) and gcc; install them." >&2
        return 1
    fi
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    echo "Installing libpq-dev and gcc (needed to build psycopg2)..." >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libpq-dev gcc python3-dev >/dev/null
}

ensure_venv() {
    local requirements="$1"
    local python="${PYTHON:-python3}"
    if [ ! -x .venv/bin/python ]; then
        echo "Creating .venv with $python..." >&2
        "$python" -m venv .venv
    fi
    # Reinstall only when the requirements changed since the last install.
    local stamp=".venv/.installed-$(basename "$requirements")"
    local digest
    digest="$(cat requirements*.txt | sha256sum | cut -d' ' -f1)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ]; then
        return 0
    fi
    if ! .venv/bin/python -c "import psycopg2" >/dev/null 2>&1; then
        ensure_build_deps
    fi
    echo "Installing $requirements into .venv..." >&2
    .venv/bin/python -m pip install -q --disable-pip-version-check -r "$requirements"
    echo "$digest" >"$stamp"
}
