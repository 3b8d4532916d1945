"""lockviz settings: every knob is an environment variable with a working local default.

One module past the usual ~300 lines, on purpose: every setting, in the one place Django reads
them.

LOCKVIZ_DB            SQLite file (default: lockviz.sqlite3 next to manage.py)
LOCKVIZ_DATABASE_URL  a PostgreSQL database instead, e.g. postgresql://user:pass@host:5432/lockviz:
                      what several app processes (a big class) share; its password may come
                      from the file LOCKVIZ_DATABASE_PASSWORD_FILE instead (docker compose)
LOCKVIZ_SERVERS       use these servers instead of starting them, e.g.
                      "redis-1=redis-1:6379,storage=storage:6379" (docker compose)
LOCKVIZ_MAX_RUNS      the most runs executing at once (default 24): fewer while the machine is
                      busy or runs come late (lockviz/lab/capacity.py); the others queue
LOCKVIZ_MAX_QUEUE     runs waiting for a slot before new ones are refused, 503 (default 64)
LOCKVIZ_WORK_PROCESSES  processes that parse imports and draw first exports, out of the web
                      process and below it in priority (default 2; lockviz/edge/workers.py);
                      twice as many jobs at once, then 503 "busy, try again"
LOCKVIZ_SPARES        warm spares kept ahead per set of servers a run asks for (default 1; 0: off;
                      read by the lab itself, lockviz/lab/spares.py); LOCKVIZ_SPARES_MOST (4) for
                      sets in demand
LOCKVIZ_MAX_PER_BROWSER  one browser's queued + running runs before it is refused, 429 (4)
LOCKVIZ_PRESENTER_RUNS   a room's presenter's runs live at once, their own allowance (4); a
                      presenter's runs go first. Presenting counts only for a room open, not
                      idle, with members present, opened by a logged-in teacher, or by anyone
                      where LOCKVIZ_ANYONE_PRESENTS is "1" (a closed lab; default off)
Fair shares per client address (lockviz.shares; over one: 429, a sentence and Retry-After). The
address is the socket's, or the trusted proxy's word (LOCKVIZ_TRUSTED_PROXIES). Members of a
room count against the room's allowance instead, which its presenter sets on the room page:
LOCKVIZ_MAX_PER_ADDRESS       runs queued + running from one address, outside rooms (6)
LOCKVIZ_PLAY_PER_ADDRESS      free-play sessions live from one address, outside rooms (3)
LOCKVIZ_IMPORTS_PER_HOUR      imports from one address (30)
LOCKVIZ_ROOMS_PER_HOUR        rooms opened from one address (5)
LOCKVIZ_JOINS_PER_MINUTE      joins of a room from one address (120)
LOCKVIZ_CODE_MISSES_PER_HOUR  room codes from one address that match no open room: past it,
                              every code is refused alike for the rest of the hour (100)
LOCKVIZ_SOCKETS_PER_ADDRESS   live streams (runs' and rooms') open from one address (400;
                              0: no limit)
LOCKVIZ_MEMBERS_PER_ADDRESS   members of one room from one address (300)
LOCKVIZ_VOTES_PER_MINUTE      answers to one room's polls from one address (600)
LOCKVIZ_PLANS_PER_HOUR        lecture plans made (new, copied, imported) from one address (20)
LOCKVIZ_RETENTION_DAYS   runs and imports older than this are removed (default 30; prune), unless
                      a teacher saved them in their library (lockviz.library) or a lecture plan
                      replays them; an anonymous browser's plans untouched this long go too
LOCKVIZ_SIGNUP        "1": anyone may make a teacher account at /accounts/signup/ (default off:
                      accounts are made by an admin, manage.py createteacher or /admin/)
LOCKVIZ_LOGIN_FAILURES_PER_HOUR  failed logins to one account name from one address (then
                      that address may not try that name for the rest of the hour), from one
                      device that logged in as it before, and to the name from everywhere (20):
                      past that, a device new to the name is slowed (lockviz.accounts.logins)
LOCKVIZ_LOGIN_SLOWED_PER_MINUTE  attempts a minute at a name past its failures, from devices
                      that never logged in as it (1); a known device's right password gets in
LOCKVIZ_SIGNUPS_PER_HOUR  accounts made from one address in an hour, when sign-up is on (5)
LOCKVIZ_ROOM_IDLE_HOURS  a room whose presenter has been away this long is gone, and deleted
                      with its polls by prune (default 12)
LOCKVIZ_MAX_BODY      the largest request body accepted, in bytes (default 8 MiB)
LOCKVIZ_MAX_UNSENT    a live viewer whose frames not yet sent pass this, in bytes, is dropped
                      (default 4 MiB; lockviz.live.unsent); its page reconnects where it stopped
LOCKVIZ_EMBED_ANCESTORS  who may frame a replay's embed (/embed/runs/<id>/): the CSP
                      frame-ancestors sources, space separated, e.g. "https://moodle.example.edu
                      https://*.example.org" (default "*": any page; "'none'": no one). Every
                      other page refuses to be framed (X-Frame-Options: DENY)
LOCKVIZ_DEBUG         "1" for Django's debug pages
LOCKVIZ_SECRET_KEY    signs the session cookies that say who started a run; when unset, a key is
                      made once per install and kept in LOCKVIZ_STATE_DIR (never in the repo)
LOCKVIZ_STATE_DIR     where that key lives (default ~/.local/state/lockviz)
LOCKVIZ_ALLOWED_HOSTS extra host names, comma separated
LOCKVIZ_PUBLIC_URL    the address a class types, e.g. "https://locks.example.edu" (or
                      "http://192.168.1.20:8000"): its host is allowed, its origin trusted for
                      CSRF, and the join link and QR code of a room point at it. With https,
                      cookies are Secure, HSTS is sent (LOCKVIZ_HSTS_SECONDS, default a year; 0
                      for none), and pages open their WebSockets over wss://. Unset: the
                      address each request came to (make run's http://127.0.0.1:8000/)
LOCKVIZ_TRUSTED_PROXIES  addresses or networks of the reverse proxies in front of the app, e.g.
                      "127.0.0.1" or "172.28.0.0/16": only from these are X-Forwarded-For,
                      -Proto and -Host believed (lockviz.edge.proxies); default none
LOCKVIZ_METRICS_FROM  who may read /metrics without a token: addresses or networks, comma
                      separated (default "127.0.0.0/8,::1"), and only straight, never through a
                      proxy (a request with X-Forwarded-For is refused); see lockviz.ops.access
LOCKVIZ_METRICS_TOKEN a Prometheus elsewhere reads /metrics with "Authorization: Bearer <it>";
                      unset, no token is accepted. Or from a file: LOCKVIZ_METRICS_TOKEN_FILE
LOCKVIZ_CHANNEL_REDIS_PASSWORD_FILE  that Redis's password, read from a file (docker compose)
LOCKVIZ_CHANNEL_REDIS the Redis that carries live events to viewers (the channel layer), e.g.
                      "redis://10.0.0.5:6379/0": several app processes on one such Redis (and
                      one database) all stream every run. Unset, each app process starts a
                      redis-server of its own for it (see lockviz.live.channel_layer)
LOCKVIZ_LAB_HOSTS     where runs' labs run (lockviz.labhost): "embedded" (default) - `serve`
                      starts one lab host of its own as a child process and runs no lab itself
                      (elsewhere - tests, manage.py run_scenario - runs execute in the process);
                      "remote" - `serve` starts no lab: runs are queued for `manage.py labhost`
                      processes on LOCKVIZ_CHANNEL_REDIS (needed); "inprocess" - `serve` runs
                      labs in its own process, as lockviz did before lab hosts
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from lockviz.conf.environ import number
from lockviz.conf.secret import install_key
from lockviz.edge.proxies import networks

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = os.environ.get("LOCKVIZ_DEBUG", "") == "1"
STATE_DIR = Path(
    os.environ.get("LOCKVIZ_STATE_DIR")
    or Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "lockviz"
)
SECRET_KEY = os.environ.get("LOCKVIZ_SECRET_KEY") or install_key(STATE_DIR / "secret_key")
PUBLIC_URL = os.environ.get("LOCKVIZ_PUBLIC_URL", "").strip().rstrip("/")
_public = urlsplit(PUBLIC_URL)
if PUBLIC_URL and (_public.scheme not in ("http", "https") or not _public.hostname):
    raise ImproperlyConfigured(
        f"LOCKVIZ_PUBLIC_URL={PUBLIC_URL!r} must be an http:// or https:// address with a host, "
        "e.g. https://locks.example.edu"
    )
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"] + [  # Django's tests add "testserver"
    host for host in os.environ.get("LOCKVIZ_ALLOWED_HOSTS", "").split(",") if host
]
CSRF_TRUSTED_ORIGINS: list[str] = []
TRUSTED_PROXIES = networks(os.environ.get("LOCKVIZ_TRUSTED_PROXIES", "").split(","))
if PUBLIC_URL:
    ALLOWED_HOSTS.append(_public.hostname or "")
    CSRF_TRUSTED_ORIGINS.append(f"{_public.scheme}://{_public.netloc}")
if _public.scheme == "https":  # the presenter's cookie is what makes them the presenter
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = number("LOCKVIZ_HSTS_SECONDS", 31536000)

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.messages",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "lti_tool",  # django-lti: LTI 1.3 registrations, deployments, keys, launches (lockviz.lms)
    "lockviz",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "lockviz.edge.staticfiles.Middleware",  # static files (WhiteNoise's), before any other work
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",  # a teacher's account, if any
    "django.contrib.messages.middleware.MessageMiddleware",  # the admin site's notices
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "lockviz.edge.csp.Middleware",  # scripts only from the site itself (lockviz.edge.csp)
    "django_htmx.middleware.HtmxMiddleware",
    "lockviz.views.refusals.Refusals",  # a refusal a view lets out: its sentence and status
]

ROOT_URLCONF = "lockviz.urls"
ASGI_APPLICATION = "lockviz.asgi.application"

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
                "lockviz.views.pagedata.room_bar",  # the room this browser presents, if any
                "lockviz.views.plans.plan_bar",  # the plan it presents there, if any
            ],
            # Every page names its scripts and styles by {% static %}: no template loads it.
            "builtins": ["django.templatetags.static"],
        },
    }
]

DATABASES: dict[str, dict[str, object]] = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("LOCKVIZ_DB", str(BASE_DIR / "lockviz.sqlite3")),
        "OPTIONS": {
            # Runs record events from several threads at once: WAL lets readers (a viewer
            # catching up) proceed while a run writes, and a write waits instead of failing.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
        # Tests use a file too: runs write from their own threads while the test reads, and an
        # in-memory SQLite database shared between threads locks whole tables instead of waiting.
        "TEST": {
            "NAME": os.path.join(tempfile.gettempdir(), f"lockviz-test-{os.getpid()}.sqlite3")
        },
    }
}
if os.environ.get("LOCKVIZ_DATABASE_URL"):  # several app processes share one database
    DATABASES["default"] = dict(
        dj_database_url.parse(
            os.environ["LOCKVIZ_DATABASE_URL"], conn_max_age=60, conn_health_checks=True
        )
    )
    if os.environ.get("LOCKVIZ_DATABASE_PASSWORD_FILE"):
        DATABASES["default"]["PASSWORD"] = (
            Path(os.environ["LOCKVIZ_DATABASE_PASSWORD_FILE"]).read_text().strip()
        )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis pub/sub: one publish per event whatever the audience, and no silent drop when a viewer
# falls behind (the in-memory layer drops a message once a viewer's queue holds 100).
LOCKVIZ_CHANNEL_REDIS = os.environ.get("LOCKVIZ_CHANNEL_REDIS", "")
if LOCKVIZ_CHANNEL_REDIS and os.environ.get("LOCKVIZ_CHANNEL_REDIS_PASSWORD_FILE"):
    _password = Path(os.environ["LOCKVIZ_CHANNEL_REDIS_PASSWORD_FILE"]).read_text().strip()
    LOCKVIZ_CHANNEL_REDIS = LOCKVIZ_CHANNEL_REDIS.replace(
        "://", f"://:{quote(_password, safe='')}@", 1
    )
# The cache fair shares are counted in (lockviz.shares): one count for every app process on the
# channel layer's Redis (its password is in the URL by now); without one there is one process,
# and its own memory is the whole count. django-ratelimit is used as a library, not installed as
# an app: its system check knows only third-party Redis caches, not Django's own.
CACHES: dict[str, dict[str, object]] = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    if not LOCKVIZ_CHANNEL_REDIS
    else {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": LOCKVIZ_CHANNEL_REDIS,
        "KEY_PREFIX": "lockviz",
    }
}
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "lockviz.live.channel_layer.RunLayer",
        "CONFIG": {"hosts": [LOCKVIZ_CHANNEL_REDIS] if LOCKVIZ_CHANNEL_REDIS else None},
    }
}

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Collected by `manage.py serve` (lockviz.edge.staticfiles) whenever static/ changed: each file
# under a name with its content's hash, gzipped beside it, served by WhiteNoise with a cache
# lifetime of a year (a changed file gets a new name), so a class of browsers fetches each once.
STATIC_ROOT = BASE_DIR / "build" / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # WhiteNoise's, hashing imports too
    "staticfiles": {"BACKEND": "lockviz.edge.staticfiles.Storage"},
}

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"

# An exported run pasted into the import form can be a few MB (the import itself caps at 5 MB).
DATA_UPLOAD_MAX_MEMORY_SIZE = 6 * 1024 * 1024
# Past this a body is refused before it is read (413); below it the import's own limits speak.
LOCKVIZ_MAX_BODY = number("LOCKVIZ_MAX_BODY", 8 * 1024 * 1024)
LOCKVIZ_MAX_UNSENT = number("LOCKVIZ_MAX_UNSENT", 4 * 1024 * 1024)
LOCKVIZ_MAX_UPLOAD = 5 * 1024 * 1024  # an import's file (lockviz.runs.imports.MAX_BYTES)
FILE_UPLOAD_HANDLERS = [
    "lockviz.edge.bodylimit.LimitedUploadHandler",  # stops at the limit, before the others keep it
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]

LOCKVIZ_SERVERS = os.environ.get("LOCKVIZ_SERVERS", "")
LOCKVIZ_MAX_RUNS = number("LOCKVIZ_MAX_RUNS", 24)  # a ceiling: see capacity
LOCKVIZ_LAB_HOSTS = os.environ.get("LOCKVIZ_LAB_HOSTS", "embedded").strip() or "embedded"
if LOCKVIZ_LAB_HOSTS not in ("embedded", "remote", "inprocess"):
    raise ImproperlyConfigured(
        f"LOCKVIZ_LAB_HOSTS={LOCKVIZ_LAB_HOSTS!r} must be embedded, remote or inprocess"
    )
if LOCKVIZ_LAB_HOSTS == "remote" and not LOCKVIZ_CHANNEL_REDIS:
    raise ImproperlyConfigured(
        "LOCKVIZ_LAB_HOSTS=remote needs LOCKVIZ_CHANNEL_REDIS: the Redis the lab hosts read from"
    )
LOCKVIZ_MAX_QUEUE = number("LOCKVIZ_MAX_QUEUE", 64)
LOCKVIZ_WORK_PROCESSES = max(1, number("LOCKVIZ_WORK_PROCESSES", 2))
LOCKVIZ_MAX_PER_BROWSER = number("LOCKVIZ_MAX_PER_BROWSER", 4)
LOCKVIZ_PRESENTER_RUNS = number("LOCKVIZ_PRESENTER_RUNS", 4)
LOCKVIZ_ANYONE_PRESENTS = os.environ.get("LOCKVIZ_ANYONE_PRESENTS", "") == "1"
LOCKVIZ_RETENTION_DAYS = number("LOCKVIZ_RETENTION_DAYS", 30)
LOCKVIZ_ROOM_IDLE_HOURS = number("LOCKVIZ_ROOM_IDLE_HOURS", 12.0)
LOCKVIZ_MAX_PER_ADDRESS = number("LOCKVIZ_MAX_PER_ADDRESS", 6)
LOCKVIZ_PLAY_PER_ADDRESS = number("LOCKVIZ_PLAY_PER_ADDRESS", 3)
LOCKVIZ_IMPORTS_PER_HOUR = number("LOCKVIZ_IMPORTS_PER_HOUR", 30)
LOCKVIZ_ROOMS_PER_HOUR = number("LOCKVIZ_ROOMS_PER_HOUR", 5)
LOCKVIZ_JOINS_PER_MINUTE = number("LOCKVIZ_JOINS_PER_MINUTE", 120)
LOCKVIZ_CODE_MISSES_PER_HOUR = number("LOCKVIZ_CODE_MISSES_PER_HOUR", 100)
LOCKVIZ_SOCKETS_PER_ADDRESS = number("LOCKVIZ_SOCKETS_PER_ADDRESS", 400)
LOCKVIZ_MEMBERS_PER_ADDRESS = number("LOCKVIZ_MEMBERS_PER_ADDRESS", 300)
LOCKVIZ_VOTES_PER_MINUTE = number("LOCKVIZ_VOTES_PER_MINUTE", 600)
LOCKVIZ_PLANS_PER_HOUR = number("LOCKVIZ_PLANS_PER_HOUR", 20)

# /metrics (lockviz.ops.access): from these addresses, straight; or anywhere, with the token.
LOCKVIZ_METRICS_FROM = networks(
    os.environ.get("LOCKVIZ_METRICS_FROM", "127.0.0.0/8,::1").split(","), "LOCKVIZ_METRICS_FROM"
)
LOCKVIZ_METRICS_TOKEN = os.environ.get("LOCKVIZ_METRICS_TOKEN", "").strip()
if os.environ.get("LOCKVIZ_METRICS_TOKEN_FILE"):
    LOCKVIZ_METRICS_TOKEN = Path(os.environ["LOCKVIZ_METRICS_TOKEN_FILE"]).read_text().strip()

# The embed's Content-Security-Policy frame-ancestors (lockviz.views.embeds); checked here, so a
# typo stops the start with its name rather than serving a policy browsers ignore.
LOCKVIZ_EMBED_ANCESTORS = " ".join(os.environ.get("LOCKVIZ_EMBED_ANCESTORS", "*").split())
for _source in LOCKVIZ_EMBED_ANCESTORS.split(" "):
    if not re.fullmatch(
        r"\*|'self'|'none'|[a-z][a-z0-9+.-]*:|([a-z][a-z0-9+.-]*://)?"
        r"(\*\.)?[A-Za-z0-9.-]+(:(\d{1,5}|\*))?(/[^\s;,']*)?",
        _source,
    ):
        raise ImproperlyConfigured(
            f"LOCKVIZ_EMBED_ANCESTORS: {_source!r} is not a frame-ancestors source "
            "(*, 'self', 'none', a scheme such as https:, or a host such as https://example.org)"
        )
if "'none'" in LOCKVIZ_EMBED_ANCESTORS.split(" ") and LOCKVIZ_EMBED_ANCESTORS != "'none'":
    raise ImproperlyConfigured("LOCKVIZ_EMBED_ANCESTORS: 'none' stands alone")

# Who started a run is kept in the browser's session (a signed cookie naming a row): a session
# lives as long as its runs are kept, and the cookie is not readable by page scripts.
SESSION_COOKIE_AGE = LOCKVIZ_RETENTION_DAYS * 86400
SESSION_COOKIE_SAMESITE = "Lax"
SESSION_COOKIE_HTTPONLY = True
# Teacher accounts (lockviz.accounts): made by an admin (manage.py createteacher, /admin/), or by
# the teacher where LOCKVIZ_SIGNUP is "1". Learners never need one.
LOCKVIZ_SIGNUP = os.environ.get("LOCKVIZ_SIGNUP", "") == "1"
LOCKVIZ_LOGIN_FAILURES_PER_HOUR = int(os.environ.get("LOCKVIZ_LOGIN_FAILURES_PER_HOUR", "20"))
LOCKVIZ_LOGIN_SLOWED_PER_MINUTE = number("LOCKVIZ_LOGIN_SLOWED_PER_MINUTE", 1)
LOCKVIZ_SIGNUPS_PER_HOUR = int(os.environ.get("LOCKVIZ_SIGNUPS_PER_HOUR", "5"))
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "library"
LOGOUT_REDIRECT_URL = "index"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 10},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
CSRF_FAILURE_VIEW = "lockviz.views.refusals.csrf_failure"  # a page that says what to do

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"lockviz": {"handlers": ["console"], "level": "INFO"}},
}
