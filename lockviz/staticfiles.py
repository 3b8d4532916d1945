"""The collected static files, kept in step with ``static/``.

``manage.py serve`` and the test session call :func:`collect`: when a file under ``static/`` (or
a package's static files, htmx's among them) is newer than the last collection, or there is none,
``collectstatic`` runs again; otherwise nothing is written. The storage
(``whitenoise.storage.CompressedManifestStaticFilesStorage``, settings.STORAGES) names each file
by its content's hash and gzips it, so WhiteNoise can let browsers keep it for a year.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.contrib.staticfiles.finders import get_finders
from django.core.management import call_command

MANIFEST = "staticfiles.json"


def collect() -> bool:
    """Collect the static files if they changed since the last time; whether it did."""
    manifest = os.path.join(settings.STATIC_ROOT, MANIFEST)
    try:
        collected = os.stat(manifest).st_mtime
    except FileNotFoundError:
        collected = None
    if collected is not None and newest_source() <= collected:
        return False
    call_command("collectstatic", interactive=False, verbosity=0)
    return True


def newest_source() -> float:
    """When the newest file any static finder serves (``static/``, the apps') last changed."""
    newest = 0.0
    for finder in get_finders():
        for path, storage in finder.list(ignore_patterns=[]):
            newest = max(newest, os.stat(storage.path(path)).st_mtime)
    return newest
