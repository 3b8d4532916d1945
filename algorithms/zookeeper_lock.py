"""ZooKeeper's lock recipe on kazoo's primitives, every step a visible ZooKeeper call.

One module past the usual ~300 lines, on purpose: the recipe is one protocol (create, list, watch
the node ahead, recover a create whose reply was lost, session states), and each step is a visible
call a reader follows from top to bottom; split, the recipe's order would be spread over files.
How a call is made and reported (kazoo's calls as request/reply pairs, the server a session is
on) is :mod:`algorithms.zookeeper_calls`.

The recipe (ZooKeeper docs, "Recipes and Solutions", *Locks*): create
``/lockviz/lock/<owner>.<guid>.lock-<seq>`` EPHEMERAL|SEQUENTIAL, list the children, and hold
the lock when your node has the lowest sequence number. Otherwise set a watch on the node just
ahead of yours only (``exists`` with a watch) and wait; when it goes, list again. The ``guid``
finds our node after a create whose reply was lost. Each call is a ``request``/``reply`` pair
with ``to`` = the ZooKeeper server this client is connected to. The create and the first
listing are sent together: ZooKeeper answers a session's requests in order, so the listing
already holds our node, and joining the queue costs one round trip (both requests appear
before both replies).

Guarantees (only while its assumptions hold):
  * The server orders every create, so at most one node is the lowest: at most one live session
    holds the lock *on the server*.
  * The fencing token is the lock node's ``czxid``, the id of the transaction that created it.
    zxids grow with every transaction of the ensemble, so a later grant has a higher token and a
    resource that remembers the highest token it has seen can refuse a stale holder. This is
    Chubby's *sequencer* (Burrows, "The Chubby lock service", OSDI 2006) with ZooKeeper's own
    counter.
  * A release deletes only this client's node (its name is unique), never someone else's.
  * One waiter wakes per release. The ``herd`` variant watches the parent's children instead,
    so every waiter wakes on every change (a create or a delete): the herd the recipe avoids.

Assumes:
  * The session timeout (the scenario's ``ttl_ms``) outlasts every pause of the holder. The
    session is ZooKeeper's lease, kept alive by the client's heartbeats. A frozen process (GC,
    SIGSTOP) sends none: the server expires its session and deletes its ephemeral node while it
    is frozen, and the next waiter is granted. The frozen client learns it only after it thaws,
    when kazoo finds the connection dead (SUSPENDED) and then the session expired (LOST); until
    then it believes it holds the lock. Only fencing with the czxid protects the data.
  * Only owners (and the server, at session end) delete lock nodes.

Fails by:
  * A pause longer than the session: two clients believe they hold the lock (``lost`` comes at
    the thaw, not when the server acted).
  * A dropped connection while holding: ``lost`` at once (SUSPENDED: the client can no longer
    know), even if the session survives; the abandoned node is deleted on reconnect so nobody
    waits for it. This is Curator's default (``StandardConnectionStateErrorPolicy``): a client
    cut off from the ensemble cannot tell a session that lives from one the leader is expiring
    right now, and the next waiter may be granted the moment it expires, so it stops acting as
    the holder at once. kazoo's own ``Lock.is_acquired`` stays True after the session is lost;
    this client listens to the connection state instead.
  * With ``keep_suspended`` (the ``session`` variant, Curator's ``SessionConnectionStateError
    Policy``) a SUSPENDED holder keeps acting as the holder, and the lock is lost only with the
    session (LOST). Its server dying costs it nothing: it reconnects to another server of the
    ensemble with the same session (RECONNECTED) and its node is still there. The price: until
    it hears LOST, which kazoo only hears from a server once it reconnects, a holder whose session
    expired while it was cut off still believes, and a waiter may already hold the lock.
  * The servers unreachable for longer than the bounded connection retry (~8 s): kazoo closes
    the client, ``lost`` is reported, and every later call fails with BackendUnavailable.
"""

from __future__ import annotations

import re
import secrets
import threading
from collections.abc import Mapping
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.exceptions import KazooException, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import EventType, WatchedEvent

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.events import EventSink, discard
from algorithms.lock import Grant, LockBase
from algorithms.sequencer import Sequencer
from algorithms.zookeeper_calls import Calls, Pending, Request

