"""The storage service: the resource asks the lock service before it applies a write."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from algorithms.errors import BackendUnavailable
from algorithms.events import Reporter
from algorithms.fenced_storage import FencedStorage
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from algorithms.resp import RespConnection
from algorithms.sequencer import RedisCheck, Sequencer
from algorithms.storage_service import ServiceStorage, StorageService
from lockviz.lab.labs import ServerSet

pytestmark = pytest.mark.live

Events = list[tuple[str, dict[str, Any]]]


class Setup:
    def __init__(self, servers: ServerSet, lock_port: int | None = None) -> None:
        lock, store = servers["redis-1"], servers["storage"]
        self.checks: Events = []
        check = RedisCheck(
            RespConnection(lock.host, lock_port or lock.port, timeout_ms=300,
                           password=lock.password),
            "t:lock", node="redis-1",
            report=Reporter(lambda k, d: self.checks.append((k, d))),
        )  # fmt: skip
        storage = FencedStorage(
            connect(store.host, store.port, password=store.password), "t:res", kind="plain"
        )
        self.service = StorageService(storage, check, "t:lock")
        self.port = self.service.serve()
        self.lock_client = connect(lock.host, lock.port, password=lock.password)

    def client(self, name: str) -> tuple[ServiceStorage, Events]:
        events: Events = []
        return ServiceStorage(
            "127.0.0.1", self.port, writer=name, on_event=lambda k, d: events.append((k, d))
        ), events

    def lock(self, owner: str) -> RedisLock:
        return RedisLock(self.lock_client, "t:lock", owner=owner, ttl_ms=5000)


@pytest.fixture
def setup(servers: ServerSet) -> Iterator[Setup]:
    made = Setup(servers)
    yield made
    made.service.close()


def test_a_current_holder_writes_and_a_holder_whose_lock_is_gone_is_refused(setup: Setup) -> None:
    alice, bob = setup.lock("alice"), setup.lock("bob")
    storage, events = setup.client("alice")
    alice.acquire()
    sequencer = alice.sequencer()
    assert storage.write("A", 1, read=0, sequencer=sequencer).accepted
    alice.release()
    bob.acquire()
    refused = storage.write("A2", 1, read=1, sequencer=sequencer)
    assert not refused.accepted and "another client's value" in refused.reason
    assert refused.found is None  # refused before it reached the storage
    assert storage.read_versioned().value == "A"
    checks = [d["current"] for k, d in setup.checks if k == "reply"]
    assert checks == [True, False]  # one question to the lock service per write
    said = [(k, d["op"]) for k, d in events]
    assert said.count(("request", "write")) == 2 and said[-1] == ("reply", "read")


def test_a_write_without_a_sequencer_or_for_another_lock_is_refused_unasked(setup: Setup) -> None:
    storage, _ = setup.client("mallory")
    assert "never granted" in storage.write("M", 0).reason
    other = Sequencer("redis", "another:lock", "x", "mallory")
    assert "names another lock" in storage.write("M", 0, sequencer=other).reason
    assert setup.checks == []  # the lock service was never bothered


def test_a_repeated_key_is_answered_before_any_check(setup: Setup) -> None:
    alice = setup.lock("alice")
    storage, _ = setup.client("alice")
    alice.acquire()
    sequencer = alice.sequencer()
    assert storage.write("A", 1, key="k", sequencer=sequencer).accepted
    alice.release()  # the lock is gone, but the first write with k was applied
    again = storage.write("A", 1, key="k", sequencer=sequencer)
    assert again.accepted and again.duplicate
    assert len([1 for k, _ in setup.checks if k == "request"]) == 1


def test_a_lock_service_that_does_not_answer_refuses_the_write(servers: ServerSet) -> None:
    from lockviz.lab.ports import free_port

    setup = Setup(servers, lock_port=free_port())  # nothing listens there
    try:
        storage, _ = setup.client("alice")
        sequencer = Sequencer("redis", "t:lock", "alice:1", "alice", 1)
        refused = storage.write("A", 1, sequencer=sequencer)
        assert not refused.accepted and "did not answer" in refused.reason
        assert [d.get("error") is not None for k, d in setup.checks if k == "reply"] == [True]
    finally:
        setup.service.close()


def test_a_service_that_is_gone_is_a_failed_write_for_the_client(setup: Setup) -> None:
    storage, events = setup.client("alice")
    setup.service.close()
    with pytest.raises(BackendUnavailable):
        storage.write("A", 0)
    assert events[-1][0] == "reply" and events[-1][1]["ok"] is False


def test_the_service_is_as_private_as_the_storage_behind_it(servers: ServerSet) -> None:
    setup = Setup(servers)
    setup.service.password = "s3cret"
    try:
        stranger = ServiceStorage("127.0.0.1", setup.port, writer="eve")
        with pytest.raises(BackendUnavailable, match="closed by the service"):
            stranger.read_versioned()
        wrong = ServiceStorage("127.0.0.1", setup.port, writer="eve", password="guess")
        with pytest.raises(BackendUnavailable):
            wrong.read_versioned()
        client = ServiceStorage("127.0.0.1", setup.port, writer="alice", password="s3cret")
        assert client.read_versioned().version == 0
        assert client.read_versioned().version == 0  # one auth per connection, then requests
    finally:
        setup.service.close()
