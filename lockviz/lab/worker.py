"""A scenario client (alice, bob, ...) as an OS process of its own.

Run as ``python -m lockviz.lab.worker '<config json>'``. It reads one command per line on stdin
(``{"op": "acquire", "timeout_ms": 5000}``) and writes one event per line on stdout, each
stamped with the host's CLOCK_MONOTONIC where it happened. Commands run one after another, like
the code of a real single-threaded client: a command sent while the process is frozen (SIGSTOP)
waits in the pipe until it thaws. After each command it writes ``{"kind": "_done"}``.

This module imports no Django: it starts fast and runs only the lock client from algorithms/.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

from algorithms.errors import LockError
from algorithms.fenced_storage import FencedStorage
from algorithms.redis_client import connect
from algorithms.redis_lock import RedisLock
from lockviz.lab.procs import die_with_parent

LOCK_KEY = "lockviz:lock"
STORAGE_KEY = "lockviz:resource"


class Worker:
    def __init__(self, config: dict[str, Any]) -> None:
        self.name: str = config["name"]
        self._out = threading.Lock()
        timeout_ms = int(config.get("timeout_ms", 1000))
        servers: dict[str, str] = config["servers"]
        node = config["nodes"][0]
        host, port = servers[node].rsplit(":", 1)
        self.lock = RedisLock(
            connect(host, int(port), timeout_ms=timeout_ms),
            LOCK_KEY,
            owner=self.name,
            ttl_ms=int(config["ttl_ms"]),
            node=node,
            on_event=self.emit,
            unsafe_release=config.get("variant") == "unsafe_release",
        )
        host, port = servers["storage"].rsplit(":", 1)
        self.storage = FencedStorage(
            connect(host, int(port), timeout_ms=timeout_ms),
            STORAGE_KEY,
            fencing=bool(config["fencing"]),
            writer=self.name,
            on_event=self.emit,
        )

    def emit(self, kind: str, details: dict[str, Any]) -> None:
        line = json.dumps({"t_ns": time.monotonic_ns(), "kind": kind, **details})
        with self._out:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def handle(self, command: dict[str, Any]) -> None:
        op = command.get("op")
        if op == "acquire":
            if self.lock.grant is not None:
                self.emit("note", {"text": f"{self.name} already holds the lock"})
                return
            self.lock.acquire(timeout_ms=int(command.get("timeout_ms", 0)))
        elif op == "release":
            if self.lock.grant is None:
                self.emit("note", {"text": f"{self.name} holds no lock to release"})
                return
            self.lock.release()
        elif op == "extend":
            if self.lock.grant is None:
                self.emit("note", {"text": f"{self.name} holds no lock to extend"})
                return
            self.lock.extend(command.get("ttl_ms"))
        elif op == "write":
            token = self.lock.grant.token if self.lock.grant else 0
            self.storage.write(str(command["value"]), token)
        else:
            self.emit("note", {"text": f"unknown command {op!r}"})

    def serve(self) -> None:
        self.emit("_ready", {})
        for line in sys.stdin:
            command = json.loads(line)
            if command.get("op") == "quit":
                break
            try:
                self.handle(command)
            except LockError as exc:  # already reported as a failed reply; the client goes on
                self.emit("note", {"text": str(exc)})
            self.emit("_done", {})


def main() -> None:
    die_with_parent()
    Worker(json.loads(sys.argv[1])).serve()


if __name__ == "__main__":
    main()
