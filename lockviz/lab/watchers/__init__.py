"""Watching the servers decide (see :mod:`lockviz.lab.watchers.base`): one module per kind of
lock server, and :func:`for_backend`, which gives a run the watchers of its backend."""

from __future__ import annotations

from collections.abc import Callable

from lockviz.lab.events import Record
from lockviz.lab.labs import ServerSet
from lockviz.lab.watchers import etcd, postgres, redis, sentinel, zookeeper
from lockviz.lab.watchers.base import Watcher

WatcherFactory = Callable[[ServerSet, list[str], Record], list[Watcher]]

FACTORIES: dict[str, WatcherFactory] = {
    "none": lambda servers, nodes, record: [],  # no lock servers to watch
    "redis": redis.KeyWatcher.each,
    "redlock": redis.KeyWatcher.each,
    "redis-sentinel": sentinel.watchers,
    "zookeeper": zookeeper.watchers,
    "postgres": postgres.LockTableWatcher.each,
    "etcd": etcd.watchers,
}


def for_backend(
    backend: str, servers: ServerSet, nodes: list[str], record: Record
) -> list[Watcher]:
    """The watchers of ``backend``'s lock servers ``nodes`` in ``servers``."""
    return FACTORIES[backend](servers, nodes, record)
