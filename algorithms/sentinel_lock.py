"""Redis's single-node lock on whichever node Sentinel names the primary: replicated, and not safe.

The client finds the primary as redis-py's ``Sentinel.discover_master`` does: it asks each
Sentinel in turn for the service (``SENTINEL MASTERS``), takes the first answer that names a
primary no Sentinel has flagged down (``check_master_state``: a master, not ``s_down``, not
``o_down``), and swaps that Sentinel to the front of its list. Then it talks to that node, as
redis-py's ``SentinelManagedConnection`` does, until a call fails or the node answers that it is
a replica now (``READONLY``); the next call asks the Sentinels again. On the primary it runs the
single-node lock of :mod:`algorithms.redis_lock` unchanged: ``SET NX PX`` with an ``INCR``
fencing token in one script, compare-and-delete, compare-and-``PEXPIRE``.

With ``wait_replicas`` (the variant ``wait``) a grant stands only once that many replicas have
acknowledged it (``WAIT n timeout``, sent right behind the script): fewer, and the client deletes
its key again (compare-and-delete) and the attempt counts as refused.

Guarantees (only while no failover happens): those of :mod:`algorithms.redis_lock` on the node
that is primary: one holder at a time, tokens in grant order, release and extend of our own key
only.

Assumes that the primary keeps what it granted: that its replicas have the key before it dies.
Replication is asynchronous: the primary answers the client first and sends the write to its
replicas after.

Fails by (Redis's own documentation, "Distributed locks with Redis", says so first):
  * A failover after a grant that no replica had received: Sentinel promotes a replica that never
    saw the key, and the next client is granted the same lock: two holders. The fencing counter
    lived on the same primary and goes back with it: the new holder's ``INCR`` gives a token the
    old holder already has (or a lower one), so a storage that rejects only *lower* tokens
    accepts both. A token from a service that agrees by consensus (a ZooKeeper czxid, an etcd
    revision) never goes back.
  * ``WAIT`` narrows this and does not close it: it says how many replicas have the key, not which
    one Sentinel will promote (Sentinel picks by ``replica-priority``, then by how much data a
    replica has), and a replica that acknowledged can still lose the write (it restarts without
    persistence, or is cut off and never promoted).
  * A partition that leaves the old primary with some clients: Sentinel promotes a replica on the
    majority's side, and the old primary goes on granting to the clients that still reach it
    until the partition heals and Sentinel turns it into a replica (its keys are then thrown
    away). ``min-replicas-to-write`` makes it refuse writes (``NOREPLICAS``) once no replica has
    acknowledged for ``min-replicas-max-lag`` seconds: it bounds how long the old primary grants,
    not how long the locks it granted before that are believed.
  * Everything :mod:`algorithms.redis_lock` fails by (a paused holder, a lease that ends early).

One module past the usual ~300 lines, on purpose: finding the primary, the single-node lock on
it, WAIT, and asking again after a failover are the steps of one protocol, read in this order.
"""

from __future__ import annotations

import secrets
import select
from collections.abc import Callable, Mapping
from typing import Any

import redis

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.events import EventSink, discard
from algorithms.lock import Grant, LockBase
from algorithms.redis_client import boundary
from algorithms.redis_lock import ACQUIRE_SCRIPT, EXTEND_SCRIPT, RELEASE_SCRIPT, _sha
from algorithms.resp import ReplyError, RespConnection, pack
from algorithms.sequencer import Sequencer

# Error replies that are answers, not bugs: the node is a replica now (after a failover it was
# demoted), or it is a primary that has heard from too few replicas (min-replicas-to-write).
REFUSALS = ("READONLY", "NOREPLICAS")

# What a script call gives back: its reply, or (a ``str``) the words of a refusal or a failure,
# already reported as the call's reply.
_Answer = int | str | None


def usable(state: Mapping[str, Any], min_other_sentinels: int = 0) -> bool:
    """Whether a Sentinel's view of the service names a usable primary: redis-py's
    ``Sentinel.check_master_state``, word for word."""
    if not state["is_master"] or state["is_sdown"] or state["is_odown"]:
        return False
    return int(state["num-other-sentinels"]) >= min_other_sentinels


