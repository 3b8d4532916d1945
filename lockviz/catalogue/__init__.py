"""Which lock services lockviz runs, and what each supports: the one place that says so.

Plain data at the bottom layer: the scenario schema, the lab, the pages, lessons, free play and
comparisons read these entries and keep no list of their own. Adding a backend means one
:class:`Backend` entry here, its lock factory (``lockviz/lab/backends/``), its watcher
(``lockviz/lab/watchers/``) and, for a new kind of server, a :class:`ServerKind` and its module
in ``lockviz/lab/servers/``.

Server names say their kind: ``redis-3``, ``zk-1``, ``pg-1``, ``etcd-1``, ``sentinel-2``, and
``storage`` (the storage node every run writes to, a Redis server; a replicated storage has a
second replica, ``storage-2``). The backend ``none`` has no lock service at all: its clients go
straight to the storage. What the storage checks on each write is its *kind*
(:data:`STORAGE_KINDS`), listed here too.

One table in three modules, read together by the consistency test
(tests/lockviz/test_catalogue.py), and named here too (``from lockviz.catalogue import
BACKENDS``): :mod:`~lockviz.catalogue.servers` (the kinds of server and their restart words),
:mod:`~lockviz.catalogue.backends` (each lock service's entry with its variants and their words:
what ``ttl_ms`` is called, what the server ends) and :mod:`~lockviz.catalogue.storage`.
"""

from __future__ import annotations

from lockviz.catalogue.backends import BACKENDS, OPTIONS, Backend, Variant
from lockviz.catalogue.servers import (
    ETCD,
    POSTGRES,
    REDIS,
    SENTINEL,
    SERVER_KINDS,
    STORAGE,
    STORAGE_KEY,
    STORAGE_REPLICA,
    ZOOKEEPER,
    Kept,
    ServerKind,
    server_kind,
)
from lockviz.catalogue.storage import STORAGE_KINDS, StorageKind

__all__ = [
    "BACKENDS",
    "ETCD",
    "OPTIONS",
    "POSTGRES",
    "REDIS",
    "SENTINEL",
    "SERVER_KINDS",
    "STORAGE",
    "STORAGE_KEY",
    "STORAGE_KINDS",
    "STORAGE_REPLICA",
    "ZOOKEEPER",
    "Backend",
    "Kept",
    "ServerKind",
    "StorageKind",
    "Variant",
    "server_kind",
]
