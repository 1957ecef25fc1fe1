"""memoryweb settings: one file, every value from the environment via typed helpers."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

from memoryweb.env import env_bool, env_int, env_list, env_str

# Every entry point (manage.py, the WSGI server, Celery, the test runner) imports these
# settings before it writes a file, so one umask here makes every data file the service
# creates 0600 and every folder 0700 (database, shards, skills, Qdrant, tokens) without
# each writer having to remember it. Memory text is private to the account running it.
os.umask(0o077)

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("MEMORYWEB_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)
# A data dir created before the umask existed may be 0755: closing the top folder makes
# everything under it unreachable for other accounts, whatever the inner modes are.
if DATA_DIR.stat().st_uid == os.getuid() and DATA_DIR.stat().st_mode & 0o077:
    DATA_DIR.chmod(0o700)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    # A per-install key kept in the data dir: stable across restarts, never committed.
    _key_file = DATA_DIR / "secret_key"
    if not _key_file.exists():
        import secrets

        _key_file.write_text(secrets.token_urlsafe(50))
        _key_file.chmod(0o600)
    SECRET_KEY = _key_file.read_text().strip()

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "apps.accounts",
    "apps.conversations",
    "apps.records",
    "apps.scenes",
    "apps.persona",
    "apps.hitstats",
    "apps.skills",
    "apps.search",
    "apps.tools",
    "apps.pipeline",
    "apps.memory",
    "apps.mcp",
    "apps.dashboard",
    "apps.transfer",
    "apps.metrics",
]

MIDDLEWARE = [
    # Outermost: times and logs every request, including the ones other middleware answer.
    "apps.metrics.middleware.RequestObservationMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout raised during login into its response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "memoryweb.urls"
WSGI_APPLICATION = "memoryweb.wsgi.application"

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
        },
    }
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{DATA_DIR / 'memoryweb.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 0))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets readers run beside the single writer; IMMEDIATE takes the write lock at
    # BEGIN so two committers queue on `timeout` instead of failing mid-transaction.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": env_int("SQLITE_TIMEOUT_SECONDS", 10, minimum=1),
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Django's validators refuse passwords like "password", "12345678" or the username; they
# apply to `createuser`, the Django admin and any password form.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": env_int("MEMORYWEB_PASSWORD_MIN_LENGTH", 10, minimum=8)}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
AUTHENTICATION_BACKENDS = [
    # django-axes first: it refuses a locked-out username or address before the password is checked.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# Login throttling (django-axes): after LOGIN_FAILURE_LIMIT wrong passwords for one
# username, or from one client address, further attempts for that username / from that
# address are refused (429) for the cool-off time, even with the right password. The
# two counts are kept apart, so guessing many usernames from one address is stopped as
# well as guessing one username from many addresses. A success resets the count.
# `manage.py axes_reset_username <name>` / `axes_reset_ip <addr>` lift a lockout.
AXES_FAILURE_LIMIT = env_int("MEMORYWEB_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = env_int("MEMORYWEB_LOGIN_LOCKOUT_MINUTES", 15, minimum=1) / 60.0  # hours
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# Behind a TLS proxy every request comes from the proxy: with MEMORYWEB_PROXY_COUNT=N the
# client address is taken from X-Forwarded-For, N proxies from the right (django-ipware).
PROXY_COUNT = env_int("MEMORYWEB_PROXY_COUNT", 0, minimum=0)
AXES_IPWARE_PROXY_COUNT = PROXY_COUNT or None
AXES_IPWARE_META_PRECEDENCE_ORDER = ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR") if PROXY_COUNT else ("REMOTE_ADDR",)

# Transport security. The service itself speaks plain HTTP (loopback, or behind a TLS
# proxy); MEMORYWEB_HTTPS=1 says the dashboard is reached over HTTPS, so the session
# and CSRF cookies are sent only over HTTPS and browsers are told to insist on it (HSTS).
# The proxy must set X-Forwarded-Proto: https (and overwrite any the client sent).
HTTPS = env_bool("MEMORYWEB_HTTPS", False)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("MEMORYWEB_HSTS_SECONDS", 31536000, minimum=0)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("MEMORYWEB_HSTS_INCLUDE_SUBDOMAINS", False)
    # No SECURE_SSL_REDIRECT: job workers reach the tool API over loopback HTTP.

# Content-Security-Policy (django-csp 4): scripts only from this origin — no inline
# <script>, no on*= handlers, no javascript: URLs, no eval (htmx runs with allowEval off).
# Inline style attributes remain allowed (gauges set their width that way).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# Serve the dashboard's CSS and vendored htmx straight from static/ (no collectstatic step).
WHITENOISE_USE_FINDERS = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Request bodies are bounded before parsing (SPEC §2: payload_too_large).
API_MAX_BODY_BYTES = env_int("MEMORYWEB_API_MAX_BODY_BYTES", 2 * 1024 * 1024, minimum=1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES

# SPEC §6 defaults. Per-profile overrides live in Profile.settings (see accounts.config).
MEMORYWEB_DEFAULTS: dict[str, object] = {
    "l0.batchSize": env_int("MEMORYWEB_L0_BATCH_SIZE", 25, minimum=1),
    "l0.backgroundSize": env_int("MEMORYWEB_L0_BACKGROUND_SIZE", 5, minimum=0),
    "l1.mode": "code",
    "l1.fixMinEvidenceChars": 20,
    "l1.fixDebounceHours": 24,
    "l1.fixHighValueHits": 5,
    "l1.writeLockTimeoutSeconds": env_int("MEMORYWEB_WRITE_LOCK_TIMEOUT_SECONDS", 10, minimum=1),
    "l2.maxScenes": 20,
    "l2.archiveMinAgeDays": 7,
    "l2.backupsPerBlock": 10,
    "l2.blockMaxChars": 24000,
    "l2.callMaxChars": 96000,
    "l3.charLimit": 1375,
    "recall.autoInjectTopK": 5,
    "recall.maxTopK": 20,
    "recall.callsPerTurn": 3,
    "recall.timeoutMs": env_int("MEMORYWEB_RECALL_TIMEOUT_MS", 5000, minimum=1),
    "recall.maxCharsPerMemory": 500,
    "recall.hideClosedTasks": env_bool("MEMORYWEB_RECALL_HIDE_CLOSED_TASKS", False),
    # Calibrated on bench/recall_quality.py (docs/retrieval.md "Relevance and abstention").
    "recall.minRelevance": 0.04,
    "scenePool.listLimit": 50,
    "scenePool.staleDays": 60,
    "embedAndSearch.maxQueries": 50,
    "embedAndSearch.previewChars": 200,
    # memory_ingest with wait: how long the call waits for the extraction run it started.
    "mcp.ingestWaitSeconds": env_int("MEMORYWEB_MCP_INGEST_WAIT_SECONDS", 60, minimum=0),
}

# Retrieval (apps/search is the only user of these).
QDRANT_PATH = env_str("QDRANT_PATH", str(DATA_DIR / "qdrant"))  # qdrant-client local mode (the fallback engine)
# Embedded engine: auto (Qdrant Edge when qdrant-edge-py is installed, else local mode), edge, local.
INDEX_ENGINE = env_str("MEMORYWEB_INDEX_ENGINE", "auto")
QDRANT_EDGE_PATH = env_str("QDRANT_EDGE_PATH", str(DATA_DIR / "index-edge"))
QDRANT_URL = env_str("QDRANT_URL", "")
QDRANT_API_KEY = env_str("QDRANT_API_KEY", "")
EMBED_MODEL = env_str("MEMORYWEB_EMBED_MODEL", "")
EMBED_MODEL_DIR = Path(env_str("MEMORYWEB_EMBED_MODEL_DIR", str(DATA_DIR / "models")))
# The local model's tokenizer: "lean" (apps/search/unigram.py, same ids, ~230 MB less
# memory) or "tokenizers" (the Tokenizer fastembed loads itself).
EMBED_TOKENIZER = env_str("MEMORYWEB_EMBED_TOKENIZER", "lean")

# Celery: the embedded default needs no server (SQLite via SQLAlchemy transport).
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", f"sqla+sqlite:///{DATA_DIR / 'celery-broker.sqlite3'}")
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND", "") or None
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# A job's message is acknowledged only after it finished, one message per worker process.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Hard ceilings; each job kind passes tighter limits when it is enqueued (apps.pipeline.jobs).
CELERY_TASK_SOFT_TIME_LIMIT = 330
CELERY_TASK_TIME_LIMIT = 360
CELERY_TASK_DEFAULT_QUEUE = "quick"
CELERY_TASK_ROUTES = {"apps.pipeline.tasks.drain_index_outbox": {"queue": "embed"}, "apps.pipeline.tasks.*": {"queue": "quick"}}
# A broker that is down must not hold an API request for long: the sweep re-sends later.
CELERY_BROKER_CONNECTION_TIMEOUT = env_int("CELERY_BROKER_CONNECTION_TIMEOUT", 3, minimum=1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker or beat that loses the broker keeps retrying until it is back (no limit), so a
# broker outage pauses the jobs instead of ending the processes.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# kombu's Redis transport crashes the worker when it closes a channel that still holds
# unacknowledged messages after the broker went away; memoryweb.broker works around it.
if CELERY_BROKER_URL.startswith("redis://"):
    CELERY_BROKER_TRANSPORT = "memoryweb.broker:RedisTransport"
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5}
# The SQLAlchemy transport hands its options to create_engine: Redis-only keys stay off it.
# CELERY_REDIS_KEY_PREFIX lets several installs (or test runs) share one Redis database.
CELERY_BROKER_TRANSPORT_OPTIONS = (
    {"socket_connect_timeout": 3, "socket_timeout": 5, "visibility_timeout": 3600,
     **({"global_keyprefix": env_str("CELERY_REDIS_KEY_PREFIX", "")} if env_str("CELERY_REDIS_KEY_PREFIX", "") else {})}
    if CELERY_BROKER_URL.startswith(("redis://", "rediss://"))
    else {}
)
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE = {
    # Re-check every trigger of every profile, re-send queued runs whose message was lost,
    # and fail runs whose worker died: no trigger is lost while the beat runs.
    "pipeline-sweep": {"task": "apps.pipeline.tasks.sweep", "schedule": env_int("MEMORYWEB_SWEEP_SECONDS", 60, minimum=5)},
    # Drain the index outbox (only acts with a Qdrant server; embedded Qdrant belongs to the web process).
    "index-outbox-drain": {"task": "apps.pipeline.tasks.drain_index_outbox", "schedule": 30.0},
}

# LLM driver (absent → the rules driver runs).
LLM_BASE_URL = env_str("MEMORYWEB_LLM_BASE_URL", "")
LLM_API_KEY = env_str("MEMORYWEB_LLM_API_KEY", "")
LLM_MODEL = env_str("MEMORYWEB_LLM_MODEL", "")

# Where jobs reach the tool API when embedded Qdrant is owned by the web process.
SERVICE_URL = env_str("MEMORYWEB_SERVICE_URL", "http://127.0.0.1:8000")

# Metrics (`/metrics`, apps.metrics): admin tokens may scrape; so may this token, if set.
METRICS_TOKEN = env_str("MEMORYWEB_METRICS_TOKEN", "")

# Logs go to stderr: one line per request (memoryweb.request) and per job run
# (memoryweb.job) with profile, tool, status and duration. MEMORYWEB_LOG_FORMAT=json
# writes one JSON object per line (python-json-logger), the extra fields as keys.
LOG_FORMAT = env_str("MEMORYWEB_LOG_FORMAT", "text")
if LOG_FORMAT not in ("text", "json"):
    from memoryweb.env import ImproperlyConfiguredEnv

    raise ImproperlyConfiguredEnv(f"MEMORYWEB_LOG_FORMAT must be text or json, got {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "format": "%(asctime)s %(levelname)s %(name)s %(message)s",
            "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Every request already has its memoryweb.request line.
        "django.server": {"level": "WARNING"},
        "django.request": {"level": "ERROR"},
    },
}
