"""Who dialled: the process at the other end of a loopback connection (lockviz.lab.peers)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from lockviz.lab.peers import socket_inode, who_dialled


def test_the_kernel_names_the_socket_and_its_process() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname()) as mine:
            accepted, peer = server.accept()
            with accepted:
                local = accepted.getsockname()
                assert socket_inode(peer, local) == os.fstat(mine.fileno()).st_ino
                assert who_dialled(peer, local, {os.getpid(): "me", 1: "init"}) == "me"
                assert who_dialled(peer, local, {1: "init"}) is None  # not one of the group


def test_another_process_is_told_apart_and_a_gone_socket_is_not_found() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        host, port = server.getsockname()
        code = f"import socket,sys; s=socket.create_connection(('{host}',{port})); sys.stdin.read()"
        child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)
        try:
            accepted, peer = server.accept()
            with accepted:
                pids = {os.getpid(): "me", child.pid: "child"}
                assert who_dialled(peer, accepted.getsockname(), pids) == "child"
        finally:
            child.communicate(b"")
    assert socket_inode(("127.0.0.1", 1), ("127.0.0.1", 2)) is None
