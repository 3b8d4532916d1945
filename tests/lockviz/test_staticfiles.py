"""Static files: collected when static/ changes, served by WhiteNoise under hashed names,
gzipped and cached for a year (a class of browsers fetches each file once)."""

from __future__ import annotations

import gzip
import os
import re
import time
import urllib.request

import pytest
from django.conf import settings

from lockviz import staticfiles
from tests.conftest import AppServer


def test_static_files_are_collected_again_only_when_one_changed() -> None:
    staticfiles.collect()
    assert staticfiles.collect() is False  # nothing changed: nothing written
    source = settings.BASE_DIR / "static" / "lockviz" / "app.css"
    before = os.stat(source)
    try:
        os.utime(source, (before.st_atime, time.time() + 60))  # edited after the collection
        assert staticfiles.collect() is True
    finally:
        os.utime(source, (before.st_atime, before.st_mtime))


@pytest.mark.live
def test_a_page_names_its_scripts_by_hash_and_they_come_gzipped_and_kept(
    app_server: AppServer,
) -> None:
    with urllib.request.urlopen(app_server.url + "/") as response:
        page = response.read().decode()
    hashed = re.search(r'href="(/static/lockviz/diagram\.[0-9a-f]{12}\.js)"', page)
    assert hashed, "the index prefetches diagram.js under its hashed name"
    request = urllib.request.Request(
        app_server.url + hashed.group(1), headers={"Accept-Encoding": "gzip"}
    )
    with urllib.request.urlopen(request) as response:
        assert response.headers["Content-Encoding"] == "gzip"
        assert "immutable" in response.headers["Cache-Control"]
        assert "max-age=315360000" in response.headers["Cache-Control"]
        body = gzip.decompress(response.read())
    assert body == (settings.BASE_DIR / "static" / "lockviz" / "diagram.js").read_bytes()
