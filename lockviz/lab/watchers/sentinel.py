"""Redis with Sentinel deciding: who holds the key on which node, and who is primary when.

Two kinds of watcher share one view of the set (:class:`Roles`):

* a :class:`NodeWatcher` on each Redis node, as :class:`~lockviz.lab.watchers.redis.KeyWatcher`
  (keyspace notifications on the lock key) but asking the node its role at each one (``ROLE``):
  on the primary a key that goes is ``expired`` or ``deleted``, as on a single node; on a replica
  a key that arrives is ``replicated`` (the primary sent it on, after answering its client), and
  one that goes is only the primary's decision arriving, not reported again;
* a :class:`SentinelWatcher` on each Sentinel, subscribed to the events Sentinel publishes on
  itself (``+sdown``, ``+odown``, ``+vote-for-leader``, ``+promoted-slave``, ``+switch-master``,
  ``+convert-to-slave``...): a Sentinel that thinks the primary is down (``suspected``), its vote
  for the Sentinel that should lead the failover (``voted``), a replica promoted or an old
  primary turned into a replica (``role``, recorded once, by whichever Sentinel tells it
  first). Sentinels name servers by the address the set knows them by, and each other by their
  run ids: the watcher maps both back to names (``SENTINEL MYID``).

A promotion's ``by`` is the Sentinel that made it: the one elected for the epoch
(``+elected-leader``, which only the winner publishes), never merely the first to tell of it.
Every Sentinel publishes ``+switch-master`` once the leader's hello reaches it, within
milliseconds of the leader's own ``+promoted-slave``, and each watcher reads its Sentinel on a
thread of its own: on a loaded machine a follower's was read first and named itself (a vote for
sentinel-2, "promoted by sentinel-3"). A follower that tells first waits up to
:data:`LEADER_WAIT_S` for the leader's election to be read; past it, ``by`` is left out.

Every watcher connects to its server directly, never through the set's proxy: a partition is
between the servers, not between them and the lab.
"""

from __future__ import annotations

import threading
import time

import redis

from algorithms.redis_client import connect
from lockviz.catalogue import SENTINEL, server_kind
from lockviz.lab.events import Record
from lockviz.lab.labs import ServerSet
from lockviz.lab.watchers.base import ServerWatcher, Watcher
from lockviz.lab.watchers.redis import KeyWatcher

EVENTS = (
    "+sdown", "-sdown", "+odown", "-odown", "+new-epoch", "+vote-for-leader",
    "+promoted-slave", "+switch-master", "+convert-to-slave", "+elected-leader",
)  # fmt: skip
# How long a follower's news of a promotion waits for the leader's election to be read (the
# leader publishes it a failover's first steps, hundreds of milliseconds, before it promotes).
LEADER_WAIT_S = 1.0


class Roles:
    """What the set's watchers know together: each server's name by the address the set knows
    it by, each Sentinel's by its run id, and who is primary (each change recorded once)."""

    def __init__(self, announced: dict[str, str], primary: str) -> None:
        self.by_address = dict(announced)
        self.by_id: dict[str, str] = {}
        self.primary = primary
        self.replicas: dict[str, str] = {}  # replica -> its primary, as last recorded
        self.leaders: dict[int, str] = {}  # epoch -> the Sentinel elected to fail over in it
        self.lock = threading.Lock()
        self._elected = threading.Condition(self.lock)

    def name(self, host: str, port: str) -> str | None:
        return self.by_address.get(f"{host}:{port}")

    def promoted(self, node: str) -> str | None:
        """``node`` is primary now: the one it replaces, or None if that was known already."""
        with self.lock:
            if node == self.primary:
                return None
            previous, self.primary = self.primary, node
            self.replicas.pop(node, None)
            return previous

    def elected(self, epoch: int, sentinel: str) -> None:
        with self._elected:
            self.leaders[epoch] = sentinel
            self._elected.notify_all()

    def leader(self, epoch: int | None, node: str) -> str | None:
        """The Sentinel elected in ``epoch``, waiting up to :data:`LEADER_WAIT_S` for its
        election to be read, unless ``node``'s promotion has been told already."""
        with self._elected:
            self._elected.wait_for(
                lambda: epoch in self.leaders or node == self.primary or epoch is None,
                LEADER_WAIT_S,
            )
            return self.leaders.get(epoch) if epoch is not None else None

    def demoted(self, node: str, primary: str) -> bool:
        """``node`` replicates ``primary`` now: whether that is news."""
        with self.lock:
            if self.replicas.get(node) == primary:
                return False
            self.replicas[node] = primary
            return True


