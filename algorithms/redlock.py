"""Redlock: one lock over N independent Redis nodes, granted by a majority of them.

The algorithm as antirez specified it (https://redis.io/docs/latest/develop/use/patterns/
distributed-locks/, and his reply "Is Redlock safe?", antirez.com/news/101): the client sends
``SET key value NX PX ttl`` to every node with a small per-node timeout, counts the yeses, and
holds the lock when a majority (N//2 + 1) said yes and time is left on the lease:

    validity = ttl - elapsed - drift,    drift = ttl * 1% + 2 ms

Otherwise it undoes the attempt on *all* nodes (a node that seemed to say no may have set the
key and lost the reply) and retries after a random, bounded delay until its acquire timeout.
``extend`` prolongs the key on every node that still holds our value and succeeds when a
majority did so before the current validity ran out; ``release`` deletes our value everywhere.

Guarantees (only while its assumptions hold):
  * At most one client holds a majority of the nodes' keys at any instant; if every holder
    stops acting when its validity ends, no two clients act as holder at the same time.
  * Up to N//2 nodes may be down or slow: a node that does not answer within the per-node
    timeout counts as "no", and the lock is still granted by the others.
  * ``release`` and ``extend`` compare the stored value with ours, so a client never deletes
    or prolongs someone else's key.

Assumes:
  * Clocks advance at about the same rate on all nodes and the client (bounded drift); a node
    whose clock jumps forward expires our key early and can hand it to someone else.
  * Pauses are bounded: the client does its work well within the validity. Nothing can stop a
    client frozen by GC (or SIGSTOP) from waking after its validity ended and acting as holder.
  * A node does not lose keys: it fsyncs every write, or a node that crashed stays down for at
    least one TTL before it rejoins (delayed restart). Otherwise it rejoins empty and a second
    client can form a new majority with it.

Fails by:
  * No fencing token: values are random and no majority agrees on a counter, so a resource
    cannot refuse a holder whose lease is gone. A GC pause past the validity gives two holders
    and the stale write is accepted: Kleppmann, "How to do distributed locking" (2016,
    martin.kleppmann.com/2016/02/08/how-to-do-distributed-locking.html). antirez answers that
    the random value could guard a check-and-set; most storage offers none.
  * A majority lost (N//2 + 1 nodes down): no client can acquire the lock at all.
  * Node clock jumps, or a node restart without persistence, can give two clients a majority.

Performance: one thread talks to all nodes at once, on bare connections
(:mod:`algorithms.resp`). It sends the command to every node, then reads each reply as its
socket becomes readable (``poll``), so a round costs about the slowest node's round trip, not
the sum of all of them, and each reply is reported when it arrived. What is left is the
servers' own time: docs/performance.md measures the two rounds with no lock logic at all.
"""

from __future__ import annotations

import random
import secrets
import select
from collections.abc import Mapping

from algorithms.clock import Clock
from algorithms.errors import BackendUnavailable, NotHeld
from algorithms.events import EventSink, discard
from algorithms.lock import Grant, LockBase
from algorithms.redis_lock import EXTEND_SCRIPT, RELEASE_SCRIPT
from algorithms.resp import ReplyError, RespConnection, pack
from algorithms.sequencer import Sequencer

# Acquire needs no script: ``SET key value NX PX ttl`` is one atomic command, answering "OK"
# when the key was free and nil when someone holds it.

# The scripts are the single-node lock's (compare-and-delete, compare-and-pexpire), run on
# every node: 1 when done, 0 when the key is gone or someone else's. They are sent whole (EVAL)
# rather than by SHA1: a node that restarted has forgotten its scripts, and a NOSCRIPT in the
# middle of a fan-out would cost that node a second round.


CLOCK_DRIFT_FACTOR = 0.01  # antirez's spec: 1% of the TTL, plus 2 ms for the clock's resolution
CLOCK_DRIFT_BASE_MS = 2.0
DEFAULT_NODE_TIMEOUT_MS = 50  # antirez suggests 5-50 ms for a 10 s lease: a dead node costs little
DEFAULT_RETRY_DELAY_MS = 200
_POLLIN = select.POLLIN | select.POLLERR | select.POLLHUP

NodeConnection = RespConnection  # the name the lab's backend and older callers use


