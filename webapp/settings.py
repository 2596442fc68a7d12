"""Django settings. Everything a deployment changes comes from the environment:

* ``DATABASE_URL`` (dj-database-url), else SQLite at ``var/db.sqlite3``;
* ``REDIS_URL``: Celery broker and result backend, else kombu's server-less filesystem transport
  under ``var/broker/`` (one solo-pool worker, see bin/run-local);
* ``DJANGO_SECRET_KEY`` (required unless ``DJANGO_DEBUG=1``), ``DJANGO_DEBUG`` (1/0),
  ``DJANGO_ALLOWED_HOSTS`` and ``DJANGO_CSRF_TRUSTED_ORIGINS`` (comma-separated),
  ``DJANGO_HTTPS`` (1 in production: secure cookies, SSL redirect, HSTS), ``DJANGO_PROXY_SSL_HEADER``,
  ``DJANGO_SECURE_COOKIES``; docs/security.md;
* ``MLSCHED_OPEN_SIGNUP`` (1/0: anyone may create an account; default 0), ``MLSCHED_LOGIN_FAILURES``,
  ``MLSCHED_LOGIN_COOLOFF_MINUTES``, the ``MLSCHED_QUOTA_*`` limits, ``MLSCHED_WEB_PARSE_SECONDS``,
  ``MLSCHED_DRAFT_MAX_AGE``, ``MLSCHED_DRAFT_KEEP``;
* ``MLSCHED_HEARTBEAT``,
  ``MLSCHED_HEARTBEAT_TIMEOUT``, ``MLSCHED_MAX_ATTEMPTS``, ``MLSCHED_STORE_BACKOFF``, ``MLSCHED_STORE_PATIENCE``,
  ``MLSCHED_REDISPATCH_AFTER``, ``MLSCHED_BROKER_TIMEOUT`` (docs/architecture.md, "A run's life");
* ``MLSCHED_STORAGE`` (where results, uploads and reproductions are kept: ``database``, the default,
  ``filesystem`` under ``MEDIA_ROOT``, or a storage class's dotted path) and
  ``MLSCHED_STORAGE_OPTIONS`` (JSON); ``MEDIA_ROOT`` (default ``var/media``), ``MLSCHED_VAR_DIR``
  (default ``var/``);
* ``MLSCHED_RUN_TIME_LIMIT`` (seconds one simulation may take), ``MLSCHED_QUEUE`` (Celery queue);
* ``MLSCHED_PUBLIC_URL``: the base URL share links are built on (default: the request's host);
  ``MLSCHED_NETWORK_URL``: the base for links made from a request to 127.0.0.1/localhost (set by
  ``bin/network-env`` for ``make run HOST=0.0.0.0``).
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


def env_list(name: str) -> list[str]:
    return [x.strip() for x in os.environ.get(name, "").split(",") if x.strip()]


BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("MLSCHED_VAR_DIR") or BASE_DIR / "var")

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        # A published key lets anyone forge sessions and share-page signatures: a deployment
        # (DEBUG off) must bring its own.
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set: set it to a long random string (python -c 'import secrets; "
            "print(secrets.token_urlsafe(50))'), or set DJANGO_DEBUG=1 for a local development server"
        )
    SECRET_KEY = "dev-only-insecure-secret-key-set-DJANGO_SECRET_KEY"
# The address teammates open share links at behind a proxy (its public URL): every share link is
# built on it, and its host is allowed. Unset, links keep the host the request came to, except
# that a request to 127.0.0.1/localhost gets links on MLSCHED_NETWORK_URL when set (``make run
# HOST=0.0.0.0`` sets it to this machine's first address: bin/network-env).
MLSCHED_PUBLIC_URL = os.environ.get("MLSCHED_PUBLIC_URL", "").strip()
MLSCHED_NETWORK_URL = os.environ.get("MLSCHED_NETWORK_URL", "").strip()
ALLOWED_HOSTS = [
    "localhost",
    "127.0.0.1",
    *env_list("DJANGO_ALLOWED_HOSTS"),
    *([urlsplit(MLSCHED_PUBLIC_URL).hostname or ""] if MLSCHED_PUBLIC_URL else []),
]
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS")  # e.g. https://lab.example.org behind a proxy

# Served over HTTPS (DJANGO_HTTPS=1, the production setting; docs/security.md): secure cookies,
# HTTP redirected to HTTPS (the health check excepted: it is called over plain HTTP inside the
# deployment), HSTS. Behind a TLS-terminating proxy, DJANGO_PROXY_SSL_HEADER=1 trusts its
# X-Forwarded-Proto header (only set it when the proxy overwrites that header).
HTTPS = env_bool("DJANGO_HTTPS", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS or env_bool("DJANGO_SECURE_COOKIES", False)
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000")) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS and env_bool("DJANGO_HSTS_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = HTTPS and env_bool("DJANGO_HSTS_PRELOAD", True)  # allows a preload-list submission
if env_bool("DJANGO_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "axes",  # login throttling (django-axes): AXES_* below
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",  # runserver (make run) leaves /static/ to WhiteNoise: gzip, cache headers
    "django.contrib.staticfiles",
    "webapp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # 400 for a path, query or form value holding a NUL or an unpaired surrogate (webapp/security.py).
    "webapp.security.TextCheckMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a signed-in user unless its view is marked @login_not_required
    # (sign-in, sign-up, share links, the token-authenticated API, the health check).
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "webapp.middleware.ShareErrors",  # friendly 404/410 pages for share links that do not open
    # Content-Security-Policy and Cache-Control on pages (webapp/security.py).
    "webapp.security.HeadersMiddleware",
    # Last, as django-axes asks: answers a locked-out sign-in with 429.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out sign-in before any password is hashed
    "django.contrib.auth.backends.ModelBackend",
]
# Login throttling: after MLSCHED_LOGIN_FAILURES wrong passwords for one user name from one IP
# address, that pair is refused (429, no password checked) for MLSCHED_LOGIN_COOLOFF_MINUTES; a
# successful sign-in clears the count. Attempts are stored in the database (axes' tables), so every
# web process sees them. `manage.py axes_reset` unlocks everybody.
AXES_FAILURE_LIMIT = int(os.environ.get("MLSCHED_LOGIN_FAILURES", "5"))
AXES_COOLOFF_TIME = timedelta(minutes=float(os.environ.get("MLSCHED_LOGIN_COOLOFF_MINUTES", "15")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Anyone may create an account at /accounts/signup/: off unless set (bin/run-local, i.e. `make run`,
# turns it on for a local server); otherwise an operator creates accounts (admin or createsuperuser).
MLSCHED_OPEN_SIGNUP = env_bool("MLSCHED_OPEN_SIGNUP", False)

ROOT_URLCONF = "webapp.urls"
WSGI_APPLICATION = "webapp.wsgi.application"

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
                "webapp.security.site_flags",
                "webapp.context.plotly_js",
            ],
        },
    },
]

# Connections are kept for 60 s and checked before a request (or a recovery pass) reuses one, so
# that after a database restart no process answers a 500 on its dead connection.
DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}", conn_max_age=60, conn_health_checks=True
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # The web server and the worker write to one file: wait for the lock instead of failing,
    # take it at the start of a transaction, and let readers (status polls) run beside a writer.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Tests use a file too: Django's default in-memory shared-cache test database takes table locks
    # that fail at once ("database table is locked") when the live server and a worker thread meet.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
    VAR_DIR.mkdir(parents=True, exist_ok=True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True  # WhiteNoise serves static/ directly (no STATIC_ROOT, no collectstatic step)
WHITENOISE_AUTOREFRESH = DEBUG


def static_cache_headers(headers: dict[str, str], path: str, url: str) -> None:
    """WhiteNoise hook: the vendored plotly.js (4.8 MB, changes only with the plotly pin) may be
    cached by browsers for a day, so that a returning user's page does not download and compile it
    again; the app's own CSS and JS keep WhiteNoise's short default."""
    if url.endswith(("/vendor/plotly.min.js", "/vendor/plotly-cartesian.min.js")):
        headers["Cache-Control"] = "public, max-age=86400"


WHITENOISE_ADD_HEADERS_FUNCTION = static_cache_headers

# Where every file one host writes and another reads is kept (results with their chart and Gantt
# indexes, drafts, raw uploads, reproductions; DESIGN section 8, docs/architecture.md "Storage and
# hosts"). MLSCHED_STORAGE: "database" (the default: rows of the database every host reaches, so
# hosts need no shared folder), "filesystem" (MEDIA_ROOT: one machine, or a folder every host
# mounts), or the dotted path of any Django storage class (e.g. django-storages' S3 backend), with
# MLSCHED_STORAGE_OPTIONS a JSON object of its keyword arguments.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT") or VAR_DIR / "media")
MEDIA_URL = "/media/"  # not served: results are read through the app's own views
STORAGE_BACKENDS = {
    "database": "webapp.dbstorage.DatabaseStorage",
    "filesystem": "django.core.files.storage.FileSystemStorage",
}


def storage_setting(name: str, options_text: str) -> dict[str, object]:
    """The ``STORAGES["default"]`` entry that MLSCHED_STORAGE and MLSCHED_STORAGE_OPTIONS describe."""
    name = name.strip() or "database"
    backend = STORAGE_BACKENDS.get(name, name)
    if "." not in backend:
        choices = ", ".join(STORAGE_BACKENDS)
        raise ImproperlyConfigured(
            f"MLSCHED_STORAGE={name!r}: expected one of {choices} or a storage class's dotted path"
        )
    try:
        options = json.loads(options_text or "{}")
    except json.JSONDecodeError as exc:
        raise ImproperlyConfigured(f"MLSCHED_STORAGE_OPTIONS is not JSON: {exc}") from None
    if not isinstance(options, dict):
        raise ImproperlyConfigured("MLSCHED_STORAGE_OPTIONS must be a JSON object of the storage's options")
    return {"BACKEND": backend, "OPTIONS": options}


STORAGES = {
    "default": storage_setting(os.environ.get("MLSCHED_STORAGE", ""), os.environ.get("MLSCHED_STORAGE_OPTIONS", "")),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Uploads: files up to 2.5 MB stay in memory, larger ones spill to a temporary file, and the
# capped handler stops storing a file past the loaders' limit (the form reports its size).
# Non-file fields are small; Django's default cap on them stays.
FILE_UPLOAD_HANDLERS = [
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "webapp.uploads.CappedTemporaryFileUploadHandler",
]
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

# Per-user quotas (webapp/quotas.py, docs/security.md): runs queued or running at once, experiments
# created per hour, and jobs of a preset generated inside a web request (larger: the CLI's generate).
MLSCHED_QUOTA_ACTIVE_RUNS = int(os.environ.get("MLSCHED_QUOTA_ACTIVE_RUNS", "240"))
MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR = int(os.environ.get("MLSCHED_QUOTA_EXPERIMENTS_PER_HOUR", "30"))
MLSCHED_QUOTA_WEB_PRESET_JOBS = int(os.environ.get("MLSCHED_QUOTA_WEB_PRESET_JOBS", "20000"))
# Longest a web request spends checking one trace (webapp/security.py, parse_deadline); gunicorn's
# worker timeout (docker-compose.yml) is 120 s.
MLSCHED_WEB_PARSE_SECONDS = float(os.environ.get("MLSCHED_WEB_PARSE_SECONDS", "30"))
# Previewed dataset files (webapp/drafts.py, clean_drafts): kept at most this many seconds when
# neither added nor replaced, and a user's newest MLSCHED_DRAFT_KEEP of them when they preview again.
MLSCHED_DRAFT_MAX_AGE = float(os.environ.get("MLSCHED_DRAFT_MAX_AGE", str(24 * 3600)))
MLSCHED_DRAFT_KEEP = int(os.environ.get("MLSCHED_DRAFT_KEEP", "5"))
# The worker that finishes an experiment's last run draws the default views of its JCT, Gantt and
# Utilisation tabs into the figure cache (webapp/figurecache.py), so that the first visit reads them.
MLSCHED_WARM_FIGURES = os.environ.get("MLSCHED_WARM_FIGURES", "1") == "1"

# Simulations (Celery). The run store is how a task reads and records a run (docs/architecture.md).
MLSCHED_RUN_STORE = "webapp.runstore.DjangoRunStore"
MLSCHED_CHECK_STORE = "webapp.tracechecks.DjangoCheckStore"
MLSCHED_SUBMISSION_STORE = "webapp.submit_worker.DjangoSubmissionStore"
MLSCHED_RUN_TIME_LIMIT = int(os.environ.get("MLSCHED_RUN_TIME_LIMIT", "1800"))
MLSCHED_STALE_GRACE = 120  # seconds past the time limit before a "running" run is declared lost
# A running task beats every MLSCHED_HEARTBEAT seconds (and writes its progress then); a run whose
# beat is older than MLSCHED_HEARTBEAT_TIMEOUT lost its worker: it is re-queued while it has had
# fewer than MLSCHED_MAX_ATTEMPTS claims, else failed with the reason.
MLSCHED_HEARTBEAT = float(os.environ.get("MLSCHED_HEARTBEAT", "2"))
MLSCHED_HEARTBEAT_TIMEOUT = float(os.environ.get("MLSCHED_HEARTBEAT_TIMEOUT", "60"))
MLSCHED_MAX_ATTEMPTS = int(os.environ.get("MLSCHED_MAX_ATTEMPTS", "2"))
# A worker that cannot reach the database to record an outcome (a PostgreSQL restart) tries again in
# place, pausing MLSCHED_STORE_BACKOFF seconds and doubling up to 30 s, for MLSCHED_STORE_PATIENCE
# seconds; its heartbeat goes on meanwhile, so a finished run is neither lost nor simulated again.
MLSCHED_STORE_BACKOFF = float(os.environ.get("MLSCHED_STORE_BACKOFF", "1"))
MLSCHED_STORE_PATIENCE = float(os.environ.get("MLSCHED_STORE_PATIENCE", "600"))
# Lost-run checks and re-dispatch of runs the broker did not take run from `manage.py recover_runs
# --every N` (bin/run-local and docker-compose's recover service run it; never a web request, so a
# hung broker costs pages nothing).
# A run still queued this many seconds after its message reached the broker, while the queue holds
# fewer messages than queued runs, may have lost its message (a Redis restart without persistence):
# that many such runs, oldest first, are sent again. The experiment page notes runs waiting longer.
MLSCHED_REDISPATCH_AFTER = float(os.environ.get("MLSCHED_REDISPATCH_AFTER", "60"))

REDIS_URL = os.environ.get("REDIS_URL")
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Above the hard limit: an unacknowledged (acks_late) message is redelivered only after a run
    # could not possibly still be running.
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, Any] = {"visibility_timeout": 2 * MLSCHED_RUN_TIME_LIMIT + 120}
else:
    BROKER_DIR = VAR_DIR / "broker"
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR),
        "data_folder_out": str(BROKER_DIR),
        "processed_folder": str(BROKER_DIR / "processed"),
        "control_folder": str(BROKER_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = f"file://{VAR_DIR / 'celery-results'}"
    for folder in (BROKER_DIR, BROKER_DIR / "processed", BROKER_DIR / "control", VAR_DIR / "celery-results"):
        folder.mkdir(parents=True, exist_ok=True)
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("MLSCHED_QUEUE", "mlsched")
CELERY_TASK_SOFT_TIME_LIMIT = MLSCHED_RUN_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = MLSCHED_RUN_TIME_LIMIT + 60
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_WORKER_PREFETCH_MULTIPLIER = 1  # simulations are long: do not hoard them in one worker
# Acknowledge after the task ran: a message whose worker died is delivered again (the claim makes
# the second delivery harmless), and a killed child's message goes back to the queue at once.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Sending a task gives up quickly when the broker is down or does not answer: the run is kept and
# dispatched later. The web side's connections (workers.tasks.broker_connection) wait this long to
# connect and for each reply; the workers' own connections have no read timeout.
CELERY_BROKER_CONNECTION_TIMEOUT = float(os.environ.get("MLSCHED_BROKER_TIMEOUT", "3"))
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"webapp": {"level": "INFO"}, "workers": {"level": "INFO"}},
}
