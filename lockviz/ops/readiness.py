"""Is this app process fit to take requests? Three checks, each a sentence when it fails.

``/healthz`` answers as long as the process does; ``/readyz`` asks what a request may need:

* **database** — ``SELECT 1`` on the app's own connection: every page reads runs from it;
* **channel layer** — a ``PING`` to the layer's Redis (``settings.CHANNEL_LAYERS``, or the
  app's own redis-server: :func:`lockviz.live.channel_layer.embedded_url`): without it no
  viewer sees a live event;
* **lab** — for a local lab, the machine has what a run's servers need (redis-server and
  libfaketime: :func:`lockviz.lab.servers.missing`) and the fork server that makes the clients
  runs. A fork server found dead is started again, as the next run would: the check then says
  whether a run *could* start, and a killed fork server does not keep a replica out of rotation
  until someone starts a run on it. With ``LOCKVIZ_SERVERS`` the servers are someone else's,
  started by compose and checked by its own healthchecks: not checked here. A web process
  that leaves runs to lab hosts (``LOCKVIZ_LAB_HOSTS=remote``, or ``serve``'s own lab host)
  starts no lab: it says how many lab hosts answer and their free slots, and is ready without
  any (runs wait in the stream until a host takes them: pages still serve).

A check returns what it found or raises; :func:`run_checks` turns whatever it raised into a
failed :class:`Check` naming the error, so a probe reads plain text, never a traceback. A
service that is down fails its check within about a second (connection refused, or a Redis
that does not answer within :data:`REDIS_TIMEOUT_S`).

``/readyz`` is public (a load balancer asks it), so what it costs is bounded: the checks run at
most once per :data:`FRESH_S` in a process, whoever asks and however often (:func:`checks`:
one caller runs them, the others read its answer), and the PING goes over one pooled
connection per Redis, opened once (:func:`_redis`), not a connection per call.
"""

from __future__ import annotations

import functools
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast
from urllib.parse import urlsplit

import redis
from django.conf import settings
from django.db import connection

from lockviz.catalogue import REDIS
from lockviz.lab import forkserver
from lockviz.lab.errors import LabError
from lockviz.lab.servers import install_hint, missing
from lockviz.lab.servers.redis import REDIS_BINARY
from lockviz.labhost import heartbeat
from lockviz.live import channel_layer
from lockviz.runs import labhosts

REDIS_TIMEOUT_S = 1.0


@dataclass(frozen=True)
class Check:
    """One check's outcome: ``what`` was checked, whether it is ``ok``, and ``why`` in words."""

    what: str
    ok: bool
    why: str

    @property
    def line(self) -> str:
        return f"{self.what}: {'ok' if self.ok else 'FAILED'}: {self.why}"


def database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return f"SELECT 1 answered ({connection.vendor})"


def channel_layer_redis() -> str:
    urls = layer_urls()
    for url in urls:
        _redis(url).ping()
    return f"the Redis at {', '.join(_where(url) for url in urls)} answered PING"


@functools.cache
def _redis(url: str) -> redis.Redis:
    """One client per Redis for this process, over a pool of one connection."""
    pool = redis.BlockingConnectionPool.from_url(
        url, max_connections=1, timeout=REDIS_TIMEOUT_S, socket_timeout=REDIS_TIMEOUT_S,
        socket_connect_timeout=REDIS_TIMEOUT_S,
    )  # fmt: skip
    return redis.Redis(connection_pool=pool)


def lab() -> str:
    if labhosts.remote():
        hosts = heartbeat.hosts()
        if not hosts:
            return "no lab host answers now: runs wait in the queue until one does"
        return f"{len(hosts)} lab host(s) answer, {sum(h.free for h in hosts)} free slot(s)"
    if settings.LOCKVIZ_SERVERS:
        return "servers from LOCKVIZ_SERVERS, not started here: their own healthchecks say"
    absent = missing(REDIS)
    if absent:
        raise LabError(install_hint(absent))
    found = f"redis-server at {shutil.which(REDIS_BINARY)}"
    if not forkserver.warm():
        return f"{found}; clients start cold (no pidfds on this kernel)"
    server = forkserver.server()
    server.start()  # at once when it runs; started again when it died
    pid = server.proc.pid if server.proc is not None else "?"
    return f"{found}; the fork server runs (pid {pid})"


CHECKS: dict[str, Callable[[], str]] = {
    "database": database,
    "channel layer": channel_layer_redis,
    "lab": lab,
}


FRESH_S = 1.0  # an answer of the checks is given again for this long
_last: tuple[float, list[Check]] | None = None
_running = threading.Lock()


def checks() -> list[Check]:
    """The checks' answer, at most :data:`FRESH_S` old: run by one caller at a time."""
    global _last
    with _running:
        if _last is None or time.monotonic() - _last[0] >= FRESH_S:
            _last = (time.monotonic(), run_checks())
        return _last[1]


def run_checks() -> list[Check]:
    """Every check, in order: what it found, or the error that failed it as its reason."""
    results = []
    for what, check in CHECKS.items():
        try:
            results.append(Check(what, True, check()))
        except Exception as exc:  # any failure is an answer here: the probe must get words
            results.append(Check(what, False, _plain(exc)))
    return results


def layer_urls() -> list[str]:
    """The Redis URLs the channel layer uses: its configured hosts, or the app's own server."""
    config = cast(dict[str, Any], settings.CHANNEL_LAYERS["default"]["CONFIG"])
    hosts = config.get("hosts")
    return [_url(host) for host in hosts] if hosts else [channel_layer.embedded_url()]


def _url(host: object) -> str:
    """A channels_redis host entry (a URL, or a dict with an ``address``) as a URL."""
    if isinstance(host, dict):
        return str(host.get("address", ""))
    return str(host)


def _where(url: str) -> str:
    """``redis://:secret@host:port/0`` as ``host:port``: never a password in a probe's answer."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or 6379}"


def _plain(exc: BaseException) -> str:
    """An error as one line: its kind and its message (first line, bounded)."""
    text = " ".join(str(exc).split())[:300] or "no message"
    return f"{type(exc).__name__}: {text}"
