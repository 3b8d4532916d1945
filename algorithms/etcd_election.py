"""Leader election on etcd's election API: campaign, leader, proclaim, resign, with an epoch.

etcd serves an election service in its v3 JSON gateway (``/v3/election/...``; the same one its
Go client's ``concurrency.Election`` is). A candidate:

1. ``lease_grant``: a lease (whole seconds, at least 2 s, as :mod:`algorithms.etcd_lock`).
2. ``campaign`` (``/v3/election/campaign``): etcd puts the candidate's key ``<name>/<lease in
   hex>`` under its lease, with the candidate's name as its value, and answers only when every
   key with a lower create revision is gone: the candidate then leads. The call *blocks* while
   another leads: that is how a follower watches the leader (its HTTP timeout is the wait). A
   thread keeps the lease alive while it waits, as etcd's own client sessions do.
3. ``claim``: one transaction that, if the key is still the one the campaign created (its create
   revision), records the owner's name beside it under the same lease (the lab's watcher reads
   it) and so proves the key outlived the wait: etcd 3.4.23 answers a campaign when the keys
   ahead are gone even if the candidate's own lease ran out meanwhile (the lock service's bug,
   etcd issue #11456, is in the same wait).

The leader's **epoch** is its key's create revision (the ``rev`` of etcd's ``LeaderKey``):
etcd's revision is one counter for the whole cluster and a later leader's key was created after
an earlier one's, so epochs increase with every new leader. It is the grant's token: a resource
that keeps the highest epoch it has seen refuses a deposed leader (fencing).

``leader()`` asks ``/v3/election/leader`` (the key with the lowest create revision: its value is
the leader's name, its create revision the epoch); ``proclaim(value)`` (``/v3/election/proclaim``)
updates the leader's value *only if* the key is still the one it created: etcd itself refuses a
deposed leader's proclaim with "election: not leader". Only what goes through etcd is checked
that way; a deposed leader's write to anything else is not.

Release is the resignation: the transaction etcd's ``/v3/election/resign`` runs (delete the key
if its create revision is still ours), made directly because etcd 3.4.23's resign answers OK
whether or not the key was still ours (measured: it does not look at the transaction's outcome),
and ``released`` must say whether it was; then the lease is revoked.

Guarantees, assumptions and failures are the lease lock's (:mod:`algorithms.etcd_lock`): at most
one leader *on the server*; a leader frozen past its lease is deposed without knowing it and
wakes up acting as the leader, with its old epoch; only an epoch check at the resource stops it.
"""

from __future__ import annotations

from algorithms.errors import BackendUnavailable
from algorithms.etcd_gateway import b64, unb64
from algorithms.etcd_lock import EtcdLock, KeepAliveWhileWaiting
from algorithms.lock import Grant, Leader


