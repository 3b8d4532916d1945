"""Storage without a lock: replicas that each accept writes, and merge by timestamp or as a CRDT.

The two alternatives to locking that one of the source articles gives (a lock is not the only way
to let two clients update one thing): let every replica accept every write it receives and settle
the differences afterwards. Each replica is a Redis node of its own; a client writes to every
replica it can reach (one request each, so a partitioned replica simply misses the write) and is
done when one of them acknowledged it. A read asks every reachable replica and, when their states
differ, merges them and sends the merge back to each replica that lacks it (read repair, as
Dynamo does): so once the replicas can be reached again, the first read heals them. Every step is
a request and a reply the lab records; nothing merges in the background.

Two kinds (the scenario's ``storage``):

* ``lww``, a last-write-wins register: each write is stamped with its writer's *wall clock* (ms
  since the epoch, as that client believes it to be), and every replica keeps the write with the
  highest stamp (ties broken by writer name), at a write as at a merge. Guarantees: the replicas
  converge. Assumes the clients' clocks agree: a client whose clock runs behind stamps its newer
  write lower than an older one, and the replicas drop it, silently: its writer was told OK. Two
  concurrent writes in a partition keep one; the other is dropped on merge. Each reply says which
  write the replica holds (``holds``) and which it dropped (``dropped``), so the history shows
  every loss and both timestamps.
* ``crdt``, an add-wins set (an observed-remove set, Shapiro et al., "A comprehensive study of
  Convergent and Commutative Replicated Data Types", 2011): a write adds its value, tagged with a
  tag nobody else uses; a remove tombstones the tags it has seen, so an add concurrent with a
  remove wins. The merge is the union of adds and of tombstones: commutative, associative and
  idempotent, so the replicas converge whatever order they merge in and no acknowledged add is
  ever lost. It needs no clock and no lock. What it gives up: the data is a set, not one value;
  an application that needs "the" value must choose (and a register chosen by timestamp is LWW
  again). The lab's scenarios only add (a write); :meth:`ReplicatedStorage.remove` exists for
  the data type's sake and its tests.

Both scripts run on the replica (Lua), atomically with what they compare.

One module past the usual ~300 lines, on purpose: both kinds share the client's fan-out to the
replicas and its read repair, and their scripts' contracts sit beside the code that calls them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import redis

from algorithms.clock import Clock, SystemClock
from algorithms.errors import BackendUnavailable
from algorithms.events import EventSink, Reporter, discard
from algorithms.redis_client import boundary

KINDS = ("lww", "crdt")

# KEYS[1] the register (a hash: stamp, writer, value); ARGV[1] stamp, ARGV[2] writer, ARGV[3]
# value: a write, or the register of another replica being merged in. The higher (stamp, writer)
# wins. Returns {outcome, the stamp, writer and value it compared with}: outcome 1, the incoming
# write is held now (it replaced those, or nothing: stamp -1); 0, the replica keeps those (the
# incoming was dropped); 2, it already held this very write.
LWW_SCRIPT = """
local held = redis.call('HMGET', KEYS[1], 'stamp', 'writer', 'value')
local stamp = tonumber(ARGV[1])
if held[1] then
    local s = tonumber(held[1])
    if s == stamp and held[2] == ARGV[2] then
        return {2, held[1], held[2], held[3]}
    end
    if s > stamp or (s == stamp and held[2] > ARGV[2]) then
        return {0, held[1], held[2], held[3]}
    end
end
redis.call('HSET', KEYS[1], 'stamp', ARGV[1], 'writer', ARGV[2], 'value', ARGV[3])
if held[1] then
    return {1, held[1], held[2], held[3]}
