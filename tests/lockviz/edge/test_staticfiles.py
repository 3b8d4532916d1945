"""Static files: collected when static/ changes, served by WhiteNoise under hashed names,
gzipped and cached for a year (a class of browsers fetches each file once); the front end's ES
modules import each other under those names."""

from __future__ import annotations

import gzip
import json
import os
import posixpath
import re
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from whitenoise.middleware import WhiteNoiseMiddleware  # type: ignore[import-untyped]

from lockviz.edge import staticfiles
from tests.conftest import AppServer

# The relative URL of each import or export-from in a module (Prettier's layout: at a line's start).
IMPORTED = re.compile(
    r"""^(?:import|export)\b[^;"']*?(?:\bfrom\s*)?["'](\.{1,2}/[^"']+)["']""", re.M
)


def test_static_files_are_collected_again_only_when_one_changed(tmp_path: Path) -> None:
    # Into a directory of its own: the suite's other workers serve build/static meanwhile, and
    # a collection there would rewrite files under them (WhiteNoise, scanning it, found one
    # gone: a FileNotFoundError in an unrelated test).
    with override_settings(STATIC_ROOT=str(tmp_path)):
        assert staticfiles.collect() is True  # none yet
        assert staticfiles.collect() is False  # nothing changed: nothing written
        manifest = tmp_path / staticfiles.MANIFEST
        os.utime(manifest, (0, time.time() - 10 * 365 * 86400))  # a source edited since
        assert staticfiles.collect() is True
        assert staticfiles.collect() is False


def test_the_middleware_reads_a_collection_once_per_process_and_a_new_one_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A test client is a new handler, so a new middleware: WhiteNoise's read every file each
    # time (75 ms here). Ours reads each collection once, and serves what WhiteNoise would.
    (tmp_path / "lockviz").mkdir()
    (tmp_path / "lockviz" / "a.3f2c.js").write_text("export const a = 1;\n")
    (tmp_path / staticfiles.MANIFEST).write_text('{"paths": {"lockviz/a.js": "lockviz/a.3f2c.js"}}')
    reads: list[str] = []
    scan = WhiteNoiseMiddleware.update_files_dictionary

    def counted(self: WhiteNoiseMiddleware, root: str, prefix: str) -> None:
        reads.append(root)
        scan(self, root, prefix)

    monkeypatch.setattr(WhiteNoiseMiddleware, "update_files_dictionary", counted)
    with override_settings(STATIC_ROOT=str(tmp_path)):
        first, second = staticfiles.Middleware(), staticfiles.Middleware()
        assert len(reads) == 1
        assert set(first.files) == set(second.files) == set(WhiteNoiseMiddleware().files)
        assert "/static/lockviz/a.3f2c.js" in second.files
        (tmp_path / "lockviz" / "b.9d1e.js").write_text("export const b = 2;\n")
        manifest = tmp_path / staticfiles.MANIFEST
        os.utime(manifest, ns=(0, manifest.stat().st_mtime_ns + 1_000_000))  # collected again
        assert "/static/lockviz/b.9d1e.js" in staticfiles.Middleware().files
        assert len(reads) == 3  # the new collection, and WhiteNoise's own above


def test_every_module_imports_the_collected_files_under_their_hashes() -> None:
    """ES modules import each other by relative URL: once collected, each import names the
    file it names in static/, under that file's hashed name (hashed once), and nothing else
    (the storage's pattern would also take the word "export" in a comment for an export)."""
    staticfiles.collect()
    root = Path(settings.STATIC_ROOT)
    manifest = json.loads((root / staticfiles.MANIFEST).read_text())["paths"]
    names = [n for n in manifest if n.startswith("lockviz/") and n.endswith(".js")]
    assert "lockviz/pages/run.js" in names and "lockviz/diagram/handlers/bars.js" in names
    for name in names:
        stored = manifest[name]
        source = (settings.BASE_DIR / "static" / name).read_text()
        collected = (root / stored).read_text()
        wanted = [
            manifest[posixpath.normpath(posixpath.join(posixpath.dirname(name), url))]
            for url in IMPORTED.findall(source)
        ]
        got = [
            posixpath.normpath(posixpath.join(posixpath.dirname(stored), url))
            for url in IMPORTED.findall(collected)
        ]
        assert got == wanted, name
        assert IMPORTED.sub("", collected) == IMPORTED.sub("", source), name  # nothing else moved


@pytest.mark.live
def test_a_page_names_its_modules_by_hash_and_they_come_gzipped_and_kept(
    app_server: AppServer,
) -> None:
    with urllib.request.urlopen(app_server.url + "/") as response:
        page = response.read().decode()
    entry = re.search(r'src="(/static/lockviz/pages/base\.[0-9a-f]{12}\.js)"', page)
    assert entry, "the page loads its entry module under its hashed name"
    preloaded = re.search(r'href="(/static/lockviz/diagram/diagram\.[0-9a-f]{12}\.js)"', page)
    assert preloaded, "the index preloads the run page's diagram module under its hashed name"
    for url in (entry.group(1), preloaded.group(1)):
        request = urllib.request.Request(app_server.url + url, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request) as response:
            assert response.headers["Content-Encoding"] == "gzip"
            assert response.headers["Content-Type"].startswith("text/javascript")
            assert "immutable" in response.headers["Cache-Control"]
            assert "max-age=315360000" in response.headers["Cache-Control"]
            body = gzip.decompress(response.read()).decode()
        imports = IMPORTED.findall(body)
        assert imports and all(re.search(r"\.[0-9a-f]{12}\.js$", i) for i in imports)
        for imported in imports:  # every module it imports is there, under that name
            there = urllib.parse.urljoin(url, imported)
            with urllib.request.urlopen(app_server.url + there) as response:
                assert response.status == 200