def connect_node(
    host: str,
    port: int,
    *,
    timeout_ms: int = DEFAULT_NODE_TIMEOUT_MS,
    node: str = "",
    password: str | None = None,
) -> RespConnection:
    """One connection to one node, opened on first use, failing within ``timeout_ms``.

    Opening it is a bare TCP connect: no HELLO or CLIENT SETINFO round trip, which would block
    the whole round on a node that accepts but does not answer. With a ``password`` its first
    command goes out behind an AUTH, in the same write (algorithms.resp).
    """
    return RespConnection(host, port, timeout_ms=timeout_ms, node=node, password=password)


def drift_ms(ttl_ms: int) -> float:
    return ttl_ms * CLOCK_DRIFT_FACTOR + CLOCK_DRIFT_BASE_MS


class Redlock(LockBase):
    """A lock granted by a majority of independent Redis nodes; verbs like ``threading.Lock``."""

    def __init__(
        self,
        nodes: Mapping[str, RespConnection],
        name: str,
        *,
        owner: str,
        ttl_ms: int,
        clock: Clock | None = None,
        on_event: EventSink = discard,
        node_timeout_ms: int = DEFAULT_NODE_TIMEOUT_MS,
        retry_delay_ms: int = DEFAULT_RETRY_DELAY_MS,
    ) -> None:
        super().__init__(owner, clock, on_event)
        self.nodes = dict(nodes)
        self.name = name
        self.ttl_ms = ttl_ms
        self.node_timeout_ms = node_timeout_ms
        self.retry_delay_ms = retry_delay_ms
        self.quorum = len(self.nodes) // 2 + 1
        self.validity_ms = 0.0
        self._valid_until_ns = 0

    # -- the verbs ----------------------------------------------------------------------------

    def acquire(self, timeout_ms: int = 0) -> Grant | None:
        """Try until a majority grants it or ``timeout_ms`` has passed; ``None`` if not."""
        value = f"{self.owner}:{secrets.token_hex(6)}"
        deadline = self.clock.monotonic_ns() + timeout_ms * 1_000_000
        while True:
            started = self.clock.monotonic_ns()
            command = pack("SET", self.name, value, "NX", "PX", self.ttl_ms)
            yes = self._round("acquire", command, "held by another", ttl_ms=self.ttl_ms)
            elapsed_ms = (self.clock.monotonic_ns() - started) / 1e6
            validity = self.ttl_ms - elapsed_ms - drift_ms(self.ttl_ms)
            if len(yes) >= self.quorum and validity > 0:
                return self._granted(value, yes, started, validity)
            why = self._shortfall(len(yes), validity)
            # Undo everywhere: a node that timed out may have set the key and lost the reply.
            self._report.emit("note", text=f"{why}: undoing the attempt on all nodes")
            self._release_everywhere(value)
            now = self.clock.monotonic_ns()
            if now >= deadline:
                self._report.emit("acquire_failed", reason=why, waited_ms=timeout_ms)
                return None
            delay_ms = random.uniform(self.retry_delay_ms / 2, self.retry_delay_ms)
            self.clock.sleep(min(delay_ms / 1000, (deadline - now) / 1e9))

    def release(self) -> bool:
        """Delete our key on every node. ``False`` when fewer than a majority still had it."""
        grant = self._held()
        self.grant = None
        yes = self._release_everywhere(grant.value)
        if len(yes) >= self.quorum:
            self._report.emit("released", ok=True, nodes=yes)
            return True
        reason = f"only {len(yes)} of {len(self.nodes)} nodes still had our key"
        self._report.emit("released", ok=False, nodes=yes, reason=reason)
        return False

    def extend(self, ttl_ms: int | None = None) -> bool:
        """Prolong our key on every node; ``False`` (and ``lost``) without a majority in time."""
        grant = self._held()
        ttl = ttl_ms or self.ttl_ms
        started = self.clock.monotonic_ns()
        command = pack("EVAL", EXTEND_SCRIPT, 1, self.name, grant.value, ttl)
        yes = self._round("extend", command, "not ours any more", ttl_ms=ttl)
        finished = self.clock.monotonic_ns()
        validity = ttl - (finished - started) / 1e6 - drift_ms(ttl)
        # Too late is as bad as too few: past our validity someone else may hold the majority.
        in_time = finished < self._valid_until_ns
        ok = len(yes) >= self.quorum and in_time and validity > 0
        self._report.emit("extended", ok=ok, ttl_ms=ttl, validity_ms=round(validity), nodes=yes)
        if ok:
            self.grant = Grant(None, grant.value, ttl, ",".join(yes), started)
            self._set_validity(started, validity)
            return True
        self.grant = None
        n, quorum = len(self.nodes), self.quorum
        reason = (
            f"extend reached only {len(yes)} of {n} nodes; a majority needs {quorum}"
            if len(yes) < quorum
            else "extend came after the lock's validity had ended"
        )
        self._report.emit("lost", reason=reason)
        self._release_everywhere(grant.value)
        return False

    def valid_ms(self, grant: Grant) -> float:
        """The validity of the last grant: its lease less the time the round took and the drift
        allowed for (the holder must be done by then)."""
        return self.validity_ms

    def sequencer(self) -> Sequencer | None:
        """The key and our random value: a majority still holds it while the lock is ours."""
        if self.grant is None:
            return None
        return Sequencer("redlock", self.name, self.grant.value, self.owner)

    def close(self) -> None:
        for connection in self.nodes.values():
            connection.close()

    # -- the protocol -------------------------------------------------------------------------

    def _granted(self, value: str, yes: list[str], started: int, validity: float) -> Grant:
        self.grant = Grant(None, value, self.ttl_ms, ",".join(yes), started)
        self._set_validity(started, validity)
        self._report.emit(
            "granted",
            node=self.grant.node,
            nodes=yes,
            token=None,  # Redlock has no fencing token to give
            ttl_ms=self.ttl_ms,
            validity_ms=round(validity),
            value=value,
        )
        return self.grant

    def _set_validity(self, started: int, validity: float) -> None:
        self.validity_ms = validity
        self._valid_until_ns = started + int(validity * 1_000_000)

    def _shortfall(self, yes: int, validity: float) -> str:
        if yes < self.quorum:
            return f"only {yes} of {len(self.nodes)} nodes said yes; a majority needs {self.quorum}"
        return f"a majority said yes, but too late: no validity left of the {self.ttl_ms} ms lease"

    def _release_everywhere(self, value: str) -> list[str]:
        command = pack("EVAL", RELEASE_SCRIPT, 1, self.name, value)
        return self._round("release", command, "not ours any more")

    def _round(self, op: str, command: bytes, refusal: str, **details: object) -> list[str]:
        """Send ``command`` to every node at once; the nodes whose reply was a yes.

        "OK" (SET) and 1 (the scripts) are yes. A node that is down, errs or does not answer
        within the per-node timeout counts as no, with the ``error`` in its reply event.
        """
        deadline = self.clock.monotonic_ns() + self.node_timeout_ms * 1_000_000
        poller = select.poll()
        waiting: dict[int, tuple[str, RespConnection, int]] = {}  # fd -> node, connection, call
        yes: list[str] = []
        report = self._report
        for node, connection in self.nodes.items():
            call = report.request(node, op, **details)
            try:
                connection.send(command)
            except BackendUnavailable as exc:
                report.reply(call, node, op, False, error=exc.detail)
                continue
            fd = connection.fileno()
            waiting[fd] = (node, connection, call)
            poller.register(fd, _POLLIN)
        while waiting:
            # Past the deadline, still take the replies that are already here.
            left_ms = max(0.0, (deadline - self.clock.monotonic_ns()) / 1e6)
            ready = poller.poll(left_ms)
            if not ready:
                break
            for fd, _ in ready:
                node, connection, call = waiting.pop(fd)
                poller.unregister(fd)
                try:
                    answer = connection.read()
                except BackendUnavailable as exc:
                    report.reply(call, node, op, False, error=exc.detail)
                    continue
                if answer == "OK" or answer == 1:
                    yes.append(node)
                    report.reply(call, node, op, True)
                elif isinstance(answer, ReplyError):  # the node answered with an error
                    report.reply(call, node, op, False, error=str(answer))
                else:
                    report.reply(call, node, op, False, reason=refusal)
        for node, connection, call in waiting.values():
            # Its reply may still come; a new connection keeps it from answering the next call.
            connection.close()
            error = f"no reply within {self.node_timeout_ms} ms"
            report.reply(call, node, op, False, error=error)
        return yes

    def _held(self) -> Grant:
        if self.grant is None:
            raise NotHeld(f"{self.owner} holds no Redlock on {', '.join(self.nodes)}")
        return self.grant
