"""A lock on a single Redis node: ``SET key value NX PX ttl``, with a fencing token.

Guarantees (only while its assumptions hold):
  * At most one client holds an unexpired lease on the key at any instant *on the server*.
  * Every grant comes with a fencing token from ``INCR`` in the same Lua script as the ``SET``,
    so tokens are strictly increasing in grant order, and a resource that remembers the highest
    token it has seen can refuse the writes of a holder whose lease has already been reused.
  * ``release`` and ``extend`` compare the stored value with this client's random value, so a
    client can never delete or prolong someone else's lease (unless ``unsafe_release`` is set,
    the classic bug: a plain ``DEL``).

Assumes:
  * The single Redis node does not lose the key (no crash without fsync, no failover).
  * The server's clock advances at the normal rate: a forward jump expires leases early.
  * The client finishes its work before the lease ends. Nothing here can stop a paused client
    (GC, page fault, SIGSTOP) from waking after its lease expired and acting as the holder:
    the lock cannot know, the client cannot know. Only fencing at the resource saves the data.

Fails by:
  * Lease expiry while the holder still believes it holds the lock: two "holders" at once.
  * With ``expire=False`` (the naive SETNX lock) there is no lease at all: a holder that crashes
    holds the lock forever and every other client waits forever.
  * Node crash or restart without persistence: the key is gone, a second client is granted.

Performance: each step is one round trip on the lock's own bare connection
(:mod:`algorithms.resp`, opened to the address of the ``redis.Redis`` it is given, with that
client's timeout), the script called by its SHA1. Through redis-py the Python around each
command cost as much as the round trip; see docs/performance.md.
"""

from __future__ import annotations

import functools
import hashlib
import secrets

import redis

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.events import EventSink, discard
from algorithms.lock import Grant, LockBase
from algorithms.resp import ReplyError, RespConnection, pack
from algorithms.sequencer import Sequencer

# KEYS[1] lock key, KEYS[2] fencing counter; ARGV[1] holder's random value, ARGV[2] lease ms.
# Returns the new fencing token, or nil when the lock is held. The INCR runs in the same script
# as the SET so no other grant can come between them: token order is grant order.
ACQUIRE_SCRIPT = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return redis.call('INCR', KEYS[2])
end
return false
"""

# The naive lock (variant "no_ttl"): SETNX with no expiry. Same contract as ACQUIRE_SCRIPT without
# ARGV[2]. A holder that crashes never releases it: everyone else waits forever.
ACQUIRE_NO_TTL_SCRIPT = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
    return redis.call('INCR', KEYS[2])
end
return false
"""

