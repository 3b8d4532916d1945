"""The channel layer: Redis pub/sub, on a redis-server of the app's own unless one is shared.

Live events reach viewers through channels_redis' ``RedisPubSubChannelLayer``: one PUBLISH per
event whatever the audience (~0.4 ms), no per-viewer capacity, so no silently dropped message,
and several app processes on one Redis all deliver every run's events to their own viewers.

Embedded by default: with ``LOCKVIZ_CHANNEL_REDIS`` unset, the first use in a process starts a
redis-server child through the lab (``lockviz.lab.servers.redis``) on a free loopback port. It
dies with the app, even a killed one (``lockviz.lab.procs``), and nothing else need be
installed or started. With ``LOCKVIZ_CHANNEL_REDIS=redis://host:port/0`` every app process uses
that Redis instead: how several processes share one class's live streams.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from channels_redis.pubsub import RedisPubSubChannelLayer

from lockviz.lab import procs, registry
from lockviz.lab.servers.redis import LayerServer

WORKDIR_PREFIX = "lockviz-layer-"
_server: LayerServer | None = None
_start_lock = threading.Lock()


class RunLayer(RedisPubSubChannelLayer):  # type: ignore[misc]
    """Redis pub/sub on the given hosts, or on the app's own redis-server when given none."""

    def __init__(self, hosts: list[str] | None = None, **kwargs: object) -> None:
        super().__init__(hosts=hosts or [embedded_url()], **kwargs)

    async def group_send_all(self, sends: Sequence[tuple[str, Mapping[str, object]]]) -> None:
        """``group_send`` of each ``(group, message)`` in order, in one round trip per shard.

        What a run publishes in a burst (a release is five events within a few milliseconds)
        would otherwise wait in line for one round trip each. The PUBLISHes go in one pipeline
        on the connection ``group_send`` itself uses, under its lock, so they reach Redis, and
        every subscriber, in the order given (a group always hashes to the same shard).
        channels_redis has no call for this: it reads the loop layer's shards (pinned below 5,
        and tests/lockviz/live/test_broadcast.py proves the messages still arrive, in order).
        """
        layer: Any = self._get_layer()
        by_shard: dict[int, tuple[Any, list[tuple[str, bytes]]]] = {}
        for group, message in sends:
            channel = layer._get_group_channel_name(group)
            shard = layer._get_shard(channel)
            by_shard.setdefault(id(shard), (shard, []))[1].append(
                (channel, self.serialize(dict(message)))
            )
        for shard, publishes in by_shard.values():
            async with shard._lock:
                shard._ensure_redis()
                async with shard._redis.pipeline(transaction=False) as pipe:
                    for channel, data in publishes:
                        pipe.publish(channel, data)
                    await pipe.execute()


def embedded_url() -> str:
    """The app's own redis-server for the layer, started on first call."""
    global _server
    with _start_lock:
        if _server is None:
            _sweep()
            workdir = registry.new_run_dir(prefix=f"{WORKDIR_PREFIX}{os.getpid()}-")
            server = LayerServer("channel-layer", workdir)
            server.launch()
            atexit.register(_stop, server)
            server.wait_ready()
            _server = server
        # The layer's redis-server has a password of its own, like every server the lab starts.
        password = quote(_server.password or "", safe="")
        return f"redis://:{password}@{_server.host}:{_server.port}/0"


def _stop(server: LayerServer) -> None:
    server.stop()
    shutil.rmtree(server.workdir, ignore_errors=True)


def _sweep() -> None:
    """Remove the directories of killed apps' layers (their redis-server died with them)."""
    for path in glob.glob(os.path.join(registry.base_dir(), f"{WORKDIR_PREFIX}*")):
        pid = os.path.basename(path)[len(WORKDIR_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not procs.alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)
