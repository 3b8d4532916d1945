"""lockviz settings: every knob is an environment variable with a working local default.

LOCKVIZ_DB            SQLite file (default: lockviz.sqlite3 next to manage.py)
LOCKVIZ_SERVERS       use these servers instead of starting them, e.g.
                      "redis-1=redis-1:6379,storage=storage:6379" (docker compose)
LOCKVIZ_MAX_RUNS      runs executing at once before others queue (default 4)
LOCKVIZ_DEBUG         "1" for Django's debug pages
LOCKVIZ_SECRET_KEY    the secret key (a fixed development key by default: the app holds no
                      secrets and has no accounts)
LOCKVIZ_ALLOWED_HOSTS extra host names, comma separated
LOCKVIZ_CHANNEL_REDIS the Redis that carries live events to viewers (the channel layer), e.g.
                      "redis://10.0.0.5:6379/0": several app processes on one such Redis (and
                      one database) all stream every run. Unset, each app process starts a
                      redis-server of its own for it (see lockviz.channel_layer)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = os.environ.get("LOCKVIZ_DEBUG", "") == "1"
SECRET_KEY = os.environ.get("LOCKVIZ_SECRET_KEY", "lockviz-local-development-key-not-a-secret")
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"] + [
    host for host in os.environ.get("LOCKVIZ_ALLOWED_HOSTS", "").split(",") if host
]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "lockviz",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "lockviz.urls"
ASGI_APPLICATION = "lockviz.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

DATABASES = {
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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis pub/sub: one publish per event whatever the audience, and no silent drop when a viewer
# falls behind (the in-memory layer drops a message once a viewer's queue holds 100).
LOCKVIZ_CHANNEL_REDIS = os.environ.get("LOCKVIZ_CHANNEL_REDIS", "")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "lockviz.channel_layer.RunLayer",
        "CONFIG": {"hosts": [LOCKVIZ_CHANNEL_REDIS] if LOCKVIZ_CHANNEL_REDIS else None},
    }
}

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "build" / "static"

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"

# An exported run pasted into the import form can be a few MB (the import itself caps at 5 MB).
DATA_UPLOAD_MAX_MEMORY_SIZE = 6 * 1024 * 1024

LOCKVIZ_SERVERS = os.environ.get("LOCKVIZ_SERVERS", "")
LOCKVIZ_MAX_RUNS = int(os.environ.get("LOCKVIZ_MAX_RUNS", "4"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"lockviz": {"handlers": ["console"], "level": "INFO"}},
}