LOCK_PATH = "/lockviz/lock"
# ZooKeeper appends a zero-padded 10-digit number; an election's nodes end as kazoo's do
# (``__lock__<seq>``, :mod:`algorithms.zookeeper_election`).
LOCK_NODE = re.compile(r"(?:\.lock-|__lock__)(\d{10})$")


def sequence(name: str) -> int:
    match = LOCK_NODE.search(name)
    return int(match.group(1)) if match else -1


class ZooKeeperLock(LockBase):
    """The recipe's lock for one client session; verbs like ``threading.Lock``."""

    NODE_MARK = ".lock-"  # between the owner's name and guid and the sequence number

    def __init__(
        self,
        client: KazooClient,
        path: str = LOCK_PATH,
        *,
        owner: str,
        ttl_ms: int,
        node: str = "zk-1",
        addresses: Mapping[str, str] | None = None,
        clock: Clock | None = None,
        on_event: EventSink = discard,
        herd: bool = False,
        keep_suspended: bool = False,
        call_timeout_ms: int = 1000,
        retry_delay_ms: int = 100,
    ) -> None:
        super().__init__(owner, clock, on_event)
        self.client = client
        self.path = path
        self.ttl_ms = ttl_ms  # the session timeout the client asked for: ZooKeeper's lease
        self.node = node  # the home server; ``addresses`` ("host:port" -> name) names the others
        self.addresses = dict(addresses or {})
        self.herd = herd
        self.keep_suspended = keep_suspended  # the "session" variant: Curator's session policy
        self._suspended = False  # SUSPENDED, not yet RECONNECTED or LOST
        self.call_timeout_s = call_timeout_ms / 1000
        self.retry_delay_ms = retry_delay_ms
        # kazoo calls _on_state from its connection thread: grant changes happen under this lock.
        self._guard = threading.RLock()
        self._abandoned: str | None = None  # our node, to delete once reconnected
        self.calls = Calls(client, self._report, node, self.addresses, self.call_timeout_s)
        client.add_listener(self._on_state)

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Queue up, then wait for the nodes ahead to go; ``None`` after ``timeout_ms``."""
        deadline = self.clock.monotonic_ns() + timeout_ms * 1_000_000
        prefix = f"{self.owner}.{secrets.token_hex(4)}{self.NODE_MARK}"
        mine: str | None = None
        token: int | None = None
        while True:
            woken = threading.Event()
            reasons: list[str] = []
            if mine is None:
                mine, token, queue = self._create_and_list(prefix, woken, reasons)
            else:
                queue = self._list(woken, reasons)
            ours = [name for name in queue or [] if name.startswith(prefix)]
            if queue is not None and not ours:
                mine = token = None  # never created, or deleted with an expired session: requeue
            elif queue is not None:
                mine, token = self._keep_one(ours, mine, token)
                ahead = queue[: queue.index(ours[0])]
                if not ahead:
                    grant = self._granted(ours[0], token)
                    if grant is not None:
                        return grant
                elif self.clock.monotonic_ns() < deadline and self._wait_for(
                    ahead[-1], woken, reasons, deadline
                ):
                    continue
            if self.clock.monotonic_ns() >= deadline:
                self._give_up(mine, timeout_ms)
                return None
            self.clock.sleep(self.retry_delay_ms / 1000)

    def _keep_one(
        self, ours: list[str], mine: str | None, token: int | None
    ) -> tuple[str, int | None]:
        """Our one node in the queue: the first of ours (a create retried after a lost reply
        may have left more: they are deleted)."""
        if ours[0] != mine:  # found after a lost create reply
            mine, token = ours[0], None
        for extra in ours[1:]:
            self._delete(f"{self.path}/{extra}")
        return ours[0], token

    def _wait_for(
        self, ahead: str, woken: threading.Event, reasons: list[str], deadline: int
    ) -> bool:
        """Wait for the node ahead of ours (every node, in the herd variant) to change; True to
        look at the queue again now, False when the wait ran out or the connection changed."""
        watching = True if self.herd else self._watch(ahead, woken, reasons)
        if watching is False:
            return True  # the node ahead left before the watch was set: look again
        remaining_s = max(0.0, (deadline - self.clock.monotonic_ns()) / 1e9)
        if watching and woken.wait(remaining_s):
            if reasons:  # a watch fired (not a connection event)
                self._report.emit("woken", by=reasons[0])
            return True
        return False

    def _create_and_list(
        self, prefix: str, woken: threading.Event, reasons: list[str]
    ) -> tuple[str | None, int | None, list[str] | None]:
        """Join the queue and list it, both requests sent before either reply is read.

        ZooKeeper answers one session's requests in the order they were sent, so the listing
        already contains our node: the recipe's first two steps cost one round trip, not two.
        Returns our node's name and czxid (``None, None`` if the create failed: the listing
        finds our node if it did happen) and the queue (``None`` if the listing failed).
        """
        path = f"{self.path}/{prefix}"
        created, listed = self.calls.start(
            Request(
                "create",
                lambda: self.client.create_async(
                    path, self.owner.encode(), ephemeral=True, sequence=True, makepath=True,
                    include_data=True,
                ),
                {"path": path, "mode": "ephemeral_sequential"},
            ),
            self._list_request(woken, reasons),
        )  # fmt: skip
        try:
            result = self.calls.finish(created, lambda r: {"path": r[0], "token": r[1].czxid})
            mine, token = str(result[0]).rsplit("/", 1)[1], int(result[1].czxid)
        except (BackendUnavailable, NoNodeError):
            mine, token = None, None
        queue: list[str] | None
        try:
            queue = self._finish_list(listed)
        except NoNodeError:  # the first create made the parent after the listing was answered
            queue = None if mine is None else self._list(woken, reasons)
        except BackendUnavailable:
            queue = None
        return mine, token, queue

    def _list(self, woken: threading.Event, reasons: list[str]) -> list[str] | None:
        """The queue in sequence order; the herd variant leaves a watch on the children."""
        try:
            return self._finish_list(self.calls.start(self._list_request(woken, reasons))[0])
        except (BackendUnavailable, NoNodeError):
            return None

    def _list_request(self, woken: threading.Event, reasons: list[str]) -> Request:
        def on_children(event: WatchedEvent) -> None:
            if event.type != EventType.NONE:
                reasons.append("children changed")
            woken.set()

        watch = on_children if self.herd else None
        return Request(
            "children",
            lambda: self.client.get_children_async(self.path, watch=watch),
            {"path": self.path, "watch": True} if self.herd else {"path": self.path},
        )

    def _finish_list(self, pending: Pending) -> list[str]:
        children = self.calls.finish(pending, lambda r: {"children": sorted(r, key=sequence)})
        return sorted((c for c in children if sequence(c) >= 0), key=sequence)

    def _watch(self, ahead: str, woken: threading.Event, reasons: list[str]) -> bool | None:
        """Watch the predecessor only: ``False`` if it is already gone, ``None`` on error."""

        def on_delete(event: WatchedEvent) -> None:
            if event.type == EventType.DELETED:
                reasons.append("predecessor deleted")
            woken.set()  # EventType.NONE: kazoo dropped its watches when the connection did

        target = f"{self.path}/{ahead}"
        try:
            stat = self.calls.call(
                "watch",
                lambda: self.client.exists_async(target, watch=on_delete),
                lambda st: {"exists": st is not None},
                path=target,
            )
        except (BackendUnavailable, NoNodeError):
            return None
        return stat is not None

    def _granted(self, name: str, token: int | None) -> Grant | None:
        path = f"{self.path}/{name}"
        if token is None:  # we found our node after a lost create reply: ask for its czxid
            stat = self._exists(path)
            if stat is None:
                return None
            token = int(stat.czxid)
        with self._guard:
            if self.client.state != KazooState.CONNECTED:
                return None  # the connection dropped since the listing: look again
            where = self.calls.where()
            self.grant = Grant(token, path, self.ttl_ms, where, self.clock.monotonic_ns())
            self._report.emit("granted", node=where, token=token, ttl_ms=self.ttl_ms, value=path)
            return self.grant

    def _give_up(self, mine: str | None, timeout_ms: int) -> None:
        if mine is not None:
            self._delete(f"{self.path}/{mine}")
        self._report.emit("acquire_failed", reason=f"timed out after {timeout_ms} ms")

    def release(self) -> bool:
        """Delete our node. ``False`` when it was already gone (the session had expired)."""
        with self._guard:
            grant = self._held()
            self.grant = None
        ok, reason = self._delete(grant.value)
        self._report.emit("released", ok=ok, **({} if ok else {"reason": reason}))
        return ok

    def _delete(self, path: str) -> tuple[bool, str]:
        try:
            self.calls.call(
                "delete", lambda: self.client.delete_async(path), lambda _: {}, path=path
            )
        except NoNodeError:
            return False, "the lock node was already gone: the session had expired"
        except BackendUnavailable as exc:
            with self._guard:
                self._abandoned = path  # still ours while the session lives: delete it later
            return False, exc.detail
        return True, ""

    def extend(self, ttl_ms: int | None = None) -> bool:
        """Check that the session is alive and still owns our node: heartbeats are the renewal.

        A session's timeout is fixed when it is created, so ``ttl_ms`` cannot change it.
        """
        grant = self._held()
        session = self.client.client_id
        stat = self._exists(grant.value)
        ok = stat is not None and session is not None and stat.ephemeralOwner == session[0]
        self._report.emit("extended", ok=ok, ttl_ms=self.ttl_ms)
        if not ok:
            self._lose(grant, "the lock node is gone: the session expired")
        return ok

    def _exists(self, path: str) -> Any:
        """The node's stat, or ``None`` when it is gone or the server did not answer."""
        try:
            return self.calls.call(
                "exists",
                lambda: self.client.exists_async(path),
                lambda st: {"exists": st is not None} | ({"token": st.czxid} if st else {}),
                path=path,
            )
        except (BackendUnavailable, NoNodeError):
            return None

    def sequencer(self) -> Sequencer | None:
        """Our lock node and its czxid: the lock is ours while that node exists."""
        grant = self.grant
        if grant is None:
            return None
        return Sequencer("zookeeper", self.path, grant.value, self.owner, grant.token)

    def close(self) -> None:
        """End the session (the server deletes our nodes) and stop kazoo's threads."""
        self.client.remove_listener(self._on_state)
        self.client.stop()
        self.client.close()

    def _on_state(self, state: str) -> None:
        """kazoo's connection thread reports a state change; this must not block.

        kazoo has three states; the client tells four, as Curator names them: ``CONNECTED``
        after ``SUSPENDED`` (with no ``LOST`` between) is the same session on a server again,
        ``RECONNECTED``; after ``LOST`` it is a new session, ``CONNECTED``."""
        with self._guard:
            grant, abandoned = self.grant, None
            if state == KazooState.SUSPENDED:
                self._suspended = True
                keeps = {"keeps": self.keep_suspended} if grant is not None else {}
                self._report.emit("session", state="SUSPENDED", **keeps)
                if grant is not None and not self.keep_suspended:
                    self._abandoned = grant.value
                    self._lose(grant, "connection suspended: my lock may be gone")
            elif state == KazooState.LOST:
                self._suspended = False
                self._report.emit("session", state="LOST")
                self._abandoned = None  # the server deleted it with the session
                if grant is not None:
                    self._lose(grant, "session expired: the lock node is gone")
            elif state == KazooState.CONNECTED:
                told = "RECONNECTED" if self._suspended else "CONNECTED"
                self._suspended = False
                self._report.emit("session", state=told, server=self.calls.where())
                abandoned, self._abandoned = self._abandoned, None
        if abandoned is not None:
            self._delete_async(abandoned)

    def _delete_async(self, path: str) -> None:
        where = self.calls.where()
        call = self._report.request(where, "delete", path=path, why="abandoned when suspended")

        def done(result: Any) -> None:
            try:
                result.get()
                self._report.reply(call, where, "delete", True)
            except (KazooException, KazooTimeoutError) as exc:
                self._report.reply(call, where, "delete", False, error=type(exc).__name__)

        self.client.delete_async(path).rawlink(done)

    def _lose(self, grant: Grant, reason: str) -> None:
        with self._guard:
            if self.grant is grant:  # one ``lost`` per grant
                self.grant = None
                self._report.emit("lost", reason=reason)

    def _held(self) -> Grant:
        if self.grant is None:
            raise NotHeld(f"{self.owner} holds no lock on {self.node}")
        return self.grant
