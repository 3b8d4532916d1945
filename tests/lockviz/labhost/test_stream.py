"""Run requests on a real Redis (lockviz.labhost.stream, heartbeat): presenters' first, a dead
host's request claimed again, how many wait unread, a host's heartbeat lapsing."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.test import override_settings

from lockviz.lab.servers.redis import RedisServer
from lockviz.labhost import heartbeat, stream
from tests.conftest import layer_env, redis_layer

pytestmark = pytest.mark.live


@pytest.fixture
def layer(tmp_path: Path) -> Iterator[str]:
    server: RedisServer
    with redis_layer(tmp_path) as server:
        yield layer_env(server)["LOCKVIZ_CHANNEL_REDIS"]


def test_a_presenters_request_is_taken_before_those_that_came_earlier(layer: str) -> None:
    client = redis.Redis.from_url(layer)
    stream.prepare(client)
    stream.prepare(client)  # twice: the group exists, no error
    stream.publish(client, "early")
    stream.publish(client, "later")
    stream.publish(client, "presenter", first=True)
    taken = [stream.take(client, "host-a", block_ms=100) for _ in range(4)]
    assert [(t.run_id, t.first) if t else None for t in taken] == [
        ("presenter", True), ("early", False), ("later", False), None,
    ]  # fmt: skip
    assert stream.take(client, "host-a", 100, first_only=True) is None
    assert stream.pending(client) == 3  # taken, not acknowledged
    for request in taken:
        if request is not None:
            stream.ack(client, request)
    assert stream.pending(client) == 0


def test_a_host_with_only_its_presenters_slot_free_waits_on_that_stream(layer: str) -> None:
    """Not a read that comes back at once: the host's loop then asked again at once, for as
    long as its other slots were taken (a whole run), and kept a sixth of a core busy."""
    client = redis.Redis.from_url(layer)
    stream.prepare(client)
    stream.publish(client, "anyone")  # not for a host with the presenter's slot only
    started = time.monotonic()
    assert stream.take(client, "host-a", 300, first_only=True) is None
    assert time.monotonic() - started >= 0.25  # it waited for a presenter's request
    threading.Timer(0.2, stream.publish, (client, "presenter"), {"first": True}).start()
    taken = stream.take(client, "host-a", 30_000, first_only=True)
    assert taken is not None and (taken.run_id, taken.first) == ("presenter", True)


def test_a_request_a_dead_host_took_is_claimed_again_only_after_it_lies_idle(
    layer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(stream, "CLAIM_IDLE_S", 0.5)
    client = redis.Redis.from_url(layer)
    stream.prepare(client)
    stream.publish(client, "orphan")
    taken = stream.take(client, "dead-host", block_ms=100)
    assert taken is not None
    assert stream.reclaim(client, "live-host") == []  # not idle long enough: its host may live
    time.sleep(0.7)
    (claimed,) = stream.reclaim(client, "live-host")
    assert (claimed.run_id, claimed.entry) == ("orphan", taken.entry)
    assert stream.reclaim(client, "other-host") == []  # now the live host's, and fresh
    stream.ack(client, claimed)
    assert stream.pending(client) == 0


def test_requests_waiting_are_those_no_host_has_read_yet(layer: str) -> None:
    client = redis.Redis.from_url(layer)
    stream.prepare(client)
    assert stream.waiting(client) == 0
    for run in ("a", "b", "c"):
        stream.publish(client, run)
    stream.publish(client, "presenter's", first=True)
    assert stream.waiting(client) == 4
    taken = stream.take(client, "host-1", block_ms=100)  # the presenter's, read: not waiting
    assert taken is not None and taken.first
    assert stream.waiting(client) == 3
    stream.take(client, "host-2", block_ms=100)
    stream.ack(client, taken)  # read counts, acknowledged or not
    assert stream.waiting(client) == 2


def test_a_host_whose_heartbeat_lapses_is_gone_and_one_that_stops_is_not(layer: str) -> None:
    with override_settings(LOCKVIZ_CHANNEL_REDIS=layer):
        client = heartbeat.client()
        heartbeat.beat(client, heartbeat.Slots("m1:1:1", limit=4, running=1, free=3))
        heartbeat.beat(client, heartbeat.Slots("m2:2:2", limit=2, running=2, free=0))
        assert 0 < client.ttl(heartbeat.key("m1:1:1")) <= heartbeat.TTL_S
        assert {h.host: h.free for h in heartbeat.hosts()} == {"m1:1:1": 3, "m2:2:2": 0}
        assert heartbeat.gone(["m1:1:1", "m2:2:2", "web:3:3"]) == set()
        client.delete(heartbeat.key("m1:1:1"))  # what its TTL does once it stops beating
        assert heartbeat.gone(["m1:1:1", "m2:2:2", "web:3:3"]) == {"m1:1:1"}
        assert heartbeat.lab_host("m1:1:1") and not heartbeat.lab_host("web:3:3")
        heartbeat.stop(client, "m2:2:2")  # drained: not gone, just not a host any more
        assert heartbeat.gone(["m2:2:2"]) == set()
        assert [h.host for h in heartbeat.hosts()] == []
