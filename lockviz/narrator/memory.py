"""What a narrator remembers of one run so far: :class:`Memory`, and :data:`Sayer`, the shape of
every function that says an event with it.

Some words need what came before: a write's reply names the value its request carried, a refusal
names who holds the key, a stale write names what it overwrote, a lost lock names when the
server ended the session. A :class:`Memory` holds all of that, and changes in one place only,
:meth:`Memory.see`, after the event has been said: so a sayer reads the run as it was up to the
event it says, and never writes. What a sayer needs to know of the event's own effect (the round
a request opens, what a refused round folds) it asks of the memory's questions, which answer as
:meth:`~Memory.see` will decide.

An acquire that is refused and tried again is a series of rounds (``round`` and ``fold``, see the
package docstring): :meth:`Memory.round_of` numbers them, :meth:`Memory.fold` says what a refused
one folds, and :meth:`Memory.see` opens and closes them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from algorithms.writes import Write as Write
from algorithms.writes import WriteJudge
from lockviz.catalogue import BACKENDS, Variant, server_kind
from lockviz.lab.events import EventJson
from lockviz.narrator.words import Said, items, number

# What each lock service's fencing token is, as its own documentation names it.
TOKEN_NAMES = {"zookeeper": "czxid", "etcd": "revision"}
FOLD_FROM = 2  # the first refused round stays drawn; later ones fold
STORAGE_OPS = (
    "write",
    "read",
    "check",
    "merge",
)  # a fan-out's requests to the storage, not to its nodes


@dataclass
class Rounds:
    """One client's acquire, round by round."""

    number: int = 0
    open: bool = False
    refused: int = 0  # the last round that was refused
    yes: int = 0  # this round's yeses
    asked: int = 0


