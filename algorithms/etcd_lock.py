"""A lock on etcd: a lease, a FIFO queue of keys, and the lock key's revision as fencing token.

The client speaks etcd's v3 API as JSON over plain HTTP (the gRPC gateway under ``/v3``; keys,
values are base64), on one persistent HTTP/1.1 connection with an explicit timeout per call.
Acquire is:

1. ``lease_grant``: a lease of ``ttl_ms`` rounded *up* to whole seconds, at least 2 s: etcd
   counts leases in seconds and raises shorter ones to its minimum (1.5 election timeouts; the
   default election timeout is 1 s). ``granted`` reports this effective TTL, not the one asked.
2. ``lock``: one transaction, the first step of etcd's own ``concurrency.Mutex`` (which etcd's
   lock service runs too): create our key ``<name>/<lease id in hex>`` under the lease, record
   the owner's name under ``owner_prefix`` with the same lease (the lab's watcher reads it), and
   read the head of the queue, the key on ``<name>/`` with the lowest create revision. If the
   head is our key we hold the lock, and the transaction's revision, our key's create revision,
   is the token: one request where etcd's lock service needs a second one for the claim below.
   Otherwise the same step goes on with ``/v3/lock/lock`` for our lease, which finds our key
   and answers only when every key ahead of it is gone: a FIFO queue. That call *blocks*, so
   its HTTP timeout is the acquire timeout. While it waits, a thread keeps the lease alive, as
   etcd's own client sessions do: without it a waiter whose lease runs out keeps waiting, and
   etcd 3.4.23 (measured here) then answers "locked" with a key that no longer exists (etcd
   issue #11456, found by Jepsen).
3. ``claim``, only after such a wait: one transaction that, if our key still exists, records
   the owner's name again and reads the key's create revision. On timeout or failure the lease
   is revoked, which removes our place in the queue.

Release deletes our key (``unlock``; see :meth:`EtcdLock.release` for why not through
``/v3/lock/unlock``), then revokes the lease (``revoke``).

Guarantees (only while its assumptions hold):
  * At most one live lease owns the lowest key of the queue at any instant *on the server*.
  * The fencing token is the lock key's create revision: etcd's revision is one cluster-wide
    counter, and a later holder's key was created after an earlier holder's, so tokens strictly
    increase in grant order. etcd's docs ("Why etcd: Notes on the usage of lock and lease")
    name version number validation, i.e. fencing tokens, as the remedy for a lease that
    expires under a paused holder; a revision is such a version number.
  * ``release`` deletes only our key (it is named after our lease) and revokes our lease.

Assumes:
  * The cluster does not lose its data (each member fsyncs each write; with three members a
    write is kept by a majority before it is answered).
  * The holder renews (``extend``, one keepalive) before the lease ends. Once granted, nothing
    renews the lease in the background here: a lease is a lease.
  * The holder finishes its work while its lease lives. A paused process (GC, SIGSTOP) cannot
    know its lease ended: it wakes up acting as the holder (Kleppmann, "How to do distributed
    locking", 2016). A keepalive thread does not help: it is frozen with the rest of the
    process. Only a resource that checks the fencing token refuses the late writes.

Fails by:
  * Lease expiry during a pause: etcd revokes the lease, deletes the key, grants the next
    waiter, and the frozen holder still believes. Its next ``extend`` finds the lease gone and
    reports ``lost``; its ``release`` reports ``ok: false``.
  * ``extend`` cannot choose a new TTL: etcd renews a lease to the TTL it was granted with.
  * ``release`` reports ``ok: false`` when our key was already gone: the lease had expired
    (or someone deleted the key by hand), and someone else may hold the lock now.

One module past the usual ~300 lines, on purpose: the lease, the queue of keys, the keepalive and
the release are the steps of one lock, read in this order by bench/locks.py and the tests. The
HTTP gateway they speak through is :mod:`algorithms.etcd_gateway`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.etcd_gateway import Gateway, b64, unb64
from algorithms.events import EventSink, discard
from algorithms.lock import Grant, LockBase
from algorithms.sequencer import Sequencer

MIN_TTL_S = 2  # etcd's smallest lease with its default 1 s election timeout


def effective_ttl_s(ttl_ms: int) -> int:
    """The lease etcd will grant for ``ttl_ms``: whole seconds, rounded up, at least 2 s."""
    return max(MIN_TTL_S, math.ceil(ttl_ms / 1000))


class EtcdLock(LockBase):
    """A lease-based lock through etcd's lock service; verbs like ``threading.Lock``."""

    def __init__(
        self,
        gateway: Gateway,
        name: str,
        *,
        owner: str,
        ttl_ms: int,
        owner_prefix: str | None = None,
        clock: Clock | None = None,
        on_event: EventSink = discard,
    ) -> None:
        super().__init__(owner, clock, on_event)
        self.gateway = gateway
        self.name = name
        self.owner_prefix = owner_prefix or f"{name}.owners/"
        self.ttl_s = effective_ttl_s(ttl_ms)
        self.lease_id: str | None = None

    @property
    def node(self) -> str:
        """The member the next call goes to (a cluster's client moves on from one that fails)."""
        return self.gateway.node

    # -- acquire ------------------------------------------------------------------------------

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Queue for the lock until granted or ``timeout_ms`` has passed; ``None`` if not granted.

        When the lock is taken the wait needs a reply, so it lasts at least one call timeout
        even when ``timeout_ms`` is 0.
        """
        wait_ms = max(timeout_ms, self.gateway.timeout_ms)
        deadline = self.clock.monotonic_ns() + wait_ms * 1_000_000
        lease = self._lease_grant()
        if lease is None:
            self._report.emit("acquire_failed", reason="no lease")
            return None
        lease_id, ttl_s = lease
        key, token, failure = self._lock(lease_id, deadline, wait_ms)
        if key is not None and token is None:  # we waited in the queue: is our key still there?
            token = self._claim(lease_id, key)
        if key is None or token is None:
            self._revoke(lease_id)  # leaves the queue: the lease owned our key
            reason = failure or "our key was gone: the lease expired while we waited"
            self._report.emit("acquire_failed", reason=reason)
            return None
        self.lease_id = lease_id
        self.grant = Grant(token, key, ttl_s * 1000, self.node, self.clock.monotonic_ns())
        self._report.emit("granted", node=self.node, token=token, ttl_ms=ttl_s * 1000, value=key)
        return self.grant

    def _lease_grant(self) -> tuple[str, int] | None:
        call, reply = self._call("lease_grant", "/v3/lease/grant", {"TTL": self.ttl_s})
        if reply is None:
            return None
        lease_id, ttl_s = str(reply["ID"]), int(reply["TTL"])
        ttl_ms = ttl_s * 1000
        self._report.reply(call, self.node, "lease_grant", True, lease=lease_id, ttl_ms=ttl_ms)
        return lease_id, ttl_s

    def _lock(
        self, lease_id: str, deadline_ns: int, wait_ms: int
    ) -> tuple[str | None, int | None, str | None]:
        """Join the queue; ``(our key, token, None)`` when we head it at once, ``(our key, None,
        None)`` once etcd's lock service says the keys ahead are gone, or ``(None, None, why)``.
        """
        node = self.node  # the member asked (a failure moves the gateway on)
        suffix = f"{int(lease_id):x}"  # etcd's concurrency.Mutex names the key after the lease
        key = f"{self.name}/{suffix}"
        asked = self._report.asking(node, "lock", lease=lease_id)
        txn = _enqueue_txn(self.name, key, self.owner_prefix + suffix, self.owner, lease_id)
        try:
            reply = self.gateway.call("/v3/kv/txn", txn, sent=asked.call)
        except BackendUnavailable as exc:
            self._report.reply(asked.call(), node, "lock", False, error=exc.detail)
            return None, None, exc.detail
        call = asked.call()
        if "error" in reply:  # e.g. "etcdserver: requested lease not found"
            self._report.reply(call, node, "lock", False, error=str(reply["error"]))
            return None, None, str(reply["error"])
        responses = reply["responses"]
        if reply.get("succeeded"):  # created now: its create revision is this revision
            mine = int(reply["header"]["revision"])
        else:  # already queued with this lease (cannot happen with a fresh lease)
            mine = int(responses[0]["response_range"]["kvs"][0]["create_revision"])
        head = responses[-1]["response_range"].get("kvs") or [{}]
        if int(head[0].get("create_revision", mine)) == mine:
            self._report.reply(call, node, "lock", True, value=key, token=mine)
            return key, mine, None
        # Keys ahead of ours: etcd's lock service answers when every one of them is gone.
        remaining_ms = max(1, (deadline_ns - self.clock.monotonic_ns()) // 1_000_000)
        body = {"name": b64(self.name), "lease": lease_id}
        waiting = KeepAliveWhileWaiting(self, lease_id)
        try:
            reply = self.gateway.call("/v3/lock/lock", body, timeout_ms=remaining_ms)
        except BackendUnavailable as exc:
            timed_out = self.clock.monotonic_ns() >= deadline_ns
            reason = f"timed out after {wait_ms} ms" if timed_out else exc.detail
            self._report.reply(call, node, "lock", False, error=reason)
            return None, None, reason
        finally:
            waiting.stop()
        if "error" in reply:
            self._report.reply(call, node, "lock", False, error=reply["error"])
            return None, None, str(reply["error"])
        key = unb64(reply["key"])
        self._report.reply(call, node, "lock", True, value=key)
        return key, None, None

    def _claim(self, lease_id: str, key: str) -> int | None:
        """After a wait: if our key still exists, record the owner, read its create revision."""
        exists = {"key": b64(key), "target": "CREATE", "result": "GREATER", "create_revision": "0"}
        claimed = self._tag_owner(lease_id, key, exists, "the lock key is gone", reads=True)
        if claimed is None:
            return None
        call, reply = claimed
        kv = reply["responses"][1]["response_range"]["kvs"][0]
        token = int(kv["create_revision"])
        self._report.reply(call, self.node, "claim", True, token=token)
        return token

    def _tag_owner(
        self, lease_id: str, key: str, compare: dict[str, Any], gone: str, reads: bool = False
    ) -> tuple[int, dict[str, Any]] | None:
        """Write the owner's name beside ``key`` (in our lease) if ``compare`` holds, and read
        ``key`` back when ``reads``: the call and etcd's reply, or ``None`` when it failed (a
        failed compare is reported here, as ``gone``)."""
        owner_key = self.owner_prefix + key.rsplit("/", 1)[-1]
        tag = {"key": b64(owner_key), "value": b64(self.owner), "lease": lease_id}
        success: list[dict[str, Any]] = [{"request_put": tag}]
        if reads:
            success.append({"request_range": {"key": b64(key)}})
        txn = {"compare": [compare], "success": success}
        call, reply = self._call("claim", "/v3/kv/txn", txn, value=key)
        if reply is None:
            return None
        if not reply.get("succeeded"):
            self._report.reply(call, self.node, "claim", False, reason=gone)
            return None
        return call, reply

    # -- release, extend ----------------------------------------------------------------------

    def release(self) -> bool:
        """Delete our lock key, then revoke the lease. ``False`` when the key was already gone.

        The unlock is the delete that etcd's ``/v3/lock/unlock`` performs, sent as a plain
        ``deleterange`` because only that answers *whether* the key was still there (the lock
        service answers OK either way). ``released`` follows the delete at once: the next
        waiter is granted the moment the key goes, so the belief must end there, not after
        the revoke.
        """
        grant = self._held()
        lease_id = self.lease_id or ""
        self.grant = self.lease_id = None
        body = {"key": b64(grant.value)}
        call, reply = self._call("unlock", "/v3/kv/deleterange", body, value=grant.value)
        if reply is None:
            self._report.emit("released", ok=False, reason="no answer to the unlock")
            return False
        ok = int(reply.get("deleted", 0)) == 1
        reason = {} if ok else {"reason": "the key was gone: the lease had expired"}
        self._report.reply(call, self.node, "unlock", ok, **reason)
        self._report.emit("released", ok=ok, **reason)
        self._revoke(lease_id)  # the lease's other key (the owner's name) goes with it
        return ok

    def extend(self, ttl_ms: int | None = None) -> bool:
        """One keepalive: the lease runs its full TTL again. ``False`` (and ``lost``) if gone;
        ``False`` alone when no member answered (the lease may live: it is not known).

        etcd renews a lease to the TTL it was granted with; ``ttl_ms`` cannot change it.
        """
        self._held()
        alive = self._keepalive(self.lease_id or "")
        self._report.emit("extended", ok=bool(alive), ttl_ms=self.ttl_s * 1000)
        if alive is False:
            self.grant = self.lease_id = None
            self._report.emit("lost", reason="keepalive refused: the lease had already expired")
        return bool(alive)

    def sequencer(self) -> Sequencer | None:
        """Our lock key, its create revision and our lease: the lock is ours while the lease
        lives and the key is still the one this grant created."""
        grant = self.grant
        if grant is None:
            return None
        return Sequencer(
            "etcd", self.name, grant.value, self.owner, grant.token, lease=self.lease_id
        )

    def close(self) -> None:
        """Close the connection. A lock still held stays held on the server until its lease
        runs out, as when a process exits."""
        self.gateway.close()

    # -- the calls shared by the verbs --------------------------------------------------------

    def _call(
        self,
        op: str,
        path: str,
        body: Mapping[str, object],
        via: Gateway | None = None,
        **args: object,
    ) -> tuple[int, dict[str, Any] | None]:
        """Make the request and report it (as it is on its way: its event is encoded while the
        member works on it); a failure is reported here and answers ``None``."""
        gateway = via or self.gateway
        node = gateway.node  # the member asked (a failure moves the gateway on to the next)
        asked = self._report.asking(node, op, **args)
        try:
            reply = gateway.call(path, body, sent=asked.call)
        except BackendUnavailable as exc:  # reported (if it was not sent), then its failure
            self._report.reply(asked.call(), node, op, False, error=exc.detail)
            return asked.call(), None
        call = asked.call()
        if "error" in reply:  # etcd's own words, e.g. "etcdserver: requested lease not found"
            self._report.reply(call, node, op, False, error=str(reply["error"]))
            return call, None
        return call, reply

    def _keepalive(self, lease_id: str, via: Gateway | None = None) -> bool | None:
        """One lease keepalive: ``True`` when the lease lives, ``False`` when etcd says it is
        gone, ``None`` when no answer came (no member reached, or a cluster with no leader)."""
        call, reply = self._call(
            "keepalive", "/v3/lease/keepalive", {"ID": lease_id}, via, lease=lease_id
        )
        if reply is None:
            return None
        ttl_s = int(reply.get("result", {}).get("TTL", 0))  # a lease not found has no TTL
        node = (via or self.gateway).node  # answered: the member it asked
        if ttl_s <= 0:
            self._report.reply(call, node, "keepalive", False, reason="lease not found")
            return False
        self._report.reply(call, node, "keepalive", True, ttl_ms=ttl_s * 1000)
        return True

    def _revoke(self, lease_id: str) -> None:
        call, reply = self._call("revoke", "/v3/lease/revoke", {"ID": lease_id}, lease=lease_id)
        if reply is not None:
            self._report.reply(call, self.node, "revoke", True)

    def _held(self) -> Grant:
        if self.grant is None:
            raise NotHeld(f"{self.owner} holds no lock on {self.node}")
        return self.grant


class KeepAliveWhileWaiting:
    """Keeps a queued lease alive every TTL/3 while the lock call blocks."""

    def __init__(self, lock: EtcdLock, lease_id: str) -> None:
        self._stop = threading.Event()
        self._interval_s = lock.ttl_s / 3
        self._thread = threading.Thread(target=self._run, args=(lock, lease_id), daemon=True)
        self._thread.start()

    def _run(self, lock: EtcdLock, lease_id: str) -> None:
        # The lock call holds the lock's connection while it blocks: this thread needs its own.
        gateway = lock.gateway.copy()
        try:
            while not self._stop.wait(self._interval_s):
                if lock._keepalive(lease_id, gateway) is False:  # gone; no answer: again
                    return
        finally:
            gateway.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=self._interval_s + 2)


def _enqueue_txn(
    name: str, key: str, owner_key: str, owner: str, lease_id: str
) -> dict[str, object]:
    """etcd's ``concurrency.Mutex`` first step, with the owner's name recorded in it.

    If our key does not exist yet: create it and the owner's key under our lease, then read the
    head of the queue (the key on ``name/`` with the lowest create revision). Otherwise read our
    key and the head. One write either way: holding at once costs one request, not three.
    """
    prefix = name + "/"
    head = {
        "key": b64(prefix),
        "range_end": b64(prefix[:-1] + chr(ord(prefix[-1]) + 1)),
        "sort_order": "ASCEND",
        "sort_target": "CREATE",
        "limit": 1,
    }
    free = {"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": "0"}
    return {
        "compare": [free],
        "success": [
            {"request_put": {"key": b64(key), "value": "", "lease": lease_id}},
            {"request_put": {"key": b64(owner_key), "value": b64(owner), "lease": lease_id}},
            {"request_range": head},
        ],
        "failure": [{"request_range": {"key": b64(key)}}, {"request_range": head}],
    }
