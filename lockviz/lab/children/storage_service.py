"""The storage service of a run whose storage checks sequencers, as an OS process of its own.

Run as ``python -m lockviz.lab.children.storage_service``. It reads its
:class:`~lockviz.lab.config.StorageServiceConfig` as the first line on stdin, connects to the
storage node and to the lock service (the servers' own addresses: it is a server itself, not a
client behind a link), listens on a free loopback port, and writes ``{"kind": "_ready", "port":
...}``. From then on it answers the clients' writes (:class:`algorithms.storage_service.
StorageService`) and writes each call it makes to the lock service as an event on stdout, one
JSON line each, stamped with the host's CLOCK_MONOTONIC; the engine records them as the
storage's (``actor: "storage"``). It stops when its stdin closes.

Why a process of its own, and not the writer's: see docs/algorithms.md, "Sequencers".
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Mapping

from algorithms.events import Reporter, json_line
from algorithms.fenced_storage import FencedStorage
from algorithms.redis_client import connect
from algorithms.storage_service import StorageService
from lockviz.catalogue import STORAGE, STORAGE_KEY
from lockviz.lab.backends import check_factory
from lockviz.lab.config import StorageServiceConfig
from lockviz.lab.procs import die_with_parent

_out = threading.Lock()


def emit(kind: str, details: Mapping[str, object]) -> None:
    line = json_line(time.monotonic_ns(), kind, details)
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def build(config: StorageServiceConfig) -> StorageService:
    host, port = config.address(STORAGE)
    storage = FencedStorage(
        connect(host, port, timeout_ms=config.call_timeout_ms, password=config.password(STORAGE)),
        STORAGE_KEY,
        kind="plain",
    )
    storage.prepare()
    make_check, lock = check_factory(config.backend)
    # Its clients present the storage node's own password: the service is no door around it.
    check = make_check(config, Reporter(emit))
    return StorageService(storage, check, lock, password=config.password(STORAGE))


def main() -> None:
    die_with_parent()
    service = build(StorageServiceConfig.from_json(sys.stdin.readline()))
    emit("_ready", {"port": service.serve()})
    for _ in sys.stdin:  # nothing is sent after the config: the service lives until stdin closes
        pass
    service.close()


if __name__ == "__main__":
    main()
