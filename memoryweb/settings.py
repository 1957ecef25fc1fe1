"""memoryweb settings: one file, every value from the environment via typed helpers."""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from memoryweb.env import env_bool, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("MEMORYWEB_DATA_DIR", str(BASE_DIR / "var"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)

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
    "apps.dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
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

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"

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
}

# Retrieval (apps/search is the only user of these).
QDRANT_PATH = env_str("QDRANT_PATH", str(DATA_DIR / "qdrant"))
QDRANT_URL = env_str("QDRANT_URL", "")
QDRANT_API_KEY = env_str("QDRANT_API_KEY", "")
EMBED_MODEL = env_str("MEMORYWEB_EMBED_MODEL", "")
EMBED_MODEL_DIR = Path(env_str("MEMORYWEB_EMBED_MODEL_DIR", str(DATA_DIR / "models")))

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

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