class EtcdElection(EtcdLock):
    """A candidate in an etcd election; verbs like ``threading.Lock`` (acquire campaigns)."""

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Campaign until elected or ``timeout_ms`` has passed; ``None`` if not elected."""
        wait_ms = max(timeout_ms, self.gateway.timeout_ms)
        lease = self._lease_grant()
        if lease is None:
            self._report.emit("acquire_failed", reason="no lease")
            return None
        lease_id, ttl_s = lease
        key, epoch, failure = self._campaign(lease_id, wait_ms)
        if key is not None and epoch is not None and not self._claim_key(lease_id, key, epoch):
            failure = "our key was gone: the lease expired while we waited"
            key = None
        if key is None or epoch is None:
            self._revoke(lease_id)  # leaves the election: the lease owned our key
            self._report.emit("acquire_failed", reason=failure or "not elected")
            return None
        self.lease_id = lease_id
        self.grant = Grant(epoch, key, ttl_s * 1000, self.node, self.clock.monotonic_ns())
        self._report.emit("granted", node=self.node, token=epoch, ttl_ms=ttl_s * 1000, value=key)
        return self.grant

    def _campaign(self, lease_id: str, wait_ms: int) -> tuple[str | None, int | None, str]:
        """``(our key, epoch, "")`` once elected, or ``(None, None, why)``."""
        call = self._report.request(self.node, "campaign", lease=lease_id, wait_ms=wait_ms)
        body = {"name": b64(self.name), "lease": lease_id, "value": b64(self.owner)}
        deadline = self.clock.monotonic_ns() + wait_ms * 1_000_000
        waiting = KeepAliveWhileWaiting(self, lease_id)
        try:
            reply = self.gateway.call("/v3/election/campaign", body, timeout_ms=wait_ms)
        except BackendUnavailable as exc:  # the wait ran out (etcd resigns for us), or etcd is gone
            timed_out = self.clock.monotonic_ns() >= deadline
            reason = f"timed out after {wait_ms} ms" if timed_out else exc.detail
            self._report.reply(call, self.node, "campaign", False, error=reason)
            return None, None, reason
        finally:
            waiting.stop()
        if "error" in reply:
            self._report.reply(call, self.node, "campaign", False, error=str(reply["error"]))
            return None, None, str(reply["error"])
        leader = reply["leader"]
        key, epoch = unb64(leader["key"]), int(leader["rev"])
        self._report.reply(call, self.node, "campaign", True, value=key, token=epoch)
        return key, epoch, ""

    def _claim_key(self, lease_id: str, key: str, epoch: int) -> bool:
        """Record the owner's name beside our key, if the key is still the one we created."""
        ours = {"key": b64(key), "target": "CREATE", "result": "EQUAL", "create_revision": epoch}
        claimed = self._tag_owner(lease_id, key, ours, "the leader key is gone")
        if claimed is None:
            return False
        self._report.reply(claimed[0], self.node, "claim", True, token=epoch)
        return True

    def release(self) -> bool:
        """Resign: delete our key if it is still the one we created, then revoke the lease.
        ``False`` when it was gone (the lease had expired: someone else may lead now)."""
        grant = self._held()
        lease_id = self.lease_id or ""
        self.grant = self.lease_id = None
        ours = {"key": b64(grant.value), "target": "CREATE", "result": "EQUAL"}
        ours["create_revision"] = str(grant.token)
        txn = {"compare": [ours], "success": [{"request_delete_range": {"key": b64(grant.value)}}]}
        call, reply = self._call("resign", "/v3/kv/txn", txn, value=grant.value)
        if reply is None:
            self._report.emit("released", ok=False, reason="no answer to the resignation")
            return False
        ok = bool(reply.get("succeeded"))
        reason = {} if ok else {"reason": "the key was gone: the lease had expired"}
        self._report.reply(call, self.node, "resign", ok, **reason)
        self._report.emit("released", ok=ok, **reason)
        self._revoke(lease_id)
        return ok

    def leader(self) -> Leader | None:
        """Who leads, as etcd answers ``/v3/election/leader`` (``None``: nobody, or no answer)."""
        call, reply = self._call("leader", "/v3/election/leader", {"name": b64(self.name)})
        if reply is None:
            return None
        kv = reply.get("kv") or {}
        if not kv:
            self._report.reply(call, self.node, "leader", False, reason="no leader")
            return None
        found = Leader(unb64(kv.get("value", "")), int(kv["create_revision"]))
        self._report.reply(call, self.node, "leader", True, value=found.name, token=found.epoch)
        return found

    def proclaim(self, value: str) -> bool:
        """Announce ``value`` as the leader's; etcd refuses it unless we still lead."""
        grant = self._held()
        leader = {
            "name": b64(self.name),
            "key": b64(grant.value),
            "rev": str(grant.token),
            "lease": self.lease_id or "0",
        }
        body = {"leader": leader, "value": b64(value)}
        call, reply = self._call("proclaim", "/v3/election/proclaim", body, value=value)
        if reply is None:
            return False
        self._report.reply(call, self.node, "proclaim", True)
        return True
