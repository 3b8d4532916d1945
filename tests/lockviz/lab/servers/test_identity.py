"""Ports without a race: the lab picks a port, and another process may bind it before the
server does. A server that loses its port starts again on another, and no server is used before
it has proved that what answers on its port is the process the lab started."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from lockviz.lab import ports
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers import etcd, postgres, redis, zookeeper
from lockviz.lab.servers.base import ForeignServer, Server
from lockviz.lab.servers.redis import RedisServer

pytestmark = pytest.mark.live

KINDS = [("redis-1", redis), ("pg-1", postgres), ("etcd-1", etcd), ("zk-1", zookeeper)]


@pytest.fixture
def squatter() -> Iterator[int]:
    """A port another process listens on (and never answers)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", ports.free_port()))
        sock.listen()
        yield sock.getsockname()[1]


def hand_out_first(monkeypatch: pytest.MonkeyPatch, module: ModuleType, port: int) -> None:
    """The next port ``module`` asks for is ``port``: taken between choosing and binding."""
    handed = iter([port])
    monkeypatch.setattr(module, "free_port", lambda: next(handed, None) or ports.free_port())


@pytest.mark.parametrize(("name", "module"), KINDS, ids=[name for name, _ in KINDS])
def test_a_server_whose_port_was_taken_comes_up_on_another(
    name: str, module: ModuleType, squatter: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    hand_out_first(monkeypatch, module, squatter)
    with LocalLab().servers([name]) as servers:
        server = servers[name]
        assert squatter not in server.ports()
        server.check_identity()


def test_a_foreign_redis_on_the_port_is_never_taken_for_ours(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A real Redis sits on the port (someone else's, with a password of its own): it answers
    # our probes, but it is not our child, so the lab starts ours again elsewhere.
    with LocalLab().servers(["redis-2"]) as foreign:
        taken = foreign["redis-2"].port
        hand_out_first(monkeypatch, redis, taken)
        with LocalLab().servers(["redis-1"]) as servers:
            assert servers["redis-1"].port != taken
            assert servers["redis-1"].client().ping() is True


def impostor(server: Server, elsewhere: str) -> Server:
    """The same server as the lab knows it, but whose own process or dir is elsewhere."""
    return dataclasses.replace(server, workdir=elsewhere)  # type: ignore[type-var]


@pytest.mark.parametrize(("name", "module"), KINDS, ids=[name for name, _ in KINDS])
def test_an_identity_check_pointed_at_a_foreign_server_is_refused(
    name: str, module: ModuleType, tmp_path: Path
) -> None:
    with LocalLab().servers([name]) as servers:
        real = servers[name]
        real.check_identity()  # the server itself passes
        if isinstance(real, RedisServer):  # a Redis is known by its pid: another process
            with LocalLab().servers(["redis-2"]) as other:
                stranger = dataclasses.replace(real, proc=other["redis-2"].proc)
                with pytest.raises(ForeignServer, match="not ours"):
                    stranger.check_identity()
        else:  # the others by their data dir
            with pytest.raises(ForeignServer, match="not"):
                impostor(real, f"{tmp_path}/{name}").check_identity()