end
return {1, '-1', '', ''}
"""

# KEYS[1] the adds (a hash: tag -> element), KEYS[2] the tombstones (a set of tags);
# ARGV[1] how many adds follow as (tag, element) pairs; then the tombstoned tags. Unions them in.
# Returns {the elements before, the elements after}, each sorted, as lists.
CRDT_SCRIPT = """
local function elements()
    local adds = redis.call('HGETALL', KEYS[1])
    local seen, found = {}, {}
    for i = 1, #adds, 2 do
        if redis.call('SISMEMBER', KEYS[2], adds[i]) == 0 and not seen[adds[i + 1]] then
            seen[adds[i + 1]] = true
            found[#found + 1] = adds[i + 1]
        end
    end
    table.sort(found)
    return found
end
local before = elements()
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
    redis.call('HSETNX', KEYS[1], ARGV[2 + 2 * i], ARGV[3 + 2 * i])
end
for i = 2 + 2 * n, #ARGV do
    redis.call('SADD', KEYS[2], ARGV[i])
end
return {before, elements()}
"""


@dataclass(frozen=True, order=True)
class Stamped:
    """One write of a last-write-wins register, in the order the register keeps: stamp first."""

    stamp: int  # ms since the epoch, by its writer's own clock
    writer: str
    value: str

    def as_dict(self) -> dict[str, object]:
        return {"writer": self.writer, "value": self.value, "stamp": self.stamp}


@dataclass(frozen=True)
class SetState:
    """One replica's add-wins set: every add by its tag, and the tags removed."""

    adds: frozenset[tuple[str, str]]  # (tag, element)
    removed: frozenset[str]

    @property
    def elements(self) -> list[str]:
        return sorted({element for tag, element in self.adds if tag not in self.removed})

    def merge(self, other: SetState) -> SetState:
        return SetState(self.adds | other.adds, self.removed | other.removed)


State = Stamped | SetState | None  # a replica's data: a register (None: empty), or a set


@dataclass(frozen=True)
class ReplicatedWrite:
    """What a write did: acknowledged by ``acked`` replicas (the writer's OK needs one)."""

    stamp: int
    acked: tuple[str, ...]
    kept: bool  # lww: some replica holds it now; crdt: always, once acknowledged

    @property
    def accepted(self) -> bool:
        return bool(self.acked)


class ReplicatedStorage:
    """A client of replicated storage: ``write(value)`` to every replica, ``read()`` and repair.

    ``replicas`` are (name, client) in the order this client tries them: the nearest first.
    """

    def __init__(
        self,
        replicas: Sequence[tuple[str, redis.Redis]],
        name: str,
        *,
        kind: str,
        writer: str,
        clock: Clock | None = None,
        on_event: EventSink = discard,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"replicated storage is {KINDS}, not {kind!r}")
        self.replicas = list(replicas)
        self.kind = kind
        self.writer = writer
        self.clock: Clock = clock or SystemClock()
        self.keys = [f"{name}:register"] if kind == "lww" else [f"{name}:adds", f"{name}:removed"]
        self._report = Reporter(on_event)
        self._adds = 0  # this client's adds so far: its tags are unique
        self._script = {
            node: client.register_script(LWW_SCRIPT if kind == "lww" else CRDT_SCRIPT)
            for node, client in self.replicas
        }

    def prepare(self) -> None:
        """Load the script on every replica now (one that is down is tried at its first write)."""
        for node, client in self.replicas:
            try:
                with boundary(node):
                    client.script_load(LWW_SCRIPT if self.kind == "lww" else CRDT_SCRIPT)
            except BackendUnavailable:
                continue

    # -- writes -------------------------------------------------------------------------------

    def stamp(self) -> int:
        """Now, by this client's own wall clock, in ms: what a last-write-wins write carries."""
        return int(self.clock.wall() * 1000)

    def write(self, value: str) -> ReplicatedWrite:
        """Write ``value`` to every replica this client reaches; acknowledged when one took it."""
        stamp = self.stamp()
        self._adds += 1
        tag = f"{self.writer}:{stamp}:{self._adds}"
        acked, kept = [], False
        for node, _client in self.replicas:
            call = self._report.request(node, "write", value=value, stamp=stamp)
            try:
                if self.kind == "lww":
                    outcome, other = self._lww(node, Stamped(stamp, self.writer, value))
                else:
                    _before, after = self._crdt(
                        node, SetState(frozenset({(tag, value)}), frozenset())
                    )
            except BackendUnavailable as exc:
                self._report.reply(call, node, "write", False, error=exc.detail)
                continue
            acked.append(node)
            if self.kind == "lww":
                mine = Stamped(stamp, self.writer, value)
                kept = kept or outcome != 0
                details = _lww_details(mine, outcome, other)
            else:
                kept = True
                details = {"values": after}
            self._report.reply(call, node, "write", True, accepted=True, **details)
        return ReplicatedWrite(stamp, tuple(acked), kept)

    def remove(self, value: str) -> bool:
        """Remove ``value`` from the add-wins set: tombstone every add of it this client has seen
        (on the first replica that answers), then on every replica. An add it has not seen, made
        concurrently elsewhere, survives: the add wins."""
        if self.kind != "crdt":
            raise ValueError("only the add-wins set removes")
        seen = self._first_state()
        if not isinstance(seen, SetState):
            return False
        tags = frozenset(tag for tag, element in seen.adds if element == value)
        done = False
        for node, _client in self.replicas:
            try:
                self._crdt(node, SetState(frozenset(), tags))
                done = True
            except BackendUnavailable:
                continue
        return done

    # -- reads and repair ---------------------------------------------------------------------

    def read(self) -> State:
        """Every reachable replica's data, merged; a replica that lacks the merge gets it."""
        states: dict[str, State] = {}
        for node, _client in self.replicas:
            call = self._report.request(node, "read")
            try:
                state = self.fetch(node)
            except BackendUnavailable as exc:
                self._report.reply(call, node, "read", False, error=exc.detail)
                continue
            states[node] = state
            self._report.reply(call, node, "read", True, **_state_details(state))
        merged = merge(list(states.values()))
        for node, state in states.items():
            if state != merged and merged is not None:
                self._repair(node, merged)
        return merged

    def _repair(self, node: str, merged: Stamped | SetState) -> None:
        """Send the merge to a replica that lacks it, as a reported ``merge``."""
        if isinstance(merged, Stamped):
            call = self._report.request(node, "merge", holds=merged.as_dict())
        else:
            call = self._report.request(node, "merge", values=merged.elements)
        try:
            if isinstance(merged, Stamped):
                outcome, other = self._lww(node, merged)
                details = _lww_details(merged, outcome, other)
            else:
                before, after = self._crdt(node, merged)
                details = {"values": after, "added": sorted(set(after) - set(before))}
        except BackendUnavailable as exc:
            self._report.reply(call, node, "merge", False, error=exc.detail)
            return
        self._report.reply(call, node, "merge", True, **details)

    def fetch(self, node: str) -> State:
        """One replica's data, unreported."""
        client = dict(self.replicas)[node]
        with boundary(node):
            if self.kind == "lww":
                stamp, writer, value = client.hmget(self.keys[0], ["stamp", "writer", "value"])
                if stamp is None:
                    return None
                return Stamped(int(stamp), str(writer), str(value))
            adds = client.hgetall(self.keys[0])
            removed = client.smembers(self.keys[1])
        return SetState(
            frozenset((str(t), str(e)) for t, e in adds.items()),
            frozenset(str(t) for t in removed),
        )

    def _first_state(self) -> State:
        for node, _client in self.replicas:
            try:
                return self.fetch(node)
            except BackendUnavailable:
                continue
        return None

    # -- the scripts ----------------------------------------------------------------------------

    def _lww(self, node: str, incoming: Stamped) -> tuple[int, Stamped | None]:
        with boundary(node):
            outcome, stamp, writer, value = self._script[node](
                keys=self.keys, args=[incoming.stamp, incoming.writer, incoming.value]
            )
        other = None if int(stamp) < 0 else Stamped(int(stamp), str(writer), str(value))
        return int(outcome), other

    def _crdt(self, node: str, incoming: SetState) -> tuple[list[str], list[str]]:
        adds = sorted(incoming.adds)
        args: list[str | int] = [len(adds)]
        for tag, element in adds:
            args += [tag, element]
        args += sorted(incoming.removed)
        with boundary(node):
            before, after = self._script[node](keys=self.keys, args=args)
        return [str(e) for e in before], [str(e) for e in after]


def merge(states: Sequence[State]) -> State:
    """The replicas' data merged: the highest-stamped write, or the union of the sets."""
    sets = [s for s in states if isinstance(s, SetState)]
    if sets:
        found = sets[0]
        for other in sets[1:]:
            found = found.merge(other)
        return found
    registers = [s for s in states if isinstance(s, Stamped)]
    return max(registers) if registers else None


def _lww_details(incoming: Stamped, outcome: int, other: Stamped | None) -> dict[str, object]:
    """A register's reply: whether the incoming write is held, what it holds, what it dropped."""
    if outcome == 0 and other is not None:  # the replica kept what it had: the incoming lost
        return {"kept": False, "holds": other.as_dict(), "dropped": incoming.as_dict()}
    found: dict[str, object] = {"kept": True, "holds": incoming.as_dict()}
    if outcome == 1 and other is not None:
        found["dropped"] = other.as_dict()
    return found


def _state_details(state: State) -> dict[str, object]:
    """A read reply's fields: the register's value and write, or the set's elements."""
    if isinstance(state, SetState):
        return {"values": state.elements}
    if state is None:
        return {"value": None}
    return {"value": state.value, "holds": state.as_dict()}
