"""The kinds of server the lab starts, named by their prefix (``redis-3``, ``zk-1``, ``pg-1``,
``etcd-1``, ``sentinel-2``), and the storage nodes every run writes to (Redis servers): what
each kind can undergo (a moved clock) and what a restart after kill -9 keeps."""

from __future__ import annotations

from dataclasses import dataclass

STORAGE = "storage"
STORAGE_REPLICA = "storage-2"  # a replicated storage's second replica (lww, crdt)
STORAGE_KEY = "lockviz:resource"  # the resource every client writes, on the storage node


@dataclass(frozen=True)
class ServerKind:
    """One kind of server the lab can start; its servers are named ``<prefix>-<n>``."""

    prefix: str
    label: str
    clock_jumps: bool = False  # its wall clock can be moved (libfaketime under Redis)
    # What a restart after kill -9 keeps, by the server's persistence ("none" or "fsync"; None
    # where the kind has no choice): the narrator's words beside "restarted".
    restarts: tuple[Kept, ...] = ()

    def kept(self, persistence: str | None) -> Kept | None:
        """What this server keeps across a restart (None when the table does not say)."""
        return next((k for k in self.restarts if k.persistence == persistence), None)


@dataclass(frozen=True)
class Kept:
    """What a server keeps across a restart, in a diagram's label and in a sentence."""

    persistence: str | None
    label: str  # "no persistence"
    text: str  # "no persistence: it comes back empty"


REDIS = ServerKind(
    "redis",
    "Redis",
    clock_jumps=True,
    restarts=(
        Kept(
            "none", "no persistence", 'no persistence (save "", appendonly no): it comes back empty'
        ),
        Kept("fsync", "fsync: keys kept", "append-only log, fsync always: its keys come back"),
    ),
)
ZOOKEEPER = ServerKind(
    "zk",
    "ZooKeeper",
    restarts=(
        Kept("none", "log replayed", "replays its transaction log (not fsynced)"),
        Kept("fsync", "log replayed", "replays its fsynced transaction log"),
    ),
)
POSTGRES = ServerKind(
    "pg",
    "PostgreSQL",
    restarts=(Kept(None, "WAL replayed", "replays its write-ahead log: locks are not in it"),),
)
ETCD = ServerKind("etcd", "etcd")
# redis-server --sentinel; it rewrites its config as it learns, and a restart reads it back
# (lockviz.lab.servers.replicated.SentinelServer.config).
SENTINEL = ServerKind(
    "sentinel",
    "Redis Sentinel",
    restarts=(
        Kept(
            None,
            "config kept",
            "reads back the config it rewrote as it learned (the primary it watches, its replicas "
            "and the other Sentinels) and rejoins them",
        ),
    ),
)
SERVER_KINDS: dict[str, ServerKind] = {
    k.prefix: k for k in (REDIS, ZOOKEEPER, POSTGRES, ETCD, SENTINEL)
}


def server_kind(name: str) -> ServerKind | None:
    """The kind of the server called ``name`` (``storage`` and ``storage-2`` are Redis); ``None``
    if no server."""
    if name in (STORAGE, STORAGE_REPLICA):
        return REDIS
    prefix, _, number = name.rpartition("-")
    return SERVER_KINDS.get(prefix) if number.isdigit() and not number.startswith("0") else None
