"""Chubby's sequencers: the resource asks the lock service whether the writer's lock is current.

Burrows, "The Chubby lock service for loosely-coupled distributed systems" (OSDI 2006, section
2.4): a lock holder may ask for a *sequencer*, an opaque description of its lock as it was just
after the grant, and pass it with each request to the servers it talks to. A server then checks
the sequencer with the lock service ("is this still the current holder?") and refuses the
request if not. A fencing token is only compared with the highest token the storage has seen,
so a stale write that arrives before the new holder's first write gets through (the fencing
hole); a sequencer check asks the lock service itself, so it refuses that write too.

:class:`Sequencer` is what a lock's ``sequencer()`` hands out. The checks here are what the
resource asks each lock service, one class per service, each reporting its calls as ``check``
requests and replies:

* single Redis (:class:`RedisCheck`): ``GET`` on the lock key: does it still hold the writer's
  random value? Redis expires a key when it is read after its lease, so an expired lease answers
  no.
* Redlock (:class:`RedlockCheck`): ``GET`` on every node at once: does a majority still hold
  the writer's value? While a majority does, no other client can hold a majority, under the same
  assumptions as Redlock itself (nodes that keep their keys, clocks that do not jump).
* ZooKeeper (:class:`ZooKeeperCheck`): ``sync`` then ``exists`` on the writer's lock node, sent
  together: is the node there, with the czxid of the grant? A node that exists was the lowest
  when it was granted and no lower one can be created since, so it still holds the lock. The
  ``sync`` makes the server catch up with the leader first: ZooKeeper serves reads from the
  server a client is connected to, which may lag behind.
* etcd (:class:`EtcdCheck`): the lease's time to live (is it still alive?), then a transaction
  comparing the writer's key's create revision and lease: does the key still exist, created by
  this grant, under this lease?
* PostgreSQL (:class:`PostgresCheck`): ``pg_locks``: does the writer's own session (its pid,
  under the writer's application name) still hold the advisory lock? Through a pooler that
  question means nothing (clients share server sessions), so the lab refuses that combination.

Guarantees: a write whose check answers no is refused; a check that cannot be made (the lock
service does not answer) answers no as well: the storage fails closed.

Assumes: the check and the write are one step to everyone else, which the storage service makes
true among its own writes (:mod:`algorithms.storage_service` serialises them), but not for the
lock service: the lock can move between the check's reply and the write. The window is the
storage service's own round trip to the storage, not the writer's pause, which is what closes
the fencing hole. A storage service that is itself paused in that window reopens it.

Costs: at least one round trip to the lock service per write (two for etcd, one per node for
Redlock), and the lock service must answer for the storage to accept anything.

One module past the usual ~300 lines, on purpose: one check per lock service (Redis, Redlock,
ZooKeeper, etcd, PostgreSQL), side by side, so that what each service can and cannot answer is
compared in one place, as the storage lessons compare them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from algorithms.errors import BackendUnavailable
from algorithms.etcd_gateway import Gateway, b64
from algorithms.events import Reporter
from algorithms.resp import ReplyError, RespConnection, pack


@dataclass(frozen=True)
class Sequencer:
    """A lock as it was just after its grant: what a writer shows the storage.

    ``service`` names the lock algorithm (``redis``, ``redlock``, ``zookeeper``, ``etcd``,
    ``postgres``), ``lock`` the lock (a key, a path, a number), ``holder`` this grant's unique
    value there (a random value, the lock node's path, the lock key), ``token`` its fencing token
    if it has one; ``lease`` (etcd) and ``session`` (PostgreSQL: the holder's backend pid) name
    what the grant lives in; ``owner`` is the holder's name.
    """

    service: str
    lock: str
    holder: str
    owner: str
    token: int | None = None
    lease: str | None = None
    session: str | None = None

    def as_dict(self) -> dict[str, str | int]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Sequencer:
        token = data.get("token")
        return cls(
            service=str(data["service"]),
            lock=str(data["lock"]),
            holder=str(data["holder"]),
            owner=str(data.get("owner", "")),
            token=int(token) if token is not None else None,
            lease=None if data.get("lease") is None else str(data["lease"]),
            session=None if data.get("session") is None else str(data["session"]),
        )


@dataclass(frozen=True)
class Answer:
    """The lock service's answer about one sequencer."""

    current: bool
    why: str = ""  # why not current, in a learner's words


class Check(Protocol):
    """What a resource asks one lock service about a writer's sequencer."""

    service: str

    def check(self, sequencer: Sequencer) -> Answer: ...

    def close(self) -> None: ...


def _ask(report: Reporter, node: str, sequencer: Sequencer, **args: object) -> int:
    return report.request(node, "check", holder=sequencer.owner, **args)


def _unanswered(report: Reporter, call: int, node: str, exc: BackendUnavailable) -> Answer:
    report.reply(call, node, "check", False, current=False, error=exc.detail)
    return Answer(False, f"{node} did not answer ({exc.detail}): the lock cannot be confirmed")


class RedisCheck:
    """Single Redis: does the lock key still hold the writer's random value?"""

    service = "redis"

    def __init__(self, connection: RespConnection, key: str, *, node: str, report: Reporter):
        self.connection, self.key, self.node, self._report = connection, key, node, report

    def check(self, sequencer: Sequencer) -> Answer:
        call = _ask(self._report, self.node, sequencer, key=self.key, value=sequencer.holder)
        try:
            found = self.connection.call(pack("GET", self.key))
        except BackendUnavailable as exc:
            return _unanswered(self._report, call, self.node, exc)
        current = found == sequencer.holder and not isinstance(found, ReplyError)
        why = "" if current else _gone(sequencer, "its key", found)
        self._report.reply(call, self.node, "check", True, current=current, **_why(why))
        return Answer(current, why)

    def close(self) -> None:
        self.connection.close()


class RedlockCheck:
    """Redlock: does a majority of the nodes still hold the writer's random value?"""

    service = "redlock"

    def __init__(self, nodes: Mapping[str, RespConnection], key: str, *, report: Reporter):
        self.nodes, self.key, self._report = dict(nodes), key, report
        self.quorum = len(self.nodes) // 2 + 1

    def check(self, sequencer: Sequencer) -> Answer:
        calls: dict[str, int] = {}
        sent: dict[str, BackendUnavailable | None] = {}
        for node, connection in self.nodes.items():  # every GET out before any reply is read
            calls[node] = _ask(self._report, node, sequencer, key=self.key, value=sequencer.holder)
            try:
                connection.send(pack("GET", self.key))
                sent[node] = None
            except BackendUnavailable as exc:
                sent[node] = exc
        yes = []
        for node, connection in self.nodes.items():
            failed = sent[node]
            try:
                if failed is not None:
                    raise failed
                found = connection.read()
            except BackendUnavailable as exc:
                _unanswered(self._report, calls[node], node, exc)
                continue
            holds = found == sequencer.holder
            yes += [node] if holds else []
            why = "" if holds else _gone(sequencer, "its key", found)
            self._report.reply(calls[node], node, "check", True, current=holds, **_why(why))
        if len(yes) >= self.quorum:
            return Answer(True)
        return Answer(
            False,
            f"only {len(yes)} of {len(self.nodes)} nodes still hold {sequencer.owner}'s value; "
            f"a majority needs {self.quorum}",
        )

    def close(self) -> None:
        for connection in self.nodes.values():
            connection.close()


class ZooKeeperCheck:
    """ZooKeeper: after a sync, does the writer's lock node exist with the grant's czxid?"""

    service = "zookeeper"

    def __init__(self, client: Any, *, node: str, report: Reporter, timeout_ms: int = 1000):
        self.client, self.node, self._report = client, node, report  # a started KazooClient
        self.timeout_s = timeout_ms / 1000

    def check(self, sequencer: Sequencer) -> Answer:
        from kazoo.exceptions import KazooException
        from kazoo.handlers.threading import KazooTimeoutError

        path = sequencer.holder
        if not path.startswith(sequencer.lock + "/"):
            return Answer(False, f"{path!r} is not a node of the lock {sequencer.lock}")
        call = _ask(self._report, self.node, sequencer, path=path, token=sequencer.token)
        try:
            synced = self.client.sync_async(path)
            exists = self.client.exists_async(path)  # answered after the sync: one session
            synced.get(timeout=self.timeout_s)
            stat = exists.get(timeout=self.timeout_s)
        except (KazooException, KazooTimeoutError) as exc:
            detail = (
                "no reply before the timeout"
                if isinstance(exc, KazooTimeoutError)
                else str(type(exc).__name__)
            )
            return _unanswered(self._report, call, self.node, BackendUnavailable(self.node, detail))
        if stat is None:
            why = f"{sequencer.owner}'s lock node is gone"
        elif sequencer.token is not None and int(stat.czxid) != sequencer.token:
            why = f"{sequencer.owner}'s lock node was created again (czxid {stat.czxid})"
        else:
            why = ""
        self._report.reply(call, self.node, "check", True, current=not why, **_why(why))
        return Answer(not why, why)

    def close(self) -> None:
        with contextlib.suppress(Exception):  # kazoo's own threads; nothing to report
            self.client.stop()
            self.client.close()


class EtcdCheck:
    """etcd: is the writer's lease alive, and its key still there with its create revision?"""

    service = "etcd"

    def __init__(self, gateway: Gateway, *, report: Reporter):
        self.gateway, self.node, self._report = gateway, gateway.node, report

    def check(self, sequencer: Sequencer) -> Answer:
        lease = sequencer.lease or "0"
        if not sequencer.holder.startswith(sequencer.lock + "/"):
            return Answer(False, f"{sequencer.holder!r} is not a key of the lock {sequencer.lock}")
        call = _ask(self._report, self.node, sequencer, lease=lease)
        try:
            alive = self.gateway.call("/v3/lease/timetolive", {"ID": lease})
        except BackendUnavailable as exc:
            return _unanswered(self._report, call, self.node, exc)
        ttl_ms = int(alive.get("TTL", -1)) * 1000
        if ttl_ms <= 0:
            why = f"{sequencer.owner}'s lease has ended"
            self._report.reply(call, self.node, "check", True, current=False, why=why)
            return Answer(False, why)
        self._report.reply(call, self.node, "check", True, current=True, ttl_ms=ttl_ms)
        key = sequencer.holder
        call = _ask(self._report, self.node, sequencer, key=key, token=sequencer.token)
        same = [
            {"key": b64(key), "target": "CREATE", "result": "EQUAL",
             "create_revision": str(sequencer.token or 0)},
            {"key": b64(key), "target": "LEASE", "result": "EQUAL", "lease": lease},
        ]  # fmt: skip
        try:
            reply = self.gateway.call("/v3/kv/txn", {"compare": same})
        except BackendUnavailable as exc:
            return _unanswered(self._report, call, self.node, exc)
        current = bool(reply.get("succeeded"))
        why = "" if current else f"{sequencer.owner}'s lock key is gone"
        self._report.reply(call, self.node, "check", True, current=current, **_why(why))
        return Answer(current, why)

    def close(self) -> None:
        self.gateway.close()


# %s lock key, %s the holder's backend pid, %s its application name (the holder's name).
HOLDS_SQL = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
    " WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1"
    " AND ((l.classid::bigint << 32) | l.objid::bigint) = %s"
    " AND l.pid = %s AND a.application_name = %s)"
)


class PostgresCheck:
    """PostgreSQL: does the writer's own session still hold the advisory lock (pg_locks)?

    ``connect`` opens the check's own autocommit session; one the server ended (an
    ``idle_session_timeout``, a restart) is opened again, once, before the check gives up.
    """

    service = "postgres"

    def __init__(self, connect: Callable[[], Any], key: int, *, node: str, report: Reporter):
        self.connect, self.key, self.node, self._report = connect, key, node, report
        self.conn: Any = None  # a psycopg connection, opened on first use

    def check(self, sequencer: Sequencer) -> Answer:
        import psycopg

        pid = int(sequencer.session or 0)
        call = _ask(self._report, self.node, sequencer, session=pid)
        row = None
        for attempt in (1, 2):
            try:
                if self.conn is None or self.conn.closed:
                    self.conn = self.connect()
                row = self.conn.execute(HOLDS_SQL, (self.key, pid, sequencer.owner)).fetchone()
                break
            except psycopg.Error as exc:
                if attempt == 1 and (self.conn is None or self.conn.closed):
                    continue  # a session the server had ended: once more, on a new one
                text = str(exc).strip()
                unavailable = BackendUnavailable(
                    self.node, text.splitlines()[0] if text else type(exc).__name__
                )
                return _unanswered(self._report, call, self.node, unavailable)
        current = bool(row and row[0])
        why = "" if current else f"{sequencer.owner}'s session no longer holds the lock"
        self._report.reply(call, self.node, "check", True, current=current, **_why(why))
        return Answer(current, why)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self.conn is not None:
                self.conn.close()


def _gone(sequencer: Sequencer, what: str, found: object) -> str:
    if found is None:
        return f"{sequencer.owner}'s lock is gone: {what} has expired or been deleted"
    return f"{sequencer.owner}'s lock is gone: {what} holds another client's value now"


def _why(why: str) -> dict[str, str]:
    return {"why": why} if why else {}
