"""The collected static files, kept in step with ``static/``.

``manage.py serve`` and the test session call :func:`collect`: when a file under ``static/`` (or
a package's static files, htmx's among them) is newer than the last collection, or there is none,
``collectstatic`` runs again; otherwise nothing is written. The storage (:class:`Storage`,
settings.STORAGES) names each file by its content's hash and gzips it, so WhiteNoise can let
browsers keep it for a year.

The front end is native ES modules (static/lockviz/, docs/architecture.md): a module's
``import ... from "./x.js";`` names another file, so the storage writes the hashed name there too,
as it does for ``url()`` in CSS. Django finds those imports with a regular expression that wants a
relative path and a closing semicolon, and that also matches the words "import" and "export" in a
comment above an import (tests/lockviz/edge/test_staticfiles.py checks every collected import).
:func:`modules` follows the imports from a page's entry module: the index prefetches what the run
page will load (lockviz/views/runs.py).
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from functools import cache
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.finders import get_finders
from django.contrib.staticfiles.storage import HashedFilesMixin
from django.core.management import call_command
from whitenoise.middleware import WhiteNoiseMiddleware  # type: ignore[import-untyped]
from whitenoise.storage import CompressedManifestStaticFilesStorage  # type: ignore[import-untyped]

MANIFEST = "staticfiles.json"
# A module's imports, as Prettier lays them out: `import … from "./x.js";` or `import "./x.js";`
# (or `export … from`) at the start of a line, never in a comment.
IMPORT = re.compile(r"""^(?:import|export)\b[^;"']*?(?:\bfrom\s*)?["'](\.{1,2}/[^"']+)["']""", re.M)


class Storage(CompressedManifestStaticFilesStorage):  # type: ignore[misc]  # whitenoise: untyped
    """WhiteNoise's storage (hashed names, gzip), with hashed names in the modules' imports."""

    support_js_module_import_aggregation = True
    # A module's name changes when a module it imports does, and Django renames them a pass at a
    # time, in its own order: a chain of imports (a page, the diagram, a handler, svg.js) can take
    # a pass per link. Django's 5 left no room for one more link; a pass costs a few ms.
    max_post_process_passes = 12
    # Django's patterns for imports and exports, applied to lockviz's own modules only: a
    # package's scripts (htmx's extensions) import files that they do not ship.
    _js_module_import_aggregation_patterns = (
        "lockviz/*.js",
        HashedFilesMixin._js_module_import_aggregation_patterns[1],  # type: ignore[attr-defined]
    )


# What a collection's files answer, by (root, prefix, the collection's manifest stamp, how they
# are served): read once per process (:class:`Middleware`).
_SCANNED: dict[tuple[Any, ...], dict[str, Any]] = {}


class Middleware(WhiteNoiseMiddleware):  # type: ignore[misc]  # whitenoise: untyped
    """WhiteNoise's middleware, reading a collection once per process, not once per handler.

    Django builds the middleware chain for each handler, and WhiteNoise's reads every collected
    file's stat and headers as it is built: ~75 ms for this app's ~700 files on the 2-core dev
    machine. A server builds one handler; a test builds one per test client, and the fuzz tests
    one per case (half of their time). A new collection writes a new manifest, whose stamp is
    part of the key, so what is served is never older than what a fresh middleware would read.
    """

    files: dict[str, Any]  # WhiteNoise's: a URL's responder

    def update_files_dictionary(self, root: str, prefix: str) -> None:
        try:
            stamp = os.stat(os.path.join(root, MANIFEST)).st_mtime_ns
        except OSError:  # not a collection of ours: read it as WhiteNoise does
            stamp = None
        if stamp is None or "immutable_file_test" in vars(self):  # or a test of its own
            super().update_files_dictionary(root, prefix)
            return
        served = (self.max_age, self.allow_all_origins, self.charset, self.index_file)
        key = (root, prefix, stamp, served, self.add_headers_function)
        found = _SCANNED.get(key)
        if found is None:
            before, self.files = self.files, {}
            super().update_files_dictionary(root, prefix)
            found = _SCANNED[key] = self.files
            self.files = before
        self.files.update(found)


def collect() -> bool:
    """Collect the static files if they changed since the last time; whether it did."""
    manifest = os.path.join(settings.STATIC_ROOT, MANIFEST)
    try:
        collected = os.stat(manifest).st_mtime
        with open(manifest, encoding="utf-8") as f:
            known = set(json.load(f).get("paths", {}))
    except (FileNotFoundError, ValueError, AttributeError):
        collected, known = None, set()
    # A newly installed app's files (the admin's) are older than the last collection: their
    # names, missing from the manifest, say they were never collected.
    if collected is not None and newest_source() <= collected and sources() <= known:
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


def sources() -> set[str]:
    """The names of the files collectstatic collects (its default patterns left out)."""
    return {
        path
        for finder in get_finders()
        for path, _ in finder.list(ignore_patterns=["CVS", ".*", "*~"])
    }


@cache
def modules(entry: str) -> tuple[str, ...]:
    """The static names of an entry module and of every module it imports, directly or not, in
    the order they are first met (``lockviz/pages/run.js``, ``lockviz/diagram/diagram.js``, …)."""
    found = [entry]
    for name in found:
        path = finders.find(name)
        if not isinstance(path, str):
            raise FileNotFoundError(f"no static file {name}")
        with open(path, encoding="utf-8") as f:
            for url in IMPORT.findall(f.read()):
                target = posixpath.normpath(posixpath.join(posixpath.dirname(name), url))
                if target not in found:
                    found.append(target)
    return tuple(found)
