"""One student's browser, as the benchmarks play it over HTTP: a session of its own (its
cookies kept from answer to answer), the CSRF token the page gave, and the forms that start a
run. Its :attr:`Browser.cookie` opens the run's WebSocket as that same browser
(:mod:`bench.viewer`)."""

from __future__ import annotations

import copy
import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer to read (it names the new run), not a page to follow."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class Browser:
    """A session on the app at ``url``, made by opening its index page."""

    def __init__(self, url: str, timeout_s: float = 60) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect
        )
        self.opener.open(url + "/", timeout=timeout_s).read()
        self.csrf = next(c.value or "" for c in self.jar if c.name == "csrftoken")

    @property
    def cookie(self) -> str:
        """Its cookies as a ``Cookie:`` header carries them."""
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)

    def post(self, path: str, form: dict[str, str]) -> tuple[str | None, str]:
        """POST ``form`` as the page's form does: (the run id it redirected to, "") or (None,
        why not: the status the app refused with)."""
        request = urllib.request.Request(
            self.url + path,
            urllib.parse.urlencode({**form, "csrfmiddlewaretoken": self.csrf}).encode(),
            headers={"Referer": self.url + "/"},
        )
        try:
            self.opener.open(request, timeout=self.timeout_s).read()
        except urllib.error.HTTPError as exc:
            location = exc.headers.get("Location", "")
            if exc.code == 302 and (match := re.search(r"/(?:runs|play)/(\w+)/", location)):
                return match.group(1), ""
            return None, f"HTTP {exc.code}"
        return None, "no redirect"

    def start(self, slug: str, **form: str) -> tuple[str | None, str]:
        """Press a built-in's Run button on the index page (``form``: its fencing, its lease)."""
        return self.post("/runs/", {"scenario": slug, **form})

    def run_scenario(self, data: dict[str, Any]) -> tuple[str | None, str]:
        """Run a scenario of one's own, as the import page's "Run it" does."""
        return self.post("/import/run/", {"scenario": json.dumps(data)})

    def at(self, url: str) -> Browser:
        """The same browser (its cookies) on another address of the same host."""
        other = copy.copy(self)
        other.url = url
        return other

    def play(self) -> tuple[str | None, str]:
        """Start a free-play session (single-node Redis, alice and bob)."""
        return self.post("/play/", {"backend": "redis", "clients": "2", "ttl_ms": "2000",
                                    "fencing": "on"})  # fmt: skip

    def click(self, run_id: str, action: str = "do", **fields: str) -> str:
        """A click (``action`` "do") or Finish ("finish") on a live run, as htmx sends it:
        "done" when applied, else the X-Fault header (refused, not live) or the status."""
        request = urllib.request.Request(
            f"{self.url}/runs/{run_id}/{action}",
            urllib.parse.urlencode(fields).encode(),
            headers={"Referer": self.url + "/", "Origin": self.url, "HX-Request": "true",
                     "X-CSRFToken": self.csrf},
        )  # fmt: skip
        try:
            with self.opener.open(request, timeout=self.timeout_s) as answer:
                return str(answer.headers.get("X-Fault") or answer.status)
        except urllib.error.HTTPError as exc:
            return str(exc.headers.get("X-Fault") or exc.code)
