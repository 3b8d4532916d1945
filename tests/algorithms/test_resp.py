"""The bare Redis connection the lock clients use: its replies, and how it fails."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest

from algorithms.errors import BackendUnavailable
from algorithms.resp import ReplyError, RespConnection, pack
from lockviz.lab.labs import ServerSet


def test_pack_is_resp2_bulk_strings() -> None:
    expected = b"*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\n7\r\n$2\r\n\r\n\r\n"
    assert pack("SET", "k", 7, b"\r\n") == expected


@pytest.mark.live
def test_every_reply_a_lock_gets(servers: ServerSet) -> None:
    node = servers["redis-1"]
    conn = RespConnection(
        node.host, node.port, timeout_ms=1000, node="redis-1", password=node.password
    )
    assert conn.call(pack("SET", "k", "v", "NX", "PX", 10_000)) == "OK"
    assert conn.call(pack("SET", "k", "v", "NX", "PX", 10_000)) is None  # nil: held
    assert conn.call(pack("GET", "k")) == "v"
    assert conn.call(pack("INCR", "counter")) == 1
    assert conn.call(pack("GET", "missing")) is None
    error = conn.call(pack("EVALSHA", "0" * 40, 0))
    assert isinstance(error, ReplyError) and error.startswith("NOSCRIPT")
    assert conn.call(pack("PING")) == "PONG"  # an error reply leaves the connection usable
    conn.close()


@pytest.mark.live
def test_a_dead_node_is_a_connection_failure(servers: ServerSet) -> None:
    node = servers["redis-1"]
    conn = RespConnection(
        node.host, node.port, timeout_ms=500, node="redis-1", password=node.password
    )
    assert conn.call(pack("PING")) == "PONG"
    node.kill()
    with pytest.raises(BackendUnavailable, match="connection failed"):
        conn.call(pack("PING"))
    with pytest.raises(BackendUnavailable, match="connection failed"):  # a new connection
        conn.call(pack("PING"))


def test_a_reply_split_across_reads_and_a_late_reply_never_answers_the_next_call() -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    host, port = listener.getsockname()[:2]
    served: list[bytes] = []
    gave_up = threading.Event()

    def serve() -> None:
        first, _ = listener.accept()
        served.append(first.recv(100))
        for piece in (b"$5\r\nhe", b"llo\r", b"\n"):  # a bulk string in three pieces
            first.sendall(piece)
            time.sleep(0.02)
        served.append(first.recv(100))
        gave_up.wait(10)  # no reply until the client has given up on this call
        with contextlib.suppress(OSError):  # the client closed this connection
            first.sendall(b":1\r\n")
        second, _ = listener.accept()
        served.append(second.recv(100))
        second.sendall(b"+PONG\r\n")
        first.close()
        second.close()

    server = threading.Thread(target=serve)
    server.start()
    conn = RespConnection(host, port, timeout_ms=1000)
    assert conn.call(pack("GET", "k")) == "hello"
    with pytest.raises(BackendUnavailable, match="no reply before the timeout"):
        conn.call(pack("INCR", "k"))
    gave_up.set()
    assert conn.call(pack("PING")) == "PONG"  # on a new connection, not the late ":1"
    server.join(5)
    listener.close()
    assert served == [pack("GET", "k"), pack("INCR", "k"), pack("PING")]


@pytest.mark.live
def test_a_new_connection_authenticates_in_the_same_write(servers: ServerSet) -> None:
    node = servers["redis-1"]
    good = RespConnection(node.host, node.port, timeout_ms=500, password=node.password)
    assert good.call(pack("PING")) == "PONG"  # AUTH went out with it: one write, two replies
    good.close()
    assert good.call(pack("PING")) == "PONG"  # and again on a new connection
    wrong = RespConnection(node.host, node.port, timeout_ms=500, password="not-it", node="r1")
    with pytest.raises(BackendUnavailable, match="r1: authentication failed"):
        wrong.call(pack("PING"))
    anonymous = RespConnection(node.host, node.port, timeout_ms=500)
    assert str(anonymous.call(pack("PING"))).startswith("NOAUTH")
