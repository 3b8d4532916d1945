"""Plain clients of a deployment, speaking as its pages do: no browser, the same requests.

:class:`Visitor` is one browser's cookies making the requests htmx makes (``HX-Request``, the
CSRF token in ``X-CSRFToken``, and the ``Origin`` a browser sends with every POST). Cookies are
kept per host, not per port, as browsers keep them: a session made on a replica directly is the
same session through the proxy on the same host.

:class:`Viewer` is a run page's live stream (static/lockviz/run/runstream.js) in a thread: connect
with ``?after=<last seq>``, take events in order, ask ``resume`` at a gap, reconnect after a
drop with the same backoff, stop at the run's last event. It records what arrived: the seqs it
took, and any seq that arrived again after it had been taken (doubled).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

import requests
import urllib3
from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Origin

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)  # the test's own certificate

ENDS = ("run_finished", "run_failed")


def said(html: str, limit: int = 160) -> str:
    """What a page or partial says, in one line: tags and runs of blanks dropped."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S | re.I)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)).strip()[:limit]


class Visitor:
    """One browser's session, making htmx's requests to ``base`` (a proxy or a replica)."""

    def __init__(self, base: str, http: requests.Session | None = None) -> None:
        self.base = base
        self.http = http or requests.Session()
        self.http.verify = False

    def via(self, base: str) -> Visitor:
        """The same browser (its cookies) talking to another address on the same host."""
        return Visitor(base, self.http)

    def get(self, path: str) -> requests.Response:
        return self.http.get(self.base + path, timeout=30)

    def post(self, path: str, fields: dict[str, str]) -> requests.Response:
        if "csrftoken" not in self.http.cookies:
            self.get("/")  # every page sets it (the nav's "Teach a class" form)
        headers = {
            "HX-Request": "true",
            "X-CSRFToken": self.http.cookies.get("csrftoken") or "",
            "Origin": self.base,
            "Referer": self.base + "/",
        }
        return self.http.post(
            self.base + path, data=fields, headers=headers, allow_redirects=False, timeout=30
        )

    def start_session(self) -> str:
        """A free-play session (single-node Redis, two clients): its run id, or AssertionError
        saying what the Start button got."""
        fields = {"backend": "redis", "clients": "2", "fencing": "on", "ttl_ms": "2000"}
        return self._started(self.post("/play/", fields), "POST /play/")

    def start_scenario(self, scenario: dict[str, Any]) -> str:
        """A run of ``scenario`` (the import page's "Run it live"): its run id."""
        answer = self.post("/import/run/", {"scenario": json.dumps(scenario)})
        return self._started(answer, "POST /import/run/")

    def _started(self, answer: requests.Response, what: str) -> str:
        target = answer.headers.get("HX-Redirect", "")
        assert target, f"{what} via {self.base}: {answer.status_code} {said(answer.text)!r}"
        return target.rstrip("/").rsplit("/", 1)[1]

    def click(self, run_id: str, **fields: str) -> str:
        """A click on a run: "done", or what refused it."""
        return outcome(self.post(f"/runs/{run_id}/do", fields))

    def finish(self, run_id: str) -> str:
        return outcome(self.post(f"/runs/{run_id}/finish", {}))

    def status(self, run_id: str) -> str:
        """The run's status as any page reads it (``follow.json``, read from the database)."""
        answer = self.get(f"/runs/{run_id}/follow.json")
        if answer.status_code != 200:
            return f"HTTP {answer.status_code}"
        return str(answer.json()["status"])


def outcome(answer: requests.Response) -> str:
    """ "done" when a click or Finish was applied (X-Fault: done), else why not."""
    if answer.status_code == 200 and answer.headers.get("X-Fault") == "done":
        return "done"
    return f"{answer.headers.get('X-Fault') or answer.status_code}: {said(answer.text)}"


@dataclass
class Viewer:
    """One page's live stream of ``run_id`` from ``base`` (http(s)://host:port)."""

    name: str
    base: str
    run_id: str
    taken: list[int] = field(default_factory=list)
    doubled: list[int] = field(default_factory=list)
    connections: int = 0
    drops: list[str] = field(default_factory=list)
    ended: bool = False

    def __post_init__(self) -> None:
        self.thread = threading.Thread(target=self._follow, name=self.name, daemon=True)
        self.deadline = 0.0

    def start(self, timeout_s: float = 90) -> Viewer:
        self.deadline = time.monotonic() + timeout_s
        self.thread.start()
        return self

    def wait(self) -> None:
        self.thread.join(max(0.0, self.deadline - time.monotonic()) + 5)

    @property
    def last(self) -> int:
        return self.taken[-1] if self.taken else 0

    def problems(self, stored: list[int]) -> str:
        """'' when it took exactly the stored events, in order, each once; else what differs."""
        if self.taken == stored and not self.doubled:
            return ""
        lost = sorted(set(stored) - set(self.taken))
        return (
            f"{self.name}: took {len(self.taken)} of {len(stored)} stored events "
            f"(up to seq {self.last}; lost {lost[:12]}{'…' if len(lost) > 12 else ''}), "
            f"doubled {self.doubled[:12]}, ended={self.ended}, {self.connections} connection(s), "
            f"drops: {self.drops[:4]}"
        )

    def _follow(self) -> None:
        retry = 0.25
        url = self.base.replace("http", "ws", 1) + f"/ws/runs/{self.run_id}/"
        while not self.ended and time.monotonic() < self.deadline:
            try:
                with connect(
                    f"{url}?{urllib.parse.urlencode({'after': self.last})}",
                    origin=Origin(self.base), open_timeout=5, ssl=_no_verify(self.base),
                ) as ws:  # fmt: skip
                    self.connections += 1
                    retry = 0.25
                    self._read(ws)
            except (OSError, TimeoutError, WebSocketException) as exc:
                self.drops.append(f"{type(exc).__name__}: {exc}"[:120])
            if not self.ended:
                time.sleep(retry)
                retry = min(retry * 2, 4.0)

    def _read(self, ws: ClientConnection) -> None:
        resumed_from, resumed_at, settled_at = -1, 0.0, 0.0
        while not self.ended:
            left = self.deadline - time.monotonic()
            if left <= 0 or (resumed_from >= 0 and time.monotonic() - resumed_at > 5):
                return  # no answer to a resume within 5 s: reconnect, as the page does
            try:
                message = json.loads(ws.recv(timeout=min(left, 1.0)))
            except TimeoutError:
                message = {"type": "idle"}
            if message["type"] == "status" and message["status"] in ("finished", "failed"):
                settled_at = settled_at or time.monotonic()
            before = self.last
            gap = self._take(message["frames"] if message["type"] == "events" else [message])
            if self.last != before:
                resumed_from = -1
            settled_late = settled_at and time.monotonic() - settled_at > 0.5
            if (gap or settled_late) and resumed_from != self.last:
                resumed_from, resumed_at = self.last, time.monotonic()
                ws.send(json.dumps({"type": "resume", "after": self.last}))

    def _take(self, frames: list[dict[str, Any]]) -> bool:
        """Take the frames' events in order; True at a gap (what follows it is not taken)."""
        for frame in frames:
            if frame.get("type") != "event":
                continue
            seq = int(frame["event"]["seq"])
            if seq <= self.last:
                self.doubled.append(seq)
            elif seq > self.last + 1:
                return True
            else:
                self.taken.append(seq)
                self.ended = frame["event"]["kind"] in ENDS
        return False


def _no_verify(base: str) -> Any:
    if not base.startswith("https"):
        return None
    import ssl

    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
