"""The network between clients and servers: one proxy link per pair, faults done on the wire."""

from __future__ import annotations

import os
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from lockviz.lab.errors import LabError
from lockviz.lab.links import Links, Mesh
from lockviz.lab.ports import split_address


class Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(4096):
            self.request.sendall(data)


@pytest.fixture
def links() -> Iterator[Links]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    proxy = Links(["alice", "bob"], {"echo": f"{host}:{port}"})
    proxy.start()
    yield proxy
    proxy.stop()
    server.shutdown()
    server.server_close()


def connect(links: Links, client: str) -> socket.socket:
    sock = socket.create_connection(split_address(links.addresses_for(client)["echo"]), timeout=2)
    sock.settimeout(1.0)
    return sock


def round_trip(sock: socket.socket, data: bytes = b"ping") -> bytes:
    sock.sendall(data)
    return sock.recv(4096)


def test_each_client_has_its_own_link_to_each_server(links: Links) -> None:
    alice, bob = links.addresses_for("alice"), links.addresses_for("bob")
    assert set(alice) == set(bob) == {"echo"} and alice["echo"] != bob["echo"]
    with connect(links, "alice") as sock:
        assert round_trip(sock) == b"ping"


def test_a_blackhole_holds_bytes_until_healed_and_only_on_that_link(links: Links) -> None:
    alice, bob = connect(links, "alice"), connect(links, "bob")
    links.set("alice", "echo", "blackhole")
    assert links.faulty() == [("alice", "echo")]
    alice.sendall(b"held")
    with pytest.raises(TimeoutError):
        alice.recv(4096)  # silence, not an error: the client's own timeout decides
    assert round_trip(bob) == b"ping"  # bob's link is untouched
    links.set("alice", "echo", "pass")
    assert alice.recv(4096) == b"held"  # delivered in order when the partition ends
    assert links.faulty() == []
    alice.close()
    bob.close()


def refused(links: Links, client: str, sock: socket.socket | None = None) -> bool:
    """Whether a round trip on ``sock`` (or a new connection) is cut short: reset, not echoed."""
    try:
        sock = sock or connect(links, client)
        for _ in range(3):  # the RST may come with the first or the next write
            if round_trip(sock) != b"ping":
                return True  # closed by the peer
    except (ConnectionResetError, BrokenPipeError):
        return True
    return False


def test_a_reset_link_resets_open_and_new_connections(links: Links) -> None:
    sock = connect(links, "alice")
    links.set("alice", "echo", "reset")
    assert refused(links, "alice", sock)
    assert refused(links, "alice")
    assert not refused(links, "bob")


def test_a_delayed_link_is_slower_by_at_least_the_delay(links: Links) -> None:
    with connect(links, "alice") as sock:
        links.set("alice", "echo", "delay", ms=150)
        started = time.monotonic()
        assert round_trip(sock) == b"ping"
        assert time.monotonic() - started >= 0.3  # both directions are delayed


def test_an_unknown_link_is_refused_with_its_name(links: Links) -> None:
    with pytest.raises(LabError, match="no link between carol and echo"):
        links.set("carol", "echo", "blackhole")


def test_a_patient_link_waits_for_a_server_that_is_about_to_listen() -> None:
    """A ZooKeeper follower may connect to the new leader's quorum port a moment before the
    leader opens it: a real network refuses and ZooKeeper tries again, so the proxy must not turn
    the refusal into a reset on that link (it did, and a failover took 10 s); other links still
    reset at once, as a refusal."""
    from lockviz.lab.ports import free_port

    port = free_port()
    targets = {"zk-2:peer": f"127.0.0.1:{port}", "zk-2:election": f"127.0.0.1:{port}"}
    proxy = Links(["zk-1"], targets, patient=["zk-2:peer"])
    proxy.start()
    server = None
    try:
        addresses = proxy.addresses_for("zk-1")
        # Nobody listens: reset at once (at the connect itself when the reset comes first).
        eager = split_address(addresses["zk-2:election"])
        with pytest.raises(ConnectionResetError), socket.create_connection(eager, 2) as sock:
            sock.settimeout(2)
            sock.recv(1)
        patient = socket.create_connection(split_address(addresses["zk-2:peer"]), timeout=2)
        patient.settimeout(5)
        time.sleep(0.1)  # the leader opens its quorum port a moment later
        server = socketserver.ThreadingTCPServer(("127.0.0.1", port), Echo)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        assert round_trip(patient) == b"ping"  # the connection waited, and now carries bytes
        patient.close()
    finally:
        proxy.stop()
        if server is not None:
            server.shutdown()
            server.server_close()


@pytest.fixture
def mesh() -> Iterator[Mesh]:
    """A group of two echo servers, ``a`` and ``b``, each dialled through its front; the test's
    own process is server ``a`` (it dials ``b``), as a Redis replica dials its primary."""
    servers = []
    for _ in range(2):
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Echo)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    addresses = {
        name: f"127.0.0.1:{s.server_address[1]}" for name, s in zip("ab", servers, strict=True)
    }
    group = Mesh(addresses)
    group.start()
    group.owner("a", os.getpid())
    yield group
    group.stop()
    for server in servers:
        server.shutdown()
        server.server_close()


def dial(group: Mesh, node: str) -> socket.socket:
    sock = socket.create_connection(split_address(group.front(node)), timeout=2)
    sock.settimeout(1.0)
    return sock


def test_a_front_tells_who_dialled_and_carries_it_on_that_pairs_link(mesh: Mesh) -> None:
    assert set(mesh.fronts) == {"a", "b"} and mesh.front("a") != mesh.front("b")
    with dial(mesh, "b") as sock:
        assert round_trip(sock) == b"ping"  # a>b
        mesh.set("a", "b", "blackhole")
        assert mesh.faulty() == [("a", "b")]
        sock.sendall(b"held")
        with pytest.raises(TimeoutError):
            sock.recv(4096)
        mesh.set("a", "b", "pass")
        assert sock.recv(4096) == b"held"


def test_a_cut_of_one_pair_leaves_the_other_direction_alone(mesh: Mesh) -> None:
    mesh.set("b", "a", "reset")  # b's connections to a: not what a dials
    with dial(mesh, "b") as sock:
        assert round_trip(sock) == b"ping"


def test_a_front_resets_a_process_it_does_not_know(mesh: Mesh) -> None:
    mesh.owner("a", 1)  # the group's "a" is another process now (a restart): not this one
    with pytest.raises((ConnectionResetError, TimeoutError)), dial(mesh, "b") as sock:
        assert round_trip(sock) != b"ping"
