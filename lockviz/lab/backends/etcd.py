"""etcd: the lease lock of algorithms.etcd_lock on ``etcd-1``, and a watcher of its keys.

The watcher is how the diagram learns when *etcd* ended a lease. It holds one v3 watch on the
lab's prefix over the JSON gateway (``POST /v3/watch`` answers with a never-ending chunked
response, one JSON message per line) and keeps etcd's own view of the lock: the queue of lock
keys ``lockviz/lock/<lease>`` by create revision (the lowest is the holder) and the owner names
that holders record under ``lockviz/owners/<lease>`` with the same lease.

Expired or deleted? etcd deletes every key of a lease in one revision when the lease ends, so a
holder key that goes in the *same revision* as its owner key went with its lease: ``expired``.
An unlock deletes the lock key alone (the client revokes its lease in a later request):
``deleted``. A holder that revoked its lease without unlocking first would also read as
``expired``; the lock never does that. A holder key with no owner recorded (the client died
between the lock and the claim) cannot be told apart and is reported as ``deleted``. A waiter
that leaves the queue (its acquire timed out) never held the lock and is not reported.

If etcd dies, the watcher reconnects (backoff up to 0.5 s) and resumes after the last revision
it saw, so a restarted member (same data dir) replays what it missed. ``stop`` shuts the socket
down, so it returns at once even while a read is blocked.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import threading
import time
from typing import Any

from algorithms.etcd_lock import EtcdLock, Gateway
from algorithms.events import EventSink
from lockviz.lab.servers.etcd import LAB_PREFIX, prefix_end
from lockviz.lab.watcher import NodeEventSink

LOCK_NAME = LAB_PREFIX + "lock"  # etcd's lock service queues keys under "lockviz/lock/"
LOCK_PREFIX = LOCK_NAME + "/"
OWNERS = LAB_PREFIX + "owners/"
READ_TIMEOUT_S = 30.0  # a safety net only: a killed etcd on loopback closes the stream at once
MAX_BACKOFF_S = 0.5


def make_lock(config: dict[str, Any], owner: str, emit: EventSink) -> EtcdLock:
    node = config["nodes"][0]
    host, port = config["servers"][node].rsplit(":", 1)
    return EtcdLock(
        Gateway(host, int(port), node=node, timeout_ms=int(config["timeout_ms"])),
        LOCK_NAME,
        owner=owner,
        ttl_ms=int(config["ttl_ms"]),
        owner_prefix=OWNERS,
        on_event=emit,
    )


def watchers(servers: Any, scenario: Any, record: NodeEventSink) -> list[LockWatcher]:
    return [LockWatcher(servers[node], node, record) for node in scenario.nodes]


def _text(value: str | None) -> str:
    return base64.b64decode(value or "").decode()


class LockWatcher:
    def __init__(self, server: Any, node: str, on_event: NodeEventSink) -> None:
        self.server = server
        self.node = node
        self.on_event = on_event
        self.revision = 0  # everything up to here was handled: a reconnect resumes after it
        self.queue: dict[str, int] = {}  # lock key -> create revision
        self.owners: dict[str, str] = {}  # lease (hex) -> owner name
        self._stop = threading.Event()
        self._watching = threading.Event()
        self._conn: http.client.HTTPConnection | None = None
        self._conn_lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"watch-{node}", daemon=True)

    def start(self, timeout_s: float = 5.0) -> None:
        self._thread.start()
        self._watching.wait(timeout_s)

    def stop(self) -> None:
        self._stop.set()
        with self._conn_lock:
            if self._conn is not None and self._conn.sock is not None:
                with contextlib.suppress(OSError):
                    self._conn.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked read
        self._thread.join(timeout=2)

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                self._listen()
                failures = 0
            except (OSError, http.client.HTTPException, ValueError, KeyError):
                failures += 1
                backoff = min(MAX_BACKOFF_S, 0.025 * 2**failures)
                self._stop.wait(backoff)  # etcd is down (killed): try again until it is back

    def _listen(self) -> None:
        request: dict[str, Any] = {
            "key": base64.b64encode(LAB_PREFIX.encode()).decode(),
            "range_end": base64.b64encode(prefix_end(LAB_PREFIX).encode()).decode(),
            "prev_kv": True,
        }
        if self.revision:
            request["start_revision"] = str(self.revision + 1)
        conn = http.client.HTTPConnection(
            self.server.host, self.server.port, timeout=READ_TIMEOUT_S
        )
        with self._conn_lock:
            if self._stop.is_set():
                return
            self._conn = conn
        try:
            conn.request("POST", "/v3/watch", json.dumps({"create_request": request}))
            response = conn.getresponse()
            if response.status != 200:
                raise OSError(f"watch refused: HTTP {response.status}")
            while not self._stop.is_set():
                line = response.readline()
                if not line:
                    return  # the stream ended (etcd stopped): reconnect
                self._handle(json.loads(line)["result"], time.monotonic_ns())
        finally:
            with self._conn_lock:
                self._conn = None
            conn.close()

    def _handle(self, result: dict[str, Any], t_ns: int) -> None:
        revision = int(result["header"]["revision"])
        if result.get("created"):
            if not self.revision:  # the first watch: nothing before now concerns this run
                self.revision = revision
            self._watching.set()
            return
        by_revision: dict[int, list[dict[str, Any]]] = {}
        for event in result.get("events", []):
            by_revision.setdefault(int(event["kv"]["mod_revision"]), []).append(event)
        for _, group in sorted(by_revision.items()):
            self._apply(group, t_ns)
        self.revision = max(self.revision, revision)

    def _apply(self, group: list[dict[str, Any]], t_ns: int) -> None:
        """The events of one revision (one transaction, or one lease ending)."""
        ended = {
            key.removeprefix(OWNERS)
            for event in group
            if event.get("type") == "DELETE"
            and (key := _text(event["kv"]["key"])).startswith(OWNERS)
        }
        for event in group:
            key, deleted = _text(event["kv"]["key"]), event.get("type") == "DELETE"
            if key.startswith(OWNERS) and not deleted:
                self.owners[key.removeprefix(OWNERS)] = _text(event["kv"].get("value"))
            elif key.startswith(LOCK_PREFIX) and not deleted:
                self.queue[key] = int(event["kv"]["create_revision"])
            elif key.startswith(LOCK_PREFIX):
                holder_key = min(self.queue, key=lambda k: self.queue[k], default=None)
                self.queue.pop(key, None)
                if key != holder_key:
                    continue  # a waiter left the queue: it never held the lock
                lease = key.removeprefix(LOCK_PREFIX)
                owner = self.owners.get(lease)
                kind = "expired" if owner is not None and lease in ended else "deleted"
                self.on_event(self.node, kind, {"key": key, "holder": owner}, t_ns)
        for lease in ended:
            self.owners.pop(lease, None)
