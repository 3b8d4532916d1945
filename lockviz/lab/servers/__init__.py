"""Real servers for a run, one module per kind: how to start, probe, wipe and stop each.

A fault is global to a server (a clock jump moves every key on that node), so in the embedded
lab every run gets its own servers: free ports, a temp dir, no persistence unless asked, gone
when the run ends (see :mod:`lockviz.lab.labs`). A server's name says its kind (``redis-3``,
``storage``, ``zk-1``, ``pg-1``, ``etcd-1``, ``sentinel-1``; see :mod:`lockviz.catalogue`).

Redis and its Sentinels share one module, :mod:`~lockviz.lab.servers.replicated`: a primary,
its replicas and their Sentinels must be made together, each knowing the others' addresses.
"""

from __future__ import annotations

from lockviz.catalogue import ETCD, POSTGRES, REDIS, SENTINEL, ZOOKEEPER, ServerKind, server_kind
from lockviz.lab.errors import LabError
from lockviz.lab.servers import etcd, postgres, replicated, zookeeper
from lockviz.lab.servers.base import Requirement, ServerModule

KINDS: dict[ServerKind, ServerModule] = {
    REDIS: replicated,
    SENTINEL: replicated,
    ZOOKEEPER: zookeeper,
    POSTGRES: postgres,
    ETCD: etcd,
}


def module_for(name: str) -> ServerModule:
    """The module that starts the server called ``name``."""
    kind = server_kind(name)
    if kind is None or kind not in KINDS:
        raise LabError(f"{name!r} is not a server the lab can start")
    return KINDS[kind]


def requirements(kind: ServerKind | None = None) -> list[Requirement]:
    """What the embedded lab needs from the machine (for one kind, or all; each once)."""
    found = [
        req for k, module in KINDS.items() if kind in (None, k) for req in module.requirements()
    ]
    return list(dict.fromkeys(found))


def missing(kind: ServerKind | None = None) -> list[Requirement]:
    return [req for req in requirements(kind) if req.found is None]


def install_hint(absent: list[Requirement]) -> str:
    names = ", ".join(req.what for req in absent)
    packages = " ".join(sorted({req.debian_package for req in absent}))
    return f"missing {names}: install with `sudo apt-get install {packages}`"
