"""Run requests: a Redis Stream read by a consumer group of lab hosts.

A request is ``{"run": <id>}`` added (``XADD``) to :data:`RUNS`, or to :data:`FIRST` for a
room presenter's run, which every host reads before :data:`RUNS`. Each host reads with
``XREADGROUP`` as a consumer of :data:`GROUP` named by its identity, one request at a time and
only when it has a free slot, so a request waits in the stream (not on a busy host) until some
host has room. The host acknowledges (``XACK``) once the run is marked started in the database
(lockviz.runs.host.LabHost.take), or found already started, ended or gone.

A host that dies between reading and acknowledging leaves the request pending under its name:
any host claims it again (``XAUTOCLAIM``) once it has been pending :data:`CLAIM_IDLE_S`. The
database, not the stream, says whether a run started (a conditional UPDATE only one host can
make), so a request delivered twice is run at most once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis

RUNS = "lockviz:runs"
FIRST = "lockviz:runs:first"  # a presenter's runs: read first
GROUP = "labhosts"
CLAIM_IDLE_S = 5.0  # a request read and not acknowledged this long: its host died
MAX_LENGTH = 10_000  # requests kept in a stream (acknowledged ones are history only)


@dataclass(frozen=True)
class Request:
    """One run request as a host read it."""

    stream: str
    entry: str  # the stream entry's id, to acknowledge
    run_id: str
    first: bool


def publish(client: redis.Redis, run_id: str, first: bool = False) -> None:
    """Ask the lab hosts to run ``run_id`` (already recorded as queued)."""
    client.xadd(
        FIRST if first else RUNS, {"run": json.dumps(run_id)}, maxlen=MAX_LENGTH, approximate=True
    )


def prepare(client: redis.Redis) -> None:
    """The consumer group on both streams (made once; the streams too)."""
    for stream in (FIRST, RUNS):
        try:
            client.xgroup_create(stream, GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise


def take(
    client: redis.Redis, consumer: str, block_ms: int, first_only: bool = False
) -> Request | None:
    """The next request for ``consumer``: a presenter's first, else (unless ``first_only``)
    any, waiting at most ``block_ms`` for one; None when there is none.

    ``first_only`` (a host with only its presenter's slot free, which it may keep for the whole
    of a run) waits on the presenter's stream: a read that came back at once had the host's loop
    asking Redis again and again, ~15% of a core in the lab host and as much in Redis (measured)."""
    if first_only:
        return _read(client, consumer, FIRST, block_ms)
    got = _read(client, consumer, FIRST, None)
    if got is None:
        got = _read(client, consumer, RUNS, block_ms)
    return got


def reclaim(client: redis.Redis, consumer: str, first_only: bool = False) -> list[Request]:
    """A request a dead host read and never acknowledged, now ``consumer``'s: a presenter's
    first, else (unless ``first_only``) any; at most one (a host claims what it has room for)."""
    for stream in (FIRST,) if first_only else (FIRST, RUNS):
        answer: Any = client.xautoclaim(
            stream, GROUP, consumer, min_idle_time=int(CLAIM_IDLE_S * 1000), count=1
        )
        found = [_request(stream, entry, fields) for entry, fields in answer[1] if fields]
        if found:
            return found
    return []


def ack(client: redis.Redis, request: Request) -> None:
    client.xack(request.stream, GROUP, request.entry)


def pending(client: redis.Redis) -> int:
    """Requests read by some host and not acknowledged yet."""
    return sum(int(client.xpending(stream, GROUP)["pending"]) for stream in (FIRST, RUNS))


def waiting(client: redis.Redis) -> int:
    """Requests in the streams that no host has read yet (the group's lag): the runs waiting
    for a free slot on some host (each host reads only when it has one)."""
    total = 0
    for stream in (FIRST, RUNS):
        for group in client.xinfo_groups(stream):
            if _text(group["name"]) != GROUP:
                continue
            lag = group.get("lag")
            if lag is None:  # Redis < 7, or entries deleted mid-stream: whether any waits
                last: Any = client.xinfo_stream(stream)["last-generated-id"]
                lag = int(_text(last) != _text(group["last-delivered-id"]))
            total += int(lag)
    return total


def _read(client: redis.Redis, consumer: str, stream: str, block_ms: int | None) -> Request | None:
    answer: Any = client.xreadgroup(GROUP, consumer, {stream: ">"}, count=1, block=block_ms)
    for _name, entries in answer or []:
        for entry, fields in entries:
            return _request(stream, entry, fields)
    return None


def _request(stream: str, entry: bytes | str, fields: Mapping[bytes | str, bytes | str]) -> Request:
    run_id = json.loads(fields.get(b"run") or fields.get("run") or b'""')
    return Request(stream, _text(entry), str(run_id), stream == FIRST)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
