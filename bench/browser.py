"""One student's browser, as the benchmarks play it over HTTP: a session of its own (its
cookies kept from answer to answer), the CSRF token the page gave, and the forms that start a
run. Its :attr:`Browser.cookie` opens the run's WebSocket as that same browser
(:mod:`bench.viewer`)."""

from __future__ import annotations

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
            if exc.code == 302 and (match := re.search(r"/runs/(\w+)/", location)):
                return match.group(1), ""
            return None, f"HTTP {exc.code}"
        return None, "no redirect"

    def start(self, slug: str, **form: str) -> tuple[str | None, str]:
        """Press a built-in's Run button on the index page (``form``: its fencing, its lease)."""
        return self.post("/runs/", {"scenario": slug, **form})

    def run_scenario(self, data: dict[str, Any]) -> tuple[str | None, str]:
        """Run a scenario of one's own, as the import page's "Run it" does."""
        return self.post("/import/run/", {"scenario": json.dumps(data)})
