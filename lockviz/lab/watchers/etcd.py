"""etcd deciding: when did *etcd* end a lock holder's lease?

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

A cluster (``etcd_nodes: 3``) has one such watcher, which reconnects to the next member when
its own stops answering (the revision is the cluster's: it resumes where it was), and records
what the leader decided as the leader's; and a :class:`LeaderWatcher`, which asks every member
for its status every 0.1 s and records each new leader (``role``), with every lock client's
lease as the new leader has it (``leases``).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Callable
from typing import TypedDict

from lockviz.jsontypes import JsonObject
from lockviz.lab.backends.etcd import LAB_PREFIX, LOCK_PREFIX, OWNERS
from lockviz.lab.events import Record
from lockviz.lab.labs import ServerSet
from lockviz.lab.servers.etcd import post, prefix_end
from lockviz.lab.watchers.base import ServerWatcher, Watcher


# etcd's JSON gateway, as a watch stream answers (numbers are strings, keys and values base64).
class _KeyValue(TypedDict, total=False):
    key: str
    value: str
    create_revision: str
    mod_revision: str


class _Change(TypedDict, total=False):
    type: str  # "PUT" (absent: etcd leaves out defaults) or "DELETE"
    kv: _KeyValue


class _Header(TypedDict, total=False):
    revision: str


class Answer(TypedDict, total=False):
    """One ``result`` of a watch stream: the watch created, or the changes of revisions."""

    header: _Header
    created: bool
    events: list[_Change]


READ_TIMEOUT_S = 30.0  # a safety net only: a killed etcd on loopback closes the stream at once
MAX_BACKOFF_S = 0.5


def _text(value: str | None) -> str:
    return base64.b64decode(value or "").decode()


class Leadership:
    """What a cluster's watchers share: each member's address, and who leads now."""

    def __init__(self, members: dict[str, tuple[str, int]], leader: str | None) -> None:
        self.members = dict(members)
        self.leader = leader


def watchers(servers: ServerSet, nodes: list[str], record: Record) -> list[Watcher]:
    """One member's lock watcher; a cluster's, and its leader watcher, sharing one view."""
    if len(nodes) == 1:
        return [LockWatcher.of(servers[nodes[0]], record)]
    members = {name: (servers[name].host, servers[name].port) for name in nodes}
    roles = servers.roles()
    leading = Leadership(members, next((n for n, r in roles.items() if r == "leader"), None))
    locks = LockWatcher.of(servers[nodes[0]], record)
    locks.leadership = leading
    retired = locks._retired
    return [locks, LeaderWatcher(leading, record, retired=retired)]


class LockWatcher(ServerWatcher):
    transient = (OSError, http.client.HTTPException, ValueError, KeyError)
    leadership: Leadership | None = None  # a cluster's: another member when one is down

    def init_state(self) -> None:
        self.revision = 0  # everything up to here was handled: a reconnect resumes after it
        self.queue: dict[str, int] = {}  # lock key -> create revision
        self.owners: dict[str, str] = {}  # lease (hex) -> owner name
        self._conn: http.client.HTTPConnection | None = None
        self._conn_lock = threading.Lock()

    def _member(self) -> tuple[str, int]:
        """The member to watch through: its own, else (a cluster) the next after each failure."""
        if self.leadership is None:
            return self.host, self.port
        members = list(self.leadership.members.values())
        return members[self.failures % len(members)]

    def _decider(self) -> str:
        """Who decided what the watch tells: a cluster's leader, else the member itself."""
        leading = self.leadership
        return leading.leader if leading is not None and leading.leader else self.name

    def interrupt(self) -> None:
        with self._conn_lock:
            if self._conn is not None and self._conn.sock is not None:
                with contextlib.suppress(OSError):
                    self._conn.sock.shutdown(socket.SHUT_RDWR)  # wakes the blocked read

    def backoff_s(self, failures: int) -> float:
        return min(MAX_BACKOFF_S, 0.025 * 2.0**failures)  # etcd is down (killed): until it is back

    def watch(self) -> None:
        request: JsonObject = {
            "key": base64.b64encode(LAB_PREFIX.encode()).decode(),
            "range_end": base64.b64encode(prefix_end(LAB_PREFIX).encode()).decode(),
            "prev_kv": True,
        }
        if self.revision:
            request["start_revision"] = str(self.revision + 1)
        conn = http.client.HTTPConnection(*self._member(), timeout=READ_TIMEOUT_S)
        with self._conn_lock:
            if self.stopping:
                return
            self._conn = conn
        try:
            conn.request("POST", "/v3/watch", json.dumps({"create_request": request}))
            response = conn.getresponse()
            if response.status != 200:
                raise OSError(f"watch refused: HTTP {response.status}")
            while not self.stopping:
                line = response.readline()
                if not line:
                    return  # the stream ended (etcd stopped): reconnect
                self._handle(json.loads(line)["result"], time.monotonic_ns())
        finally:
            with self._conn_lock:
                self._conn = None
            conn.close()

    def _handle(self, result: Answer, t_ns: int) -> None:
        revision = int(result["header"]["revision"])
        if result.get("created"):
            if not self.revision:  # the first watch: nothing before now concerns this run
                self.revision = revision
            self.ready()
            return
        by_revision: dict[int, list[_Change]] = {}
        for event in result.get("events", []):
            by_revision.setdefault(int(event["kv"]["mod_revision"]), []).append(event)
        for _, group in sorted(by_revision.items()):
            self._apply(group, t_ns)
        self.revision = max(self.revision, revision)

    def _apply(self, group: list[_Change], t_ns: int) -> None:
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
                self.record(self._decider(), kind, {"key": key, "holder": owner}, t_ns)
        for lease in ended:
            self.owners.pop(lease, None)