@dataclass
class Memory:
    """One run's events so far, as its sayers need them (see the module docstring)."""

    backend: str | None = None
    variant: str | None = None
    storage: str | None = None  # what the storage checks (run_started's storage_kind)
    nodes: list[str] = field(default_factory=list)
    requests: dict[tuple[str, object], EventJson] = field(default_factory=dict)  # (actor, call)
    holders: dict[str, str] = field(default_factory=dict)  # lock node -> whose key it holds
    stored: EventJson | None = None  # the write request whose value the storage holds
    # The checker's stale-write rule, kept as the run goes (run_started, grants, versioned
    # writes): each write judged in O(log n), not by judging the whole run again.
    writes: WriteJudge = field(default_factory=WriteJudge)
    expired: dict[str, float] = field(default_factory=dict)  # client -> when its lease ended
    rounds: dict[str, Rounds] = field(default_factory=dict)
    linking: dict[str, list[str]] = field(default_factory=dict)  # client -> its last link click
    burst: dict[str, str] = field(default_factory=dict)  # client -> the op it fans out now
    releasing: set[str] = field(default_factory=set)  # clients whose release deletes their key
    sessions: dict[str, str] = field(default_factory=dict)  # client -> its session's last state

    # -- what the run has done so far ---------------------------------------------------------

    @property
    def fences(self) -> bool:
        service = BACKENDS.get(str(self.backend))
        return service is None or service.fencing

    @property
    def lock(self) -> Variant | None:
        """The lock's variant as the catalogue describes it: its words for the lease and what
        the server ends (None for an unknown backend)."""
        service = BACKENDS.get(str(self.backend))
        return service.variant(self.variant) if service is not None else None

    @property
    def election(self) -> bool:
        """A leader election: its grants are elections, its tokens epochs."""
        service = BACKENDS.get(str(self.backend))
        chosen = service.variant(self.variant) if service is not None else None
        return chosen is not None and chosen.election

    @property
    def token_name(self) -> str:
        """What the service calls its fencing token: ``czxid``, ``revision``, an ``epoch``."""
        return "epoch" if self.election else TOKEN_NAMES.get(str(self.backend), "token")

    @property
    def fan_out(self) -> bool:
        """A lock asked of every server at once (Redlock): each reply names its server."""
        return self.backend == "redlock"

    def token(self, value: object) -> str:
        """A fencing token by its service's own name: ``token 3``, ``czxid 8``, ``revision 7``."""
        if value is None or not self.fences:
            return "no token"
        return f"{self.token_name} {value}"

    def request_of(self, reply: EventJson) -> EventJson:
        """The request a reply answers (empty when the run never showed it)."""
        return self.requests.get((str(reply.get("actor", "?")), reply.get("call")), {})

    def judge(self, request: EventJson, e: EventJson) -> Write | None:
        """A write as the checker will judge it: the same rule, on the grants so far."""
        if not request or not e.get("accepted"):
            return None
        try:
            return self.writes.judge(e, request)
        except (KeyError, TypeError, ValueError):  # an imported run's odd event: not judged
            return None

    # -- rounds: an acquire refused and tried again ------------------------------------------

    def round_of(self, e: EventJson, who: str) -> int:
        """The round of ``who``'s current acquire this message belongs to (0: none)."""
        state = self.rounds.get(who)
        if e.get("kind") == "request" and e.get("op") == "acquire":
            if state is None:
                return 1
            return state.number if state.open else state.number + 1
        return state.number if state is not None else 0

    def undoing(self, e: EventJson) -> bool:
        """Whether ``e`` undoes a refused round (Redlock releases every node it asked)."""
        state = self.rounds.get(str(e.get("actor")))
        return state is not None and state.refused == state.number and not state.open

    def fold(self, e: EventJson, who: str) -> str:
        """What the diagram folds if ``e`` settles ``who``'s round as refused."""
        state = self.rounds.get(who)
        if state is None or not self._settles(state, e):
            return ""
        if state.number < FOLD_FROM:
            return ""
        if state.number == FOLD_FROM:
            return f"round {FOLD_FROM} refused"
        return f"rounds {FOLD_FROM}–{state.number} refused"

    @staticmethod
    def _settles(state: Rounds, e: EventJson) -> bool:
        # a single node's yes does not settle a round: the grant follows
        return state.open and not (e.get("kind") == "reply" and e.get("ok"))

    # -- following: the one place the memory changes -----------------------------------------

    def see(self, e: EventJson) -> None:
        """Take in what ``e`` changes, once it has been said."""
        kind, who = e.get("kind"), str(e.get("actor", "?"))
        if kind == "request":
            self._requested(e, who)
        elif kind == "reply":
            self._replied(e, who)
        elif kind == "run_started":
            self._started(e)
        elif kind == "note" and "undoing" in str(e.get("text")):
            self._settle(e, who)  # a fan-out undoes a refused round
        else:
            self._follow(e, who)

    def _requested(self, e: EventJson, who: str) -> None:
        self.requests[(who, e.get("call"))] = e
        if e.get("op") == "acquire":
            state = self.rounds.setdefault(who, Rounds())
            if not state.open:
                state.number, state.open, state.yes, state.asked = state.number + 1, True, 0, 0
            state.asked += 1
        if self.fan_out and e.get("op") not in STORAGE_OPS:
            self.burst[who] = str(e.get("op"))

    def _replied(self, e: EventJson, who: str) -> None:
        self.burst.pop(who, None)
        request = self.requests.pop((who, e.get("call")), {})
        state, op, node = self.rounds.get(who), e.get("op"), str(e.get("from"))
        if state is not None and op == "acquire" and e.get("ok"):
            state.yes += 1
        if op == "write" and not e.get("error"):
            self._written(request, e)
        elif op == "acquire" and e.get("ok"):
            self.holders[node] = who
        elif op == "release" and e.get("ok") and self.holders.get(node) == who:
            del self.holders[node]
        if op == "acquire" and not self.fan_out:
            self._settle(e, who)

    def _written(self, request: EventJson, e: EventJson) -> None:
        """The storage took a write: it holds its value; a versioned one judges later ones."""
        if e.get("duplicate") or e.get("accepted") is False:
            return
        self.stored = request or e
        if "found" in e and self.judge(request, e) is not None:
            self.writes.see(e)  # who made its version: a later outdated write names it

    def _settle(self, e: EventJson, who: str) -> None:
        state = self.rounds.get(who)
        if state is not None and self._settles(state, e):
            state.open, state.refused = False, state.number

    def _started(self, e: EventJson) -> None:
        backend, variant = e.get("backend"), e.get("variant")
        self.backend = str(backend) if backend else self.backend
        self.variant = str(variant) if variant else self.variant
        kind = e.get("storage_kind")
        self.storage = str(kind) if kind else self.storage
        self.nodes = [str(n) for n in items(e.get("nodes") or [])]
        self.writes.see(e)  # whether a lock is in play at all (backend "none")

    def _follow(self, e: EventJson, who: str) -> None:
        """What events other than messages change: who holds what, whose lease ended."""
        kind = e.get("kind")
        if kind == "granted":
            self._granted(e)
            self.expired.pop(who, None)
            for node in items(e.get("nodes") or [e.get("node")]):
                self.holders[str(node)] = who
            self.releasing.discard(who)
        if kind in ("granted", "acquire_failed"):
            self.rounds.pop(who, None)
        elif kind == "releasing":
            self.releasing.add(who)
        elif kind in ("expired", "deleted"):
            self._ended(e, who)
        elif kind in ("session", "replicated", "role"):
            self._grouped(e, who)
        elif kind in ("crashed", "restarted") and server_kind(who) is not None:
            if e.get("persistence") != "fsync":  # a crash or an empty restart forgets its keys
                self.holders.pop(who, None)
        elif kind == "step" and e.get("client") and e.get("do") in ("partition", "heal", "delay"):
            self.linking[str(e["client"])] = [str(n) for n in items(e.get("nodes") or [])]

    def _granted(self, e: EventJson) -> None:
        with contextlib.suppress(KeyError, TypeError, ValueError):  # an odd imported grant
            self.writes.see(e)

    def _grouped(self, e: EventJson, who: str) -> None:
        """What a group of servers did: a session's state, a key copied, a role changed."""
        kind = e.get("kind")
        if kind == "session":
            self.sessions[who] = str(e.get("state"))
        elif kind == "replicated":  # the replica has the key too, and refuses in its name
            self.holders[who] = str(e.get("holder"))
        elif e.get("role") == "replica":  # it copies its new primary's keys
            self.holders.pop(who, None)

    def _ended(self, e: EventJson, node: str) -> None:
        """A server ended a holder's key (expired or deleted)."""
        if self.holders.get(node) == e.get("holder"):
            del self.holders[node]
        if e.get("kind") == "expired" and e.get("holder") is not None:
            self.expired[str(e["holder"])] = number(e.get("t_ms") or 0)


# How an event kind is said: from the run so far and the event, never changing either.
Sayer = Callable[[Memory, EventJson], Said]
