"""What every backend's lock takes from its client process (lockviz.lab.backends.parts)."""

from __future__ import annotations

from typing import Any

import pytest

from algorithms.clock import SystemClock
from algorithms.lock import LockBase
from lockviz.lab.backends import backend_module
from lockviz.lab.config import ClientConfig


@pytest.mark.parametrize(
    ("backend", "nodes"),
    [
        ("redis", ("redis-1",)),
        ("redlock", ("redis-1", "redis-2", "redis-3")),
        ("etcd", ("etcd-1",)),
    ],
)
def test_the_lock_has_the_clients_name_clock_and_sink(backend: str, nodes: tuple[str, ...]) -> None:
    """These locks connect on first use, so no server is needed; the clock is the one the lab
    may skew, and etcd's lock once ran on the system clock instead."""
    config = ClientConfig(
        name="alice", backend=backend, variant="safe", ttl_ms=2000, fencing=False,
        clients=("alice",), nodes=nodes, servers={node: "127.0.0.1:9" for node in nodes},
        call_timeout_ms=50,
    )  # fmt: skip
    clock, seen = SystemClock(), []

    def sink(kind: str, details: Any) -> None:
        seen.append((kind, details))

    lock = backend_module(backend).make_lock(config, clock, sink)
    assert isinstance(lock, LockBase)
    assert lock.owner == "alice"
    assert lock.clock is clock
    lock._report.emit("note", text="hello")
    assert seen == [("note", {"text": "hello"})]
