"""Leader election on ZooKeeper: the recipe kazoo's ``Election`` runs, every step a visible call.

ZooKeeper's "Leader Election" recipe (ZooKeeper docs, "Recipes and Solutions") is its lock
recipe read another way: each candidate creates an EPHEMERAL|SEQUENTIAL node under the election
path, the candidate with the lowest sequence number leads, and every other one watches the node
just before its own; when that goes it looks again. kazoo's ``Election(client, path, identifier)``
is exactly that: a kazoo ``Lock`` on the path whose node data is the identifier, ``run(func)``
acquiring it and calling ``func`` while it leads, ``contenders()`` reading the identifiers in
order. Here the lock is :class:`algorithms.zookeeper_lock.ZooKeeperLock` (the same recipe, with
each create, listing and watch reported as an event), and the nodes are named as kazoo's are
(``<owner>.<guid>.__lock__<seq>``, the identifier in the data), so kazoo's own ``Election`` and
``contenders()`` see these candidates and queue with them (a live test holds the two together).

The leader's **epoch** is its node's ``czxid``, the id of the transaction that created it:
zxids grow with every transaction of the ensemble, so a later leader's epoch is higher, and a
resource that keeps the highest epoch it has seen refuses a deposed leader (fencing).

``acquire`` campaigns (waits its turn while others lead: following the leader is watching its
predecessor), ``release`` resigns (deletes its node), ``leader()`` asks who leads (the lowest
node's data and czxid). What the lock recipe guarantees, assumes and fails by is what this
election does: the session is the leadership's lease; a leader frozen past its session timeout is
deposed (its node deleted, the next candidate elected) and wakes up still believing it leads
until its client learns the session is gone.
"""

from __future__ import annotations

from kazoo.exceptions import KazooException, NoNodeError
from kazoo.handlers.threading import KazooTimeoutError

from algorithms.lock import Leader
from algorithms.zookeeper_calls import unavailable
from algorithms.zookeeper_lock import ZooKeeperLock, sequence


class ZooKeeperElection(ZooKeeperLock):
    """A candidate in a ZooKeeper election; verbs like ``threading.Lock`` (acquire campaigns)."""

    NODE_MARK = ".__lock__"  # kazoo's Lock and Election name their nodes ``…__lock__<seq>``

    def leader(self) -> Leader | None:
        """Who leads: the lowest node's data (the candidate's name) and czxid, as one reported
        ``leader`` call (a listing, then a read of the lowest node)."""
        where = self.calls.where()
        call = self._report.request(where, "leader", path=self.path)
        try:
            children = self.client.get_children_async(self.path).get(timeout=self.call_timeout_s)
            queue = sorted((c for c in children if sequence(c) >= 0), key=sequence)
            if not queue:
                self._report.reply(call, where, "leader", False, reason="no leader")
                return None
            data, stat = self.client.get_async(f"{self.path}/{queue[0]}").get(
                timeout=self.call_timeout_s
            )
        except NoNodeError:  # the leader's node went between the listing and the read
            self._report.reply(call, where, "leader", False, reason="no leader")
            return None
        except (KazooException, KazooTimeoutError) as exc:
            self._report.reply(call, where, "leader", False, error=unavailable(where, exc).detail)
            return None
        found = Leader((data or b"").decode(), int(stat.czxid))
        self._report.reply(call, where, "leader", True, value=found.name, token=found.epoch)
        return found
