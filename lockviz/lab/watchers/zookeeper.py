"""ZooKeeper deciding: did a lock node go because its owner deleted it, or with its session?

An ensemble also has a :class:`LeaderWatcher`, which records each new leader.

The node watcher has its own session and follows the children of ``/lockviz/lock``. When a lock
node disappears it tells an owner's ``delete`` from the server ending the owner's session by
asking the leader (or the standalone server) for its session list (the ``dump`` four-letter
word): if the node's ``ephemeralOwner`` session is still alive, its owner deleted it
(``deleted``); if not, the server removed it with the session (``expired``). A session closed
by its client at the end of a run counts as ``expired`` too: ZooKeeper does not tell the two
apart. Where ``dump`` is not allowed (an external server with the default whitelist) the
watcher cannot tell at all and reports ``deleted`` for every node. ``holding`` says whether the
node was the lowest, i.e. the lock holder's, when it went.

A live session can be missing from one ``dump``: the server files sessions by when they expire
and moves one to a later bucket at each of its requests; a dump that lists the buckets while the
owner's own ``delete`` moves its session may see it in neither. Such a session was reported
``expired`` after a clean release (zk-contention: "alice's session expired", issue 38). So a
session counts as gone only when :data:`CONFIRM_READS` dumps, :data:`CONFIRM_S` apart, all
miss it: an ended session never comes back.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import WatchedEvent
from kazoo.retry import KazooRetry

from algorithms.zookeeper_lock import LOCK_PATH, sequence
from lockviz.lab.events import Record
from lockviz.lab.labs import ServerSet
from lockviz.lab.servers.zookeeper import four_letter
from lockviz.lab.watchers.base import Watcher

WATCHER_SESSION_S = 2.0  # kazoo waits up to a session for a handshake: keep it short
CALL_TIMEOUT_S = 1.0
SESSION_ID = re.compile(r"0x[0-9a-fA-F]+")
ZXID = re.compile(r"Zxid: 0x([0-9a-fA-F]+)")
CONFIRM_READS, CONFIRM_S = 3, 0.05  # dumps that must all miss a session before it is gone

# Outside the "lockviz" logger tree (INFO to the console): kazoo reports every reconnect, and a
# server going down is part of the show here, already visible in the events.
_log = logging.getLogger("kazoo.lockviz.watcher")
_log.addHandler(logging.NullHandler())


def watchers(servers: ServerSet, nodes: list[str], record: Record) -> list[Watcher]:
    watched = [servers[name] for name in nodes]
    addresses = {s.name: (s.host, s.port) for s in watched}
    retired = lambda: all(s.retired for s in watched)  # noqa: E731
    found: list[Watcher] = [NodeWatcher(addresses, record, retired=retired)]
    if len(nodes) > 1:
        leader = next((n for n, r in servers.roles().items() if r == "leader"), None)
        found.append(LeaderWatcher(addresses, leader, record, retired=retired))
    return found


class LeaderWatcher(Watcher):
    """Who leads an ensemble, as its servers say (``srvr``, every 0.1 s): each new leader is
    recorded (``role``), with the epoch it leads in (the high half of its zxids)."""

    transient = (OSError,)

    def __init__(
        self,
        servers: dict[str, tuple[str, int]],
        leader: str | None,
        record: Record,
        *,
        retired: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__("zk-leader", record, retired=retired)
        self.servers, self.leader = servers, leader

    def watch(self) -> None:
        while not self.stopping:
            found, epoch = None, None
            for name, (host, port) in self.servers.items():
                said = four_letter(host, port, "srvr", timeout_s=0.2)
                if "Mode: leader" in said:
                    found = name
                    zxid = ZXID.search(said)
                    epoch = int(zxid.group(1), 16) >> 32 if zxid else None
            self.ready()
            if found is not None and found != self.leader:
                details: dict[str, object] = {"role": "leader"}
                if self.leader:
                    details["previous"] = self.leader
                if epoch is not None:
                    details["term"] = epoch
                self.leader = found
                self.record(found, "role", details)
            self.pause(0.1)


class NodeWatcher(Watcher):
    """Follows the lock nodes from its own session; a new session while a server is down."""

    transient = (KazooException, KazooTimeoutError)
    join_s = 5.0

    def __init__(
        self,
        servers: dict[str, tuple[str, int]],
        record: Record,
        *,
        retired: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__("zk", record, retired=retired)
        self.servers = servers  # name -> (host, port), in the scenario's order
        self.known: dict[str, tuple[str, int]] = {}  # node name -> (owner, owner's session id)
        self._fired = self._handled = 0  # the server's notifications, and those recorded

    def backoff_s(self, failures: int) -> float:
        return 0.1  # each attempt is bounded by the session and call timeouts

    def watch(self) -> None:
        hosts = ",".join(f"{host}:{port}" for host, port in self.servers.values())
        client = KazooClient(
            hosts=hosts,
            timeout=WATCHER_SESSION_S,
            connection_retry=KazooRetry(max_tries=3, delay=0.05, max_delay=0.2),
            command_retry=KazooRetry(max_tries=1),
            logger=_log,
        )
        try:
            client.start(timeout=2)
            client.ensure_path_async(LOCK_PATH).get(timeout=CALL_TIMEOUT_S)
            self._follow(client)
        finally:
            client.stop()
            client.close()

    def caught_up(self, since_ns: int) -> bool:
        # Not while a node that went is being asked about: whose delete it was takes the
        # server's session list (``dump``), a round trip to the JVM that a loaded machine
        # answers in hundreds of milliseconds.
        return self._fired == self._handled

    def _follow(self, client: KazooClient) -> None:
        fired_ns: list[int] = []
        while not self.stopping:
            changed = threading.Event()

            def on_change(event: WatchedEvent, changed: threading.Event = changed) -> None:
                fired_ns.append(time.monotonic_ns())  # when the server told us, not when we ask
                self._fired += 1
                changed.set()

            told = self._fired
            listed = client.get_children_async(LOCK_PATH, watch=on_change)
            children = listed.get(timeout=CALL_TIMEOUT_S)
            self._update(client, children, fired_ns[-1] if fired_ns else time.monotonic_ns())
            fired_ns.clear()
            self._handled = told
            self.ready()
            while not changed.wait(0.05):
                if self.stopping:
                    return

    def _update(self, client: KazooClient, children: list[str], t_ns: int) -> None:
        current = {name for name in children if sequence(name) >= 0}
        for name in sorted(current - self.known.keys(), key=sequence):
            stat = client.exists_async(f"{LOCK_PATH}/{name}").get(timeout=CALL_TIMEOUT_S)
            self.known[name] = (name.split(".", 1)[0], int(stat.ephemeralOwner) if stat else 0)
            if stat is None:  # gone before we could ask whose session it was: ``deleted``
                current.discard(name)
        gone = sorted((name for name in self.known if name not in current), key=sequence)
        if not gone:
            return
        holding = min(self.known, key=sequence)
        owners = {self.known[name][1] for name in gone} - {0}
        actor, live = alive(self._sessions, owners)
        for name in gone:
            owner, session = self.known.pop(name)
            expired = live is not None and session != 0 and session not in live
            details = {"key": f"{LOCK_PATH}/{name}", "holder": owner, "holding": name == holding}
            self.record(actor, "expired" if expired else "deleted", details, t_ns)

    def _sessions(self) -> tuple[str, set[int] | None]:
        """The server that ends sessions (leader or standalone) and the sessions it has alive."""
        for name, (host, port) in self.servers.items():
            srvr = four_letter(host, port, "srvr")
            if "Mode: leader" in srvr or "Mode: standalone" in srvr:
                dump = four_letter(host, port, "dump", timeout_s=1.0)
                if "SessionTracker dump" not in dump:
                    return name, None  # not whitelisted there: we cannot tell
                tracker = dump.split("ephemeral nodes dump", 1)[0]
                return name, {int(sid, 16) for sid in SESSION_ID.findall(tracker)}
        return next(iter(self.servers)), None


def alive(
    sessions: Callable[[], tuple[str, set[int] | None]],
    owners: set[int],
    reads: int = CONFIRM_READS,
    pause_s: float = CONFIRM_S,
) -> tuple[str, set[int] | None]:
    """The server that ends sessions and the sessions it has alive, as ``sessions()`` reads
    them; read again, up to ``reads`` times in all, while any of ``owners`` is missing (see the
    module's docstring): a session in any read is alive. None: the server cannot tell."""
    actor, live = sessions()
    for _ in range(reads - 1):
        if live is None or owners <= live:
            break
        time.sleep(pause_s)
        _, again = sessions()
        if again is None:
            break
        live |= again
    return actor, live
