"""Two kinds of redis-server: a lock node, under a clock of its own that a fault can move and
sweeping expired leases a hundred times a second, and a channel layer's, which carries messages
and idles cheaply (no libfaketime, Redis's default ``hz``): an app's layer idles for as long as
the app lives, and the suite keeps one per test process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lockviz.errors import LabError
from lockviz.lab.servers.redis import LayerServer, RedisServer
from lockviz.live import channel_layer

pytestmark = pytest.mark.live


def faked(server: RedisServer) -> bool:
    """Whether libfaketime is loaded in its process (redis-server writes its title over its
    environment, so its memory map says it)."""
    assert server.proc is not None
    with open(f"/proc/{server.proc.pid}/maps") as f:
        return "libfaketime" in f.read()


@pytest.fixture
def started(tmp_path: Path) -> Iterator[tuple[RedisServer, LayerServer]]:
    node = RedisServer("redis-1", str(tmp_path / "node"))
    layer = LayerServer("layer", str(tmp_path / "layer"))
    try:
        for server in (node, layer):
            server.launch()
        for server in (node, layer):
            server.wait_ready()
        yield node, layer
    finally:
        node.stop()
        layer.stop()


def test_a_lock_node_keeps_its_clock_and_sweeps_often_a_layer_neither(
    started: tuple[RedisServer, LayerServer],
) -> None:
    node, layer = started
    assert node.client().config_get("hz") == {"hz": "100"}
    assert faked(node)
    node.jump_clock(20_000)  # and its wall clock moves: +20 s
    assert node.client().time()[0] - layer.client().time()[0] >= 19

    assert layer.client().config_get("hz") == {"hz": "10"}
    assert not faked(layer)
    with pytest.raises(LabError, match="no clock"):
        layer.jump_clock(1000)


def test_the_apps_own_channel_layer_is_a_layer_server() -> None:
    url = channel_layer.embedded_url()
    server = channel_layer._server
    assert isinstance(server, LayerServer) and f":{server.port}/" in url
    assert not faked(server)
