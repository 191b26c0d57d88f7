"""Settings for the placement service, read from the environment.

Every value has an embedded default that needs no server (SQLite, a
filesystem Celery broker) so that a newcomer can start the whole service
with one command; production sets DATABASE_URL and CELERY_BROKER_URL.
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from placementsite.core import private_files, secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("PLACEMENT_VAR_DIR", BASE_DIR / "var"))


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_number(name, default, kind=int):
    value = os.environ.get(name, "").strip()
    return kind(value) if value else default


def env_list(name):
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


# Never a fixed fallback: without the variable, a random key generated on the first start into
# a file only the service user can read (placementsite/core/secret_key.py).
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or secret_key.load_or_create(
    VAR_DIR / "secret_key"
)
DEBUG = env_bool("DJANGO_DEBUG", False)
# Without configuration only the loopback names: a request for another Host is refused (400).
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS") or ["127.0.0.1", "localhost", "[::1]"]

# Larger request bodies are refused with a 413 before they are read, more query parameters
# with a 400 (Django's DATA_UPLOAD_* limits, answered in Placement's error format).
DATA_UPLOAD_MAX_MEMORY_SIZE = env_number("PLACEMENT_MAX_REQUEST_BODY_BYTES", 2_621_440)
DATA_UPLOAD_MAX_NUMBER_FIELDS = env_number("PLACEMENT_MAX_QUERY_PARAMETERS", 1000)

# --- HTTPS, cookies and headers (production sets these; see README "Security") ------------
# Behind a TLS-terminating proxy: "HTTP_X_FORWARDED_PROTO,https" (the header and the value
# meaning the request came over HTTPS). Only set it when the proxy overwrites that header.
if os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER"):
    SECURE_PROXY_SSL_HEADER = tuple(
        part.strip() for part in os.environ["DJANGO_SECURE_PROXY_SSL_HEADER"].split(",", 1)
    )
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
# Load balancers and Prometheus reach each server directly, often over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthcheck$"]
SECURE_HSTS_SECONDS = env_number("DJANGO_SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
# Session and CSRF cookies only over HTTPS; off by default so that the admin works on
# http://127.0.0.1 in development.
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# The operator's pages (placementsite.content_security): this service's scripts, styles,
# fonts and images only, no inline script, no framing, forms posted back here only.
PLACEMENT_CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
PLACEMENT_CSP_PREFIXES = ("/dashboard/", "/admin/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "knox",
    "django_filters",
    "drf_spectacular",
    "django_celery_beat",
    "corsheaders",
    "django_prometheus",
    "axes",
    "placementsite",
    "providers",
    "allocations",
    "scheduling",
]

MIDDLEWARE = [
    # Outermost, so that CORS preflights are answered before authentication.
    "placementsite.core.api.cors.CorsMiddleware",
    # Request counts and latencies (django-prometheus) of every request, refusals included.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "placementsite.core.api.middleware.PlacementApiMiddleware",
    # Which database the request's reads go to (the primary unless its view tolerates lag).
    "placementsite.core.replicas.ReplicaReadsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # The admin's static files, served by the application server itself.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Django's, but not for the APIs' paths (placementsite/core/api/middleware.py).
    "placementsite.core.api.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "placementsite.content_security.ContentSecurityPolicyMiddleware",
    # django-prometheus's, its labelled series looked up once (placementsite/observability).
    "placementsite.observability.middleware.PrometheusAfterMiddleware",
    # Last, as django-axes asks: locks out repeated failed logins (admin and dashboard).
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # First, so that a locked-out username/address is refused before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Failed logins per username and client address before a lockout, and its length in hours.
AXES_FAILURE_LIMIT = env_number("PLACEMENT_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = env_number("PLACEMENT_LOGIN_COOLOFF_HOURS", 1.0, float)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

ROOT_URLCONF = "placementsite.urls"
# Placement URLs have no trailing slash; never redirect API calls.
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # The dashboard is a package of placementsite, not an app: name its tags here.
            "libraries": {
                "dashboard": "placementsite.dashboard.templatetags.dashboard",
                "history": "placementsite.dashboard.templatetags.history",
            },
        },
    },
]

WSGI_APPLICATION = "placementsite.wsgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        # Set but empty (an unset shell variable exported) means the default, too.
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "60")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Placement's reads are short OLTP queries whose cost estimates can pass
    # jit_above_cost at 10,000 providers; compiling them takes longer than
    # running them (measured ~0.3 s per request), so the JIT stays off.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("options", "-c jit=off")
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Writers wait for each other instead of failing with "database is locked".
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
    _sqlite_file = str(DATABASES["default"]["NAME"])
    if _sqlite_file and _sqlite_file != ":memory:" and not _sqlite_file.startswith("file:"):
        # Created readable by the service user only (SQLite itself would follow the umask).
        private_files.create_private(_sqlite_file)
# django-prometheus's wrappers of the same backends count queries, errors and connections
# (with their series looked up once per connection: placementsite/observability/db).
_PROMETHEUS_BACKENDS = {
    "django.db.backends.postgresql": "placementsite.observability.db.postgresql",
    "django.db.backends.sqlite3": "placementsite.observability.db.sqlite3",
}
DATABASES["default"]["ENGINE"] = _PROMETHEUS_BACKENDS.get(
    DATABASES["default"]["ENGINE"], DATABASES["default"]["ENGINE"]
)
# Read replicas (PostgreSQL streaming replicas of the primary): replica1, replica2... in the
# order given; placementsite/core/replicas.py says which reads go there and why. Under the
# test runner each mirrors the primary's test database (same name, the replica's server).
for _number, _url in enumerate(
    (url.strip() for url in os.environ.get("DATABASE_REPLICA_URLS", "").split(",") if url.strip()),
    start=1,
):
    _replica = dj_database_url.parse(_url, conn_max_age=DATABASES["default"]["CONN_MAX_AGE"])
    if not _replica["ENGINE"].endswith("postgresql"):
        raise ImproperlyConfigured(
            f"DATABASE_REPLICA_URLS: {_url.split('@')[-1]!r} is not a PostgreSQL URL"
        )
    _replica["ENGINE"] = _PROMETHEUS_BACKENDS[_replica["ENGINE"]]
    # A replica that does not answer is skipped: do not wait long for it.
    _replica.setdefault("OPTIONS", {}).update(options="-c jit=off", connect_timeout=2)
    _replica["TEST"] = {"MIRROR": "default"}
    DATABASES[f"replica{_number}"] = _replica
# The aliases reads may use (the tests keep others defined but unused).
PLACEMENT_READ_REPLICAS = [alias for alias in DATABASES if alias != "default"]
DATABASE_ROUTERS = ["placementsite.core.replicas.ReplicaRouter"]
# A replica further behind than this (replaying the primary's WAL) is not read from.
PLACEMENT_REPLICA_MAX_LAG_MS = env_number("PLACEMENT_REPLICA_MAX_LAG_MS", 500)
# How long a read waits for a replica to replay up to the primary's position at its start.
PLACEMENT_REPLICA_FENCE_WAIT_MS = env_number("PLACEMENT_REPLICA_FENCE_WAIT_MS", 5)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # collectstatic fills it (scripts/serve)

LOGIN_URL = "/admin/login/"

REST_FRAMEWORK = {
    # Authentication and policy are Placement's own (placementsite.core.api.auth);
    # DRF only parses, dispatches and renders.
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "placementsite.core.api.negotiation.PlacementNegotiation",
    "EXCEPTION_HANDLER": "placementsite.core.api.errors.exception_handler",
    # /api/ views (placementsite.core.rest) bring their own classes; only the schema is global.
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}

# --- The project's own REST API (/api/) -----------------------------------------
SPECTACULAR_SETTINGS = {
    "TITLE": "Placement service API",
    "DESCRIPTION": "Hosts, flavors, servers, migrations and capacity: everything the "
    "OpenStack Placement API (served at the root) does not define. Authenticate with "
    "X-Auth-Token; errors come in Placement's error format, always with a code.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "PREPROCESSING_HOOKS": ["placementsite.core.rest.schema.only_rest_api"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "placementsite.core.rest.schema.document_errors",
    ],
}

# --- Placement API -------------------------------------------------------
# API tokens (X-Auth-Token of the token strategy, placementsite.core.api.tokens) expire after this
# many days; 0: never (not advised).
PLACEMENT_TOKEN_TTL_DAYS = env_number("PLACEMENT_TOKEN_TTL_DAYS", 30)
PLACEMENT_AUTH_STRATEGY = os.environ.get("PLACEMENT_AUTH_STRATEGY", "token")
PLACEMENT_POLICY_DEFAULTS = os.environ.get("PLACEMENT_POLICY_DEFAULTS", "secure")
PLACEMENT_POLICY_FILE = os.environ.get("PLACEMENT_POLICY_FILE", "")
# Paths served by Django itself rather than the Placement API plumbing.
PLACEMENT_NON_API_PREFIXES = (
    "/admin/",
    "/dashboard/",
    "/static/",
    "/accounts/",
    "/favicon.ico",
    "/healthcheck",
    "/metrics",
)
# The project's own REST API (DRF, placementsite.core.rest): request ids and error bodies as the
# Placement API, but its own authentication class and no microversions.
PLACEMENT_REST_API_PREFIX = "/api/"
# Placement's [placement]randomize_allocation_candidates and a safety cap.
PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = env_bool(
    "PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES", False
)
# At most this many allocation candidates are generated per request, whatever `limit` says:
# Placement has the same option ([placement]max_allocation_candidates) for the same reason, so
# that a wide tree cannot exhaust a worker's time or memory. -1 (any negative number) means no
# cap, Placement's default.
PLACEMENT_MAX_ALLOCATION_CANDIDATES = int(
    os.environ.get("PLACEMENT_MAX_ALLOCATION_CANDIDATES", "10000")
)
# The work one request may do on allocation candidates, counted whether a combination is kept
# or rejected (capacity, isolation, same_subtree, traits, duplicates): at most this many
# combinations examined and this many seconds (well under gunicorn's 30 s worker timeout).
# Past either, the request answers with what it found so far and logs that it was cut.
# -1: no bound.
PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = int(
    os.environ.get("PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED", "2000000")
)
PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET = float(
    os.environ.get("PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET", "5")
)

# --- compute hosts and their sync -----------------------------------------


def env_map(name, default, cast=float):
    """``CLASS=value,CLASS=value`` from the environment over ``default``."""
    values = dict(default)
    for item in env_list(name):
        key, _, value = item.partition("=")
        values[key.strip()] = cast(value)
    return values


# Resource plugins turning host reports into inventories: entry point names (group
# placement.resource_plugins) or dotted paths, in order.
PLACEMENT_RESOURCE_PLUGINS = env_list("PLACEMENT_RESOURCE_PLUGINS") or [
    "vcpu",
    "memory",
    "disk",
    "numa",
    "pci",
]
# Defaults a sync gives new inventories, per class (an operator's value on the inventory wins).
PLACEMENT_ALLOCATION_RATIOS = env_map(
    "PLACEMENT_ALLOCATION_RATIOS",
    {
        "VCPU": float(os.environ.get("PLACEMENT_CPU_ALLOCATION_RATIO", "16.0")),
        "MEMORY_MB": float(os.environ.get("PLACEMENT_RAM_ALLOCATION_RATIO", "1.5")),
        "DISK_GB": float(os.environ.get("PLACEMENT_DISK_ALLOCATION_RATIO", "1.0")),
    },
)
PLACEMENT_RESERVED = env_map(
    "PLACEMENT_RESERVED",
    {
        "VCPU": int(os.environ.get("PLACEMENT_RESERVED_HOST_CPUS", "0")),
        "MEMORY_MB": int(os.environ.get("PLACEMENT_RESERVED_HOST_MEMORY_MB", "512")),
        "DISK_GB": int(os.environ.get("PLACEMENT_RESERVED_HOST_DISK_GB", "0")),
    },
    cast=int,
)
# Compute units per vCPU by CPU model (cpu_info["model"]), for the compute_units plugin.
PLACEMENT_CPU_MODEL_RATINGS = env_map("PLACEMENT_CPU_MODEL_RATINGS", {})
PLACEMENT_DEFAULT_CPU_RATING = float(os.environ.get("PLACEMENT_DEFAULT_CPU_RATING", "100"))
# A host silent for longer is stale (shown, and skipped by the scheduler), never deleted.
PLACEMENT_HOST_STALE_SECONDS = int(os.environ.get("PLACEMENT_HOST_STALE_SECONDS", "600"))
# A resource pool silent for longer is stale: flagged, and the scheduler takes nothing from it.
PLACEMENT_POOL_STALE_SECONDS = int(os.environ.get("PLACEMENT_POOL_STALE_SECONDS", "600"))
# A report whose content changed asks a worker for its host's sync at once (beat's periodic
# sync stays the backstop).
PLACEMENT_SYNC_ON_REPORT = env_bool("PLACEMENT_SYNC_ON_REPORT", True)
# A blocked, failed or partial host sync is retried at the next run, then after this many
# seconds, doubling each time up to the cap.
PLACEMENT_SYNC_RETRY_SECONDS = env_number("PLACEMENT_SYNC_RETRY_SECONDS", 60)
PLACEMENT_SYNC_RETRY_MAX_SECONDS = env_number("PLACEMENT_SYNC_RETRY_MAX_SECONDS", 3600)
# How long usage samples and inventory change history are kept.
PLACEMENT_HISTORY_RETENTION_DAYS = int(os.environ.get("PLACEMENT_HISTORY_RETENTION_DAYS", "30"))

# --- Operations -----------------------------------------------------------
# Who may read /metrics: "token" (a valid token with the reader role or more), "open"
# (anyone: the port is reachable only by Prometheus), "off" (404).
PLACEMENT_METRICS = os.environ.get("PLACEMENT_METRICS", "token")
if PLACEMENT_METRICS not in ("token", "open", "off"):
    raise ImproperlyConfigured(
        f"PLACEMENT_METRICS must be token, open or off, not {PLACEMENT_METRICS!r}"
    )
# /healthcheck?detailed reports beat as down when its heartbeat (every 60 s) is older.
PLACEMENT_HEARTBEAT_MAX_AGE = int(os.environ.get("PLACEMENT_HEARTBEAT_MAX_AGE", "180"))
# Log lines as plain text (default) or one JSON object per line ("json").
PLACEMENT_LOG_FORMAT = os.environ.get("PLACEMENT_LOG_FORMAT", "text")
if PLACEMENT_LOG_FORMAT not in ("text", "json"):
    raise ImproperlyConfigured(
        f"PLACEMENT_LOG_FORMAT must be text or json, not {PLACEMENT_LOG_FORMAT!r}"
    )

# --- CORS ---------------------------------------------------------------
# The middleware is always installed; with no allowed origins it is disabled
# for every URL (no preflight answers, no ``Vary: origin``), as if absent.
CORS_ALLOWED_ORIGINS = env_list("PLACEMENT_CORS_ALLOWED_ORIGINS")
CORS_URLS_REGEX = r"^.*$" if CORS_ALLOWED_ORIGINS else r"^(?!)"
CORS_ALLOW_HEADERS = [
    "accept",
    "content-type",
    "x-auth-token",
    "x-openstack-request-id",
    "openstack-api-version",
    "x-roles",
]
CORS_EXPOSE_HEADERS = ["openstack-api-version", "openstack-request-id", "last-modified"]

# --- Celery ---------------------------------------------------------------
CELERY_BROKER_DIR = VAR_DIR / "celery-broker"
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_DIR / "out"),
        "data_folder_out": str(CELERY_BROKER_DIR / "out"),
        "processed_folder": str(CELERY_BROKER_DIR / "processed"),
        "store_processed": False,
        # Exchange tables; kombu's default is ./control, relative to wherever a worker starts.
        "control_folder": str(CELERY_BROKER_DIR / "control"),
    }
    # The messages carry task arguments: the service user's alone (0700).
    private_files.make_private_dir(CELERY_BROKER_DIR)
    for _folder in ("out", "processed", "control"):
        private_files.make_private_dir(CELERY_BROKER_DIR / _folder)
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# The queue tasks are sent to, which the worker consumes (``celery worker -Q``).
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {
            "format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s %(global_request_id)s] "
            "%(message)s",
        },
        # Every field of the record (the request log's method, path, status, ... included).
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(message)s %(request_id)s "
            "%(global_request_id)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "filters": {"request_id": {"()": "placementsite.core.api.request_id.RequestIdLogFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": PLACEMENT_LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "loggers": {
        "placement": {
            "handlers": ["console"],
            "level": os.environ.get("PLACEMENT_LOG_LEVEL", "INFO"),
        }
    },
}

# The scheduler (scheduling/plugins): filters and weighers by name, NAME[:ARG...][=MULTIPLIER].
PLACEMENT_SCHEDULER_FILTERS = os.environ.get(
    "PLACEMENT_SCHEDULER_FILTERS",
    "host_enabled,availability_zone,aggregate_extra_specs,same_host,different_host,"
    "target_host,ignore_hosts,server_group_affinity,server_group_anti_affinity",
)
PLACEMENT_SCHEDULER_WEIGHERS = os.environ.get(
    "PLACEMENT_SCHEDULER_WEIGHERS",
    # The soft group policies outweigh the three spreading weighers together (each at most 1
    # once normalised), so that a soft policy is honoured whenever some host allows it.
    "ram=1.0,cpu=1.0,disk=1.0,server_group_soft_affinity=10.0,server_group_soft_anti_affinity=10.0",
)
# A random pick among the best N hosts (Nova's host_subset_size), and how many hosts each
# server keeps: the chosen one and max_attempts - 1 alternates.
PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE = int(
    os.environ.get("PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE", "1")
)
PLACEMENT_SCHEDULER_MAX_ATTEMPTS = int(os.environ.get("PLACEMENT_SCHEDULER_MAX_ATTEMPTS", "3"))
# How many candidates a boot's or a move's pass asks the engine for, per flavor variant
# (Nova's [scheduler] max_placement_results): the first trees by id, read a window at a time,
# instead of every host; a pass that then places too few asks again unbounded. 0 or -1:
# unbounded. Capacity and explain always judge every host.
PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS = int(
    os.environ.get("PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS", "1000")
)
# Which NUMA cells of a host a NUMA request takes, as Nova 34's
# [compute] packing_host_numa_cells_allocation_strategy (False: spread, the default).
PLACEMENT_NUMA_CELLS_STRATEGY = os.environ.get("PLACEMENT_NUMA_CELLS_STRATEGY", "spread")
if PLACEMENT_NUMA_CELLS_STRATEGY not in ("spread", "pack"):
    raise ImproperlyConfigured("PLACEMENT_NUMA_CELLS_STRATEGY must be spread or pack")
# Seconds one scheduling request (a boot, an explain, a capacity, a move) may spend placing:
# past it, it stops, releases what it claimed and answers 503 scheduler.time_budget_exceeded
# (well under gunicorn's 30 s worker timeout).
PLACEMENT_SCHEDULER_TIME_BUDGET = float(os.environ.get("PLACEMENT_SCHEDULER_TIME_BUDGET", "10"))

# Moves (scheduling/services/migrations.py) and their cleanup (scheduling/services/cleanup.py).
# How long a move may stay in flight before the cleanup acts on it.
PLACEMENT_MIGRATION_LEASE_SECONDS = int(os.environ.get("PLACEMENT_MIGRATION_LEASE_SECONDS", "3600"))
# What the cleanup does with an expired move: report (default), revert or confirm it.
PLACEMENT_MIGRATION_EXPIRED_ACTION = os.environ.get("PLACEMENT_MIGRATION_EXPIRED_ACTION", "report")
# Nova's allow_resize_to_same_host.
PLACEMENT_RESIZE_SAME_HOST = env_bool("PLACEMENT_RESIZE_SAME_HOST", False)
# Finished migrations the cleanup handles per transaction.
PLACEMENT_MIGRATION_CLEANUP_BATCH = int(os.environ.get("PLACEMENT_MIGRATION_CLEANUP_BATCH", "1000"))
# The audit deletes orphaned allocations only when untouched for this long.
PLACEMENT_AUDIT_ORPHAN_GRACE_SECONDS = int(
    os.environ.get("PLACEMENT_AUDIT_ORPHAN_GRACE_SECONDS", "3600")
)