class SentinelLock(LockBase):
    """The single-node Redis lock, on the primary Sentinel names; verbs like ``threading.Lock``.

    ``sentinels``: each Sentinel's client (redis-py, explicit timeouts, no retries), in the
    order to ask them; ``nodes``: a connection to each Redis node; ``announced``: the address
    Sentinel gives for each node (``"127.0.0.1:port"``) -> the node's name in ``nodes``.
    """

    def __init__(
        self,
        sentinels: Mapping[str, redis.Redis],
        nodes: Mapping[str, RespConnection],
        name: str,
        *,
        owner: str,
        ttl_ms: int,
        service: str,
        announced: Mapping[str, str],
        wait_replicas: int = 0,
        wait_timeout_ms: int = 500,
        clock: Clock | None = None,
        on_event: EventSink = discard,
        retry_delay_ms: int = 100,
    ) -> None:
        super().__init__(owner, clock, on_event)
        self.sentinels = list(sentinels.items())
        self.nodes = dict(nodes)
        self.name = name
        self.fence_key = f"{name}:fence"
        self.ttl_ms = ttl_ms
        self.service = service
        self.announced = dict(announced)
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self.retry_delay_ms = retry_delay_ms
        self.primary: str | None = None  # the node this client talks to, until it fails

    def prepare(self) -> None:
        """Connect to every Sentinel and node now, and load the scripts on every node (a node
        that does not answer is left for later): each step is then one round trip."""
        for sentinel_name, client in self.sentinels:
            try:
                with boundary(sentinel_name):
                    client.ping()
            except BackendUnavailable:
                continue
        for connection in self.nodes.values():
            for script in (ACQUIRE_SCRIPT, RELEASE_SCRIPT, EXTEND_SCRIPT):
                try:
                    connection.call(pack("SCRIPT", "LOAD", script))
                except BackendUnavailable:
                    break

    # -- finding the primary ------------------------------------------------------------------

    def discover(self) -> str | None:
        """Ask the Sentinels, in order, which node is primary (see the module docstring)."""
        for index, (sentinel_name, client) in enumerate(self.sentinels):
            call = self._report.request(sentinel_name, "discover", key=self.service)
            try:
                with boundary(sentinel_name):
                    masters = client.sentinel_masters()
                state = masters.get(self.service) if isinstance(masters, dict) else None
            except BackendUnavailable as exc:
                self._report.reply(call, sentinel_name, "discover", False, error=exc.detail)
                continue
            node = self.announced.get(f"{state['ip']}:{state['port']}") if state else None
            if state is None or node is None or not usable(state):
                why = _unusable(state, node)
                self._report.reply(call, sentinel_name, "discover", False, reason=why)
                continue
            self._report.reply(call, sentinel_name, "discover", True, primary=node)
            if index:  # the Sentinel that answered is asked first next time: swapped, as redis-py
                self.sentinels[0], self.sentinels[index] = self.sentinels[index], self.sentinels[0]
            self.primary = node
            return node
        return None

    # -- acquire, release, extend -------------------------------------------------------------

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Try until granted or ``timeout_ms`` has passed; ``None`` if not granted."""
        value = f"{self.owner}:{secrets.token_hex(6)}"
        deadline = self.clock.monotonic_ns() + timeout_ms * 1_000_000
        while True:
            node = self.primary or self.discover()
            token = self._attempt(node, value) if node is not None else None
            if node is not None and token is not None and self._replicated(node, value):
                self.grant = Grant(token, value, self.ttl_ms, node, self.clock.monotonic_ns())
                self._report.emit(
                    "granted", node=node, token=token, ttl_ms=self.ttl_ms, value=value
                )
                return self.grant
            if self.clock.monotonic_ns() >= deadline:
                self._report.emit("acquire_failed", reason=f"timed out after {timeout_ms} ms")
                return None
            self.clock.sleep(self.retry_delay_ms / 1000)

    def _attempt(self, node: str, value: str) -> int | None:
        call = self._report.request(node, "acquire", ttl_ms=self.ttl_ms)
        answer = self._script(node, call, "acquire", ACQUIRE_SCRIPT, self.name, self.fence_key)(
            value, self.ttl_ms
        )
        if isinstance(answer, str):  # refused or failed: already reported
            return None
        if answer is None:
            self._report.reply(call, node, "acquire", False, reason="held by another")
            return None
        self._report.reply(call, node, "acquire", True, token=int(answer))
        return int(answer)

    def _replicated(self, node: str, value: str) -> bool:
        """With ``wait_replicas``: whether that many replicas acknowledged the grant (``WAIT``);
        if not, the key is deleted again and the grant does not stand."""
        if not self.wait_replicas:
            return True
        n, timeout = self.wait_replicas, self.wait_timeout_ms
        call = self._report.request(node, "wait", numreplicas=n, wait_ms=timeout)
        try:
            acked = _fresh(self.nodes[node]).call(pack("WAIT", n, timeout))
        except BackendUnavailable as exc:
            self._report.reply(call, node, "wait", False, error=exc.detail)
            self.primary = None
            return False
        if not isinstance(acked, int):
            self._report.reply(call, node, "wait", False, error=str(acked))
            return False
        if acked >= n:
            self._report.reply(call, node, "wait", True, acked=acked)
            return True
        why = f"only {acked} of {n} replicas acknowledged within {timeout} ms"
        self._report.reply(call, node, "wait", False, acked=acked, reason=why)
        undo = self._report.request(node, "release", why="not replicated")
        removed = self._script(node, undo, "release", RELEASE_SCRIPT, self.name)(value)
        if not isinstance(removed, str):
            self._report.reply(undo, node, "release", bool(removed))
        return False

    def release(self) -> bool:
        """Give the lock up on the primary. ``False`` when the key there is not ours (after a
        failover the new primary never had it, or gave it to another) or no primary answered."""
        grant = self._held()
        self.grant = None
        removed, _ = self._on_primary("release", RELEASE_SCRIPT, grant, (grant.value,))
        if isinstance(removed, str):
            self._report.emit("released", ok=False, reason=removed)
            return False
        ok = bool(removed)
        self._report.emit("released", ok=ok, **({} if ok else {"reason": "not the owner any more"}))
        return ok

    def extend(self, ttl_ms: int | None = None) -> bool:
        """Prolong our lease to ``ttl_ms`` from now on the primary. ``False`` (and ``lost``) when
        the key there is gone or the node refuses the write; ``False`` alone when no primary
        answered (the lease may still live: it is not known)."""
        grant = self._held()
        ttl = ttl_ms or self.ttl_ms
        answer, _ = self._on_primary("extend", EXTEND_SCRIPT, grant, (grant.value, ttl), ttl)
        if isinstance(answer, str) and not answer.startswith(REFUSALS):
            self._report.emit("extended", ok=False, ttl_ms=ttl)
            return False
        ok = not isinstance(answer, str) and bool(answer)
        self._report.emit("extended", ok=ok, ttl_ms=ttl)
        if not ok:
            self.grant = None
            why = answer if isinstance(answer, str) else "the key is gone on the primary"
            self._report.emit("lost", reason=f"extend refused: {why}")
        return ok

    def _on_primary(
        self, op: str, script: str, grant: Grant, args: tuple[str | int, ...], ttl: int = 0
    ) -> tuple[_Answer, str]:
        """Run ``script`` on the node this client takes for the primary; if that node does not
        answer, or answers that it is a replica now, ask the Sentinels once and run it on the
        primary they name (each call reported: nothing is retried out of sight). The reply (or
        the words of a refusal or a failure) and the node that gave it."""
        node = self.primary or self.discover() or grant.node
        answer = self._one(op, node, script, args, ttl)
        if isinstance(answer, str) and self.primary is None:  # failed, or a replica now
            found = self.discover()
            if found is not None and found != node:
                node, answer = found, self._one(op, found, script, args, ttl)
        return answer, node

    def _one(
        self, op: str, node: str, script: str, args: tuple[str | int, ...], ttl: int
    ) -> _Answer:
        call = self._report.request(node, op, **({"ttl_ms": ttl} if ttl else {}))
        answer = self._script(node, call, op, script, self.name)(*args)
        if not isinstance(answer, str):
            ok = bool(answer)
            reason = {} if ok or op != "release" else {"reason": "not the owner any more"}
            self._report.reply(call, node, op, ok, **reason)
        return answer

    def sequencer(self) -> Sequencer | None:
        """None: a storage cannot ask this lock about a writer (see the catalogue's words)."""
        return None

    def close(self) -> None:
        for connection in self.nodes.values():
            connection.close()
        for _, client in self.sentinels:
            client.close()

    # -- the calls ----------------------------------------------------------------------------

    def _script(
        self, node: str, call: int, op: str, script: str, *keys: str
    ) -> Callable[..., _Answer]:
        """A script on ``node`` by its SHA1, as a function of its arguments. Its reply, or the
        words of a refusal or a failure (a ``str``), already reported as the call's reply; a
        node that failed, or answered that it is a replica now, is not asked again before the
        Sentinels are."""

        def run(*args: str | int) -> _Answer:
            connection = _fresh(self.nodes[node])
            try:
                reply = connection.call(pack("EVALSHA", _sha(script), len(keys), *keys, *args))
                if isinstance(reply, ReplyError) and reply.startswith("NOSCRIPT"):
                    reply = connection.call(pack("EVAL", script, len(keys), *keys, *args))
            except BackendUnavailable as exc:
                self._report.reply(call, node, op, False, error=exc.detail)
                self.primary = None
                return exc.detail
            if isinstance(reply, ReplyError):
                if not reply.startswith(REFUSALS):
                    raise redis.ResponseError(reply)  # a bug in a script, not an answer
                words = reply.split(" script: ")[0]
                self._report.reply(call, node, op, False, reason=words)
                if reply.startswith("READONLY"):  # a replica now: redis-py asks again too
                    self.primary = None
                return words
            return reply

        return run

    def _held(self) -> Grant:
        if self.grant is None:
            raise NotHeld(f"{self.owner} holds no lock")
        return self.grant


def _fresh(connection: RespConnection) -> RespConnection:
    """The connection, closed first if the node closed it while it was idle (an idle connection
    has nothing to read: readable means closed). Sentinel closes every client of a node whose
    role it changes (``CLIENT KILL TYPE normal``), so that they ask again; redis-py's pool checks
    a connection the same way before it hands it out. The next call then opens a new one: no
    request is ever sent on a connection known to be dead."""
    sock = connection.sock
    if sock is not None and select.select([sock], [], [], 0)[0]:
        connection.close()
    return connection


def _unusable(state: Mapping[str, Any] | None, node: str | None) -> str:
    """Why a Sentinel's answer names no primary to use."""
    if state is None:
        return "it does not know the service"
    if node is None:
        return f"it names {state['ip']}:{state['port']}, which is none of the nodes"
    flags = [word for key, word in (("is_sdown", "s_down"), ("is_odown", "o_down")) if state[key]]
    return f"it names {node}, flagged {' and '.join(flags)}" if flags else f"{node} is no master"