def watchers(servers: ServerSet, nodes: list[str], record: Record) -> list[Watcher]:
    """A key watcher on each Redis node, a watcher on each Sentinel, one view of the set."""
    redis_nodes = [n for n in nodes if server_kind(n) is not SENTINEL]
    roles = Roles(servers.announced(), redis_nodes[0])
    found: list[Watcher] = []
    for name in nodes:
        watcher = (NodeWatcher if name in redis_nodes else SentinelWatcher).of(
            servers[name], record
        )
        watcher.roles = roles
        found.append(watcher)
    return found


class NodeWatcher(KeyWatcher):
    """A node's lock key, told apart by the node's role (see the module docstring)."""

    roles: Roles

    def seen(self, client: redis.Redis, event: str, t_ns: int) -> None:
        role = client.execute_command("ROLE")[0]  # type: ignore[no-untyped-call]
        if role == "master":
            super().seen(client, event, t_ns)
            return
        if event == "set":  # the primary's grant, arrived here
            self.holder = self.whose(client)
            if self.holder is not None:
                details = {"key": self.key, "holder": self.holder}
                self.record(self.name, "replicated", details, t_ns)
        else:
            self.holder = None


class SentinelWatcher(ServerWatcher):
    """What one Sentinel publishes about the set (see the module docstring)."""

    transient = (redis.ConnectionError, redis.TimeoutError, OSError)
    roles: Roles

    def init_state(self) -> None:
        self.epoch: int | None = None  # the last epoch this Sentinel moved to

    def watch(self) -> None:
        client = connect(self.host, self.port, timeout_ms=500, password=self.password)
        pubsub = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
        try:
            with self.roles.lock:
                myid = client.execute_command("SENTINEL", "MYID")  # type: ignore[no-untyped-call]
                self.roles.by_id[str(myid)] = self.name
            pubsub.subscribe(*EVENTS)
            self.ready()
            while not self.stopping:
                message = pubsub.get_message(timeout=0.1)
                if message is not None:
                    self.seen(message["channel"], str(message["data"]).split(), time.monotonic_ns())
        finally:
            pubsub.close()
            client.close()

    def seen(self, channel: str, words: list[str], t_ns: int) -> None:
        """One message (``+sdown master lockviz 127.0.0.1 6379``...), in Sentinel's own form:
        ``<type> <name> <ip> <port> [@ <master name> <master ip> <master port>]``."""
        if channel == "+new-epoch" and words:
            self.epoch = int(words[0])
        elif channel == "+vote-for-leader" and len(words) == 2:
            leader = self.roles.by_id.get(words[0], words[0][:8])
            self.epoch = int(words[1])
            self.record(self.name, "voted", {"leader": leader, "term": self.epoch}, t_ns)
        elif channel == "+elected-leader" and self.epoch is not None:
            self.roles.elected(self.epoch, self.name)
        elif channel in ("+sdown", "-sdown", "+odown", "-odown") and words[:1] == ["master"]:
            self._suspected(channel, words, t_ns)
        elif channel in ("+promoted-slave", "+switch-master"):
            self._promotion(channel, words, t_ns)
        elif channel == "+convert-to-slave" and len(words) >= 8:
            node, primary = self.roles.name(*words[2:4]), self.roles.name(*words[6:8])
            if node is not None and primary is not None and self.roles.demoted(node, primary):
                self.record(node, "role", {"role": "replica", "of": primary, "by": self.name}, t_ns)

    def _suspected(self, channel: str, words: list[str], t_ns: int) -> None:
        node = self.roles.name(*words[2:4])
        if node is None:
            return
        details: dict[str, object] = {"node": node, "objective": "odown" in channel}
        if channel.startswith("-"):
            details["cleared"] = True
        if "#quorum" in words:
            details["quorum"] = words[words.index("#quorum") + 1]
        self.record(self.name, "suspected", details, t_ns)

    def _promotion(self, channel: str, words: list[str], t_ns: int) -> None:
        if channel == "+promoted-slave" and len(words) >= 8:
            node, old = self.roles.name(*words[2:4]), self.roles.name(*words[6:8])
            if node is not None:  # published by the leader only, as it promotes
                self._promoted(node, old, t_ns, self.name)
        elif channel == "+switch-master" and len(words) == 5:
            node = self.roles.name(*words[3:5])
            if node is not None:  # published by every Sentinel: the leader's own name is by
                by = self.roles.leader(self.epoch, node)
                self._promoted(node, self.roles.name(*words[1:3]), t_ns, by)

    def _promoted(self, node: str, old: str | None, t_ns: int, by: str | None) -> None:
        previous = self.roles.promoted(node)
        if previous is None:
            return  # another Sentinel told it first
        details: dict[str, object] = {"role": "primary", "previous": old or previous}
        if by is not None:
            details["by"] = by
        if self.epoch is not None:
            details["term"] = self.epoch
        self.record(node, "role", details, t_ns)
