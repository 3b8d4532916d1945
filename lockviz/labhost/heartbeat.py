"""Each lab host's heartbeat: a key with a time to live, and what the host has room for.

Every :data:`BEAT_S` a host sets ``lockviz:labhost:<identity>`` to its slots (how many runs it
may play at once now, how many it plays, how many more it would take; whether it drains), to
expire after :data:`TTL_S`, and notes the time in the hash of every host that has beaten
(:data:`KNOWN`). A host whose key has expired and which is known has *stopped answering*
(kill -9, a machine gone, a frozen process): lockviz.runs.recovery marks its runs interrupted
with :data:`GONE`. Web processes read the keys to admit runs (free slots across hosts) and to
show the lab-slots metric.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass

import redis
from django.conf import settings

log = logging.getLogger(__name__)

BEAT_S = 1.0
TTL_S = 5  # a host silent this long has stopped answering
KNOWN = "lockviz:labhosts"  # hash: identity -> last beat (unix s)
FORGET_S = 3600.0  # a host not heard of for this long is forgotten
GONE = "the lab host stopped answering"


@dataclass(frozen=True)
class Slots:
    """What one host says of itself at each beat."""

    host: str
    limit: int  # runs it may play at once now (adaptive: lockviz.lab.capacity)
    running: int  # runs it plays or starts
    free: int  # requests it would take now
    draining: bool = False


def key(host: str) -> str:
    return f"lockviz:labhost:{host}"


_clients: dict[tuple[str, float], redis.Redis] = {}


def client(timeout_s: float = 2.0) -> redis.Redis:
    """A client of LOCKVIZ_CHANNEL_REDIS (one connection pool per timeout, kept: the keeper
    and pages ask every few seconds)."""
    key = (settings.LOCKVIZ_CHANNEL_REDIS, timeout_s)
    found = _clients.get(key)
    if found is None:
        found = _clients[key] = redis.Redis.from_url(
            key[0], socket_timeout=timeout_s, socket_connect_timeout=2
        )
    return found


def beat(to: redis.Redis, slots: Slots) -> None:
    with to.pipeline() as pipe:
        pipe.set(key(slots.host), json.dumps(asdict(slots)), ex=TTL_S)
        pipe.hset(KNOWN, slots.host, str(time.time()))
        pipe.execute()


def stop(to: redis.Redis, host: str) -> None:
    """A host that ends cleanly (drained, Ctrl-C): no heartbeat, and not known any more."""
    with to.pipeline() as pipe:
        pipe.delete(key(host))
        pipe.hdel(KNOWN, host)
        pipe.execute()


def gone(hosts: list[str]) -> set[str]:
    """Which of ``hosts`` are lab hosts that stopped answering (empty when Redis is away: the
    database's ``alive_at`` still tells)."""
    if not hosts or not settings.LOCKVIZ_CHANNEL_REDIS:
        return set()
    try:
        with client().pipeline() as pipe:
            for host in hosts:
                pipe.hexists(KNOWN, host)
                pipe.exists(key(host))
            answers = pipe.execute()
    except redis.RedisError as exc:
        log.warning("could not read the lab hosts' heartbeats: %s", exc)
        return set()
    return {
        host
        for host, known, alive in zip(hosts, answers[::2], answers[1::2], strict=True)
        if known and not alive
    }


def hosts() -> list[Slots]:
    """Every lab host answering now (empty when Redis is away)."""
    if not settings.LOCKVIZ_CHANNEL_REDIS:
        return []
    try:
        to = client()
        known = {_text(h): float(t) for h, t in to.hgetall(KNOWN).items()}
        old = [h for h, t in known.items() if t < time.time() - FORGET_S]
        if old:
            to.hdel(KNOWN, *old)
        names = sorted(set(known) - set(old))
        found = to.mget([key(h) for h in names]) if names else []
    except redis.RedisError as exc:
        log.warning("could not read the lab hosts' heartbeats: %s", exc)
        return []
    return [Slots(**json.loads(raw)) for raw in found if raw]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def lab_host(host: str) -> bool:
    """Whether ``host`` (a process identity) is a lab host that has beaten lately."""
    if not host or not settings.LOCKVIZ_CHANNEL_REDIS:
        return False
    try:
        return bool(client().hexists(KNOWN, host))
    except redis.RedisError:
        return False
