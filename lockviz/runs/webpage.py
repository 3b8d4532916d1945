"""A replay in one file: what "Download as a web page" (/runs/<id>/export.html) puts inside it.

The file is templates/lockviz/offline.html: the replay page's own markup
(templates/lockviz/_replay.html), with everything it needs written into it, so that it plays
from disk with no network at all (a student on a train, a course's offline pack):

- :func:`styles`: the replay's style sheets (``STYLES``), one after the other; they name no
  font or image to fetch (tests/lockviz/views/test_embeds.py checks there is no ``url(``);
- :func:`script`: static/lockviz/pages/offline.js and every module it imports as one inline
  module (lockviz.edge.bundle: a browser imports no module by URL from ``file://``);
- :func:`packed`: the run's events with their words, as JSON, or over ``COMPRESS_OVER`` bytes as
  gzip in base64, which static/lockviz/replay/inline-events.js unpacks with the browser's
  DecompressionStream (a 20,000-event run: about a tenth of its JSON).

The page's Content-Security-Policy (a <meta> in the file) allows no source but the file's own
inline script and styles and data: images, so a request the code might make by mistake is
refused by the browser rather than sent.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
from dataclasses import dataclass
from functools import lru_cache

from django.contrib.staticfiles import finders

from lockviz.edge import bundle
from lockviz.edge.staticfiles import modules

ENTRY = "lockviz/pages/offline.js"
STYLES = ("lockviz/app.css", "lockviz/page.css", "lockviz/replay.css", "lockviz/standalone.css")
COMPRESS_OVER = 32 * 1024  # bytes of events' JSON: a typical built-in run's stay readable text
CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data: blob:; base-uri 'none'; form-action 'none'"
)


@dataclass(frozen=True)
class Packed:
    """The events as the file carries them: ``encoding`` is "json" or "gzip+base64"."""

    encoding: str
    text: str


def packed(events: list[dict[str, object]]) -> Packed:
    """``events`` as text safe inside a <script> element."""
    data = json.dumps(events, separators=(",", ":"), ensure_ascii=False)
    if len(data.encode()) <= COMPRESS_OVER:
        # as Django's json_script: nothing in it can end the element
        safe = data.replace("<", "\\u003C").replace(">", "\\u003E").replace("&", "\\u0026")
        return Packed("json", safe)
    squeezed = gzip.compress(data.encode(), compresslevel=9, mtime=0)
    return Packed("gzip+base64", base64.b64encode(squeezed).decode("ascii"))


def _source(name: str) -> str:
    path = finders.find(name)
    if not isinstance(path, str):
        raise FileNotFoundError(f"no static file {name}")
    with open(path, encoding="utf-8") as f:
        return f.read()


def _stamp(names: tuple[str, ...]) -> float:
    """When the newest of ``names`` last changed: a cached text is made again after an edit."""
    newest = 0.0
    for name in names:
        path = finders.find(name)
        if isinstance(path, str):
            newest = max(newest, os.stat(path).st_mtime)
    return newest


def script() -> str:
    """The one-file replay's script: offline.js and its imports, bundled, safe inline."""
    return _script(_stamp(modules(ENTRY)))


@lru_cache(maxsize=2)
def _script(stamp: float) -> str:
    return bundle.inline_script(bundle.bundle(ENTRY, _source))


def styles() -> str:
    """The one-file replay's styles, safe inside a <style> element."""
    return _styles(_stamp(STYLES))


@lru_cache(maxsize=2)
def _styles(stamp: float) -> str:
    text = "\n".join(f"/* ---- {name} */\n{_source(name)}" for name in STYLES)
    return text.replace("</", "<\\/")