# KEYS[1] lock key; ARGV[1] holder's random value. Deletes the key only if it is still ours.
RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
"""

# KEYS[1] lock key; ARGV[1] holder's random value, ARGV[2] new lease ms. Prolongs only our lease.
EXTEND_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""


class RedisLock(LockBase):
    """A lease-based lock on one Redis node; verbs like ``threading.Lock``."""

    def __init__(
        self,
        client: redis.Redis,
        name: str,
        *,
        owner: str,
        ttl_ms: int,
        node: str = "redis-1",
        clock: Clock | None = None,
        on_event: EventSink = discard,
        unsafe_release: bool = False,
        expire: bool = True,
        retry_delay_ms: int = 100,
    ) -> None:
        super().__init__(owner, clock, on_event)
        self.client = client
        self.name = name
        self.fence_key = f"{name}:fence"
        self.ttl_ms = ttl_ms
        self.node = node
        self.unsafe_release = unsafe_release
        self.expire = expire
        self.retry_delay_ms = retry_delay_ms
        # The lock's own connection to the client's node (see algorithms.resp: redis-py's
        # per-command overhead was as large as the round trip), with the client's timeout.
        kwargs = client.connection_pool.connection_kwargs
        self.connection = RespConnection(
            kwargs.get("host", "localhost"),
            int(kwargs.get("port", 6379)),
            timeout_ms=round(1000 * (kwargs.get("socket_timeout") or 1.0)),
            node=node,
            password=kwargs.get("password"),
        )
        self._acquire_script = ACQUIRE_SCRIPT if expire else ACQUIRE_NO_TTL_SCRIPT

    def prepare(self) -> None:
        """Connect and load the scripts now, so each later step is exactly one round trip."""
        for script in (self._acquire_script, RELEASE_SCRIPT, EXTEND_SCRIPT):
            reply = self.connection.call(pack("SCRIPT", "LOAD", script))
            if isinstance(reply, ReplyError):
                raise redis.ResponseError(reply)

    def _script(self, script: str, keys: list[str], *args: str | int) -> str | int | None:
        """Run a script by its SHA1 (loaded once per server): one round trip.

        A server that restarted or flushed its scripts answers NOSCRIPT; the script is then
        sent whole (EVAL also caches it), so only that call costs more.
        """
        reply = self.connection.call(pack("EVALSHA", _sha(script), len(keys), *keys, *args))
        if isinstance(reply, ReplyError) and reply.startswith("NOSCRIPT"):
            reply = self.connection.call(pack("EVAL", script, len(keys), *keys, *args))
        if isinstance(reply, ReplyError):
            raise redis.ResponseError(reply)  # a bug in a script, not a node failure
        return reply

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Try until granted or ``timeout_ms`` has passed; ``None`` if not granted."""
        value = f"{self.owner}:{secrets.token_hex(6)}"
        deadline = self.clock.monotonic_ns() + timeout_ms * 1_000_000
        while True:
            token = self._attempt(value)
            if token is not None:
                self.grant = Grant(token, value, self.ttl_ms, self.node, self.clock.monotonic_ns())
                ttl = self.ttl_ms if self.expire else None
                self._report.emit("granted", node=self.node, token=token, ttl_ms=ttl, value=value)
                return self.grant
            if self.clock.monotonic_ns() >= deadline:
                self._report.emit("acquire_failed", reason=f"timed out after {timeout_ms} ms")
                return None
            self.clock.sleep(self.retry_delay_ms / 1000)

    def _attempt(self, value: str) -> int | None:
        lease = {"ttl_ms": self.ttl_ms} if self.expire else {"ttl_ms": None}
        call = self._report.request(self.node, "acquire", **lease)
        try:
            token = self.do_acquire(value)
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "acquire", False, error=exc.detail)
            return None
        if token is None:
            self._report.reply(call, self.node, "acquire", False, reason="held by another")
        else:
            self._report.reply(call, self.node, "acquire", True, token=token)
        return token

    def do_acquire(self, value: str) -> int | None:
        """One atomic attempt: the new fencing token, or ``None`` if the key is taken."""
        keys = [self.name, self.fence_key]
        if self.expire:
            token = self._script(self._acquire_script, keys, value, self.ttl_ms)
        else:
            token = self._script(self._acquire_script, keys, value)
        return None if token is None else int(token)

    def release(self) -> bool:
        """Give the lock up. ``False`` when the server no longer had our lease."""
        grant = self._held()
        self.grant = None
        call = self._report.request(self.node, "release", unsafe=self.unsafe_release)
        try:
            if self.unsafe_release:  # the bug: deletes whoever holds it now
                removed = self.connection.call(pack("DEL", self.name))
            else:
                removed = self._script(RELEASE_SCRIPT, [self.name], grant.value)
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "release", False, error=exc.detail)
            self._report.emit("released", ok=False, reason=exc.detail)
            return False
        ok = bool(removed)
        reason = {} if ok else {"reason": "not the owner any more"}
        self._report.reply(call, self.node, "release", ok, **reason)
        self._report.emit("released", ok=ok, **reason)
        return ok

    def extend(self, ttl_ms: int | None = None) -> bool:
        """Prolong our lease to ``ttl_ms`` from now. ``False`` (and ``lost``) if it is gone."""
        grant = self._held()
        ttl = ttl_ms or self.ttl_ms
        call = self._report.request(self.node, "extend", ttl_ms=ttl)
        try:
            ok = bool(self._script(EXTEND_SCRIPT, [self.name], grant.value, ttl))
        except BackendUnavailable as exc:
            self._report.reply(call, self.node, "extend", False, error=exc.detail)
            self._report.emit("extended", ok=False, ttl_ms=ttl)
            return False
        self._report.reply(call, self.node, "extend", ok)
        self._report.emit("extended", ok=ok, ttl_ms=ttl)
        if not ok:
            self.grant = None
            self._report.emit("lost", reason="extend refused: the lease had already expired")
        return ok

    def sequencer(self) -> Sequencer | None:
        """The key and our random value: the key still holds it while the lock is ours."""
        if self.grant is None:
            return None
        value, token = self.grant.value, self.grant.token
        return Sequencer("redis", self.name, value, self.owner, token)

    def close(self) -> None:
        """Drop the connection; a lease still held stays on the server until it expires."""
        self.connection.close()

    def _held(self) -> Grant:
        if self.grant is None:
            raise NotHeld(f"{self.owner} holds no lock on {self.node}")
        return self.grant


@functools.cache
def _sha(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()