POLL_S = 0.1  # how often the leader watcher asks each member


class LeaderWatcher(Watcher):
    """Who leads a cluster, as its members say (see the module docstring)."""

    transient = (OSError, ValueError, KeyError)

    def __init__(
        self,
        leadership: Leadership,
        record: Record,
        *,
        retired: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__("etcd-leader", record, retired=retired)
        self.leadership = leadership
        self.ids: dict[str, str] = {}  # member id -> name

    def watch(self) -> None:
        while not self.stopping:
            said = {name: self._status(host, port) for name, (host, port) in self._members()}
            for name, status in said.items():
                header = status.get("header")
                if isinstance(header, dict) and header.get("member_id"):
                    self.ids[str(header["member_id"])] = name
            self.ready()
            leaders = [self.ids.get(str(s.get("leader")), "") for s in said.values() if s]
            found = max(set(leaders), key=leaders.count) if any(leaders) else ""
            if found and found != self.leadership.leader:
                t_ns = time.monotonic_ns()
                term = max(int(str(s.get("raftTerm", 0))) for s in said.values() if s)
                self._led(found, term, t_ns)
            self.pause(POLL_S)

    def _members(self) -> list[tuple[str, tuple[str, int]]]:
        return list(self.leadership.members.items())

    def _status(self, host: str, port: int) -> JsonObject:
        try:
            return post(host, port, "/v3/maintenance/status", {}, timeout_s=0.3)
        except (OSError, ValueError):
            return {}  # down, or cut off: it says nothing

    def _led(self, leader: str, term: int, t_ns: int) -> None:
        previous, self.leadership.leader = self.leadership.leader, leader
        details: dict[str, object] = {"role": "leader", "term": term}
        if previous:
            details["previous"] = previous
        leases = self._leases(*self.leadership.members[leader])
        if leases:
            details["leases"] = leases
        self.record(leader, "role", details, t_ns)

    def _leases(self, host: str, port: int) -> dict[str, int]:
        """Each lock client's lease as ``host`` has it now: owner -> ms to live."""
        body: JsonObject = {
            "key": base64.b64encode(OWNERS.encode()).decode(),
            "range_end": base64.b64encode(prefix_end(OWNERS).encode()).decode(),
        }
        found: dict[str, int] = {}
        try:
            listed = post(host, port, "/v3/kv/range", body, timeout_s=0.5).get("kvs")
            for kv in listed if isinstance(listed, list) else []:
                if not isinstance(kv, dict) or not kv.get("lease"):
                    continue
                ttl = post(host, port, "/v3/lease/timetolive", {"ID": kv["lease"]}, 0.5)
                if int(str(ttl.get("TTL", -1))) > 0:
                    found[_text(str(kv.get("value", "")))] = int(str(ttl["TTL"])) * 1000
        except (OSError, ValueError):
            return found
        return found
