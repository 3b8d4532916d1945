"""What a narrator remembers of one run so far: :class:`Memory`, which every sayer reads with the
model of the event it says (:mod:`.rows`).

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
from dataclasses import dataclass, field

import lockviz.lab.events as kinds
from algorithms.writes import Write as Write
from algorithms.writes import WriteJudge
from lockviz.catalogue import BACKENDS, Variant, server_kind
from lockviz.lab.events import BaseEvent, as_json
from lockviz.narrator.words import number

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
    requests: dict[tuple[str, object], kinds.Request] = field(default_factory=dict)  # (actor, call)
    holders: dict[str, str] = field(default_factory=dict)  # lock node -> whose key it holds
    stored: kinds.Request | kinds.Reply | None = None  # the write whose value the storage holds
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

    def request_of(self, reply: kinds.Reply) -> kinds.Request | None:
        """The request a reply answers (None when the run never showed it)."""
        return self.requests.get((str(reply.actor), reply.call))

    def judge(self, request: kinds.Request | None, e: kinds.Reply) -> Write | None:
        """A write as the checker will judge it: the same rule, on the grants so far."""
        if request is None or not e.accepted:
            return None
        try:  # the checker's rule reads events as JSON
            return self.writes.judge(as_json(e), as_json(request))
        except (KeyError, TypeError, ValueError):  # an imported run's odd event: not judged
            return None

    # -- rounds: an acquire refused and tried again ------------------------------------------

    def round_of(self, e: kinds.Request | kinds.Reply, who: str) -> int:
        """The round of ``who``'s current acquire this message belongs to (0: none)."""
        state = self.rounds.get(who)
        if isinstance(e, kinds.Request) and e.op == "acquire":
            if state is None:
                return 1
            return state.number if state.open else state.number + 1
        return state.number if state is not None else 0

    def undoing(self, e: BaseEvent) -> bool:
        """Whether ``e`` undoes a refused round (Redlock releases every node it asked)."""
        state = self.rounds.get(str(e.actor))
        return state is not None and state.refused == state.number and not state.open

    def fold(self, who: str, yes: bool = False) -> str:
        """What the diagram folds if an event settles ``who``'s round as refused (a node's
        ``yes`` settles nothing: the grant follows)."""
        state = self.rounds.get(who)
        if state is None or not self._settles(state, yes):
            return ""
        if state.number < FOLD_FROM:
            return ""
        if state.number == FOLD_FROM:
            return f"round {FOLD_FROM} refused"
        return f"rounds {FOLD_FROM}–{state.number} refused"

    @staticmethod
    def _settles(state: Rounds, yes: bool) -> bool:
        return state.open and not yes

    # -- following: the one place the memory changes -----------------------------------------

    def see(self, e: BaseEvent) -> None:
        """Take in what ``e`` changes, once it has been said."""
        who = str(e.actor)
        if isinstance(e, kinds.Request):
            self._requested(e, who)
        elif isinstance(e, kinds.Reply):
            self._replied(e, who)
        elif isinstance(e, kinds.RunStarted):
            self._started(e)
        elif isinstance(e, kinds.Note) and "undoing" in str(e.text):
            self._settle(who)  # a fan-out undoes a refused round
        else:
            self._follow(e, who)

    def _requested(self, e: kinds.Request, who: str) -> None:
        self.requests[(who, e.call)] = e
        if e.op == "acquire":
            state = self.rounds.setdefault(who, Rounds())
            if not state.open:
                state.number, state.open, state.yes, state.asked = state.number + 1, True, 0, 0
            state.asked += 1
        if self.fan_out and e.op not in STORAGE_OPS:
            self.burst[who] = str(e.op)

    def _replied(self, e: kinds.Reply, who: str) -> None:
        self.burst.pop(who, None)
        request = self.requests.pop((who, e.call), None)
        state, op, node = self.rounds.get(who), e.op, str(e.frm)
        if state is not None and op == "acquire" and e.ok:
            state.yes += 1
        if op == "write" and not e.error:
            self._written(request, e)
        elif op == "acquire" and e.ok:
            self.holders[node] = who
        elif op == "release" and e.ok and self.holders.get(node) == who:
            del self.holders[node]
        if op == "acquire" and not self.fan_out:
            self._settle(who, bool(e.ok))

    def _written(self, request: kinds.Request | None, e: kinds.Reply) -> None:
        """The storage took a write: it holds its value; a versioned one judges later ones."""
        if e.duplicate or e.accepted is False:
            return
        self.stored = request if request is not None else e
        if "found" in e.model_fields_set and self.judge(request, e) is not None:
            self.writes.see(as_json(e))  # who made its version: a later outdated write names it

    def _settle(self, who: str, yes: bool = False) -> None:
        state = self.rounds.get(who)
        if state is not None and self._settles(state, yes):
            state.open, state.refused = False, state.number

    def _started(self, e: kinds.RunStarted) -> None:
        self.backend = str(e.backend) if e.backend else self.backend
        self.variant = str(e.variant) if e.variant else self.variant
        self.storage = str(e.storage_kind) if e.storage_kind else self.storage
        self.nodes = [str(n) for n in e.nodes or []]
        self.writes.see(as_json(e))  # whether a lock is in play at all (backend "none")

    def _follow(self, e: BaseEvent, who: str) -> None:
        """What events other than messages change: who holds what, whose lease ended."""
        if isinstance(e, kinds.Granted):
            self._granted(e)
            self.expired.pop(who, None)
            for node in e.nodes or [e.node]:
                self.holders[str(node)] = who
            self.releasing.discard(who)
        if isinstance(e, kinds.Granted | kinds.AcquireFailed):
            self.rounds.pop(who, None)
        elif isinstance(e, kinds.Releasing):
            self.releasing.add(who)
        elif isinstance(e, kinds.Expired | kinds.Deleted):
            self._ended(e, who)
        elif isinstance(e, kinds.Session | kinds.Replicated | kinds.Role):
            self._grouped(e, who)
        elif isinstance(e, kinds.Crashed | kinds.Restarted) and server_kind(who) is not None:
            # a crash or an empty restart forgets its keys
            if not isinstance(e, kinds.Restarted) or e.persistence != "fsync":
                self.holders.pop(who, None)
        elif isinstance(e, kinds.Step) and e.client and e.do in ("partition", "heal", "delay"):
            self.linking[str(e.client)] = [str(n) for n in e.nodes or []]

    def _granted(self, e: kinds.Granted) -> None:
        with contextlib.suppress(KeyError, TypeError, ValueError):  # an odd imported grant
            self.writes.see(as_json(e))

    def _grouped(self, e: kinds.Session | kinds.Replicated | kinds.Role, who: str) -> None:
        """What a group of servers did: a session's state, a key copied, a role changed."""
        if isinstance(e, kinds.Session):
            self.sessions[who] = str(e.state)
        elif isinstance(
            e, kinds.Replicated
        ):  # the replica has the key too, and refuses in its name
            self.holders[who] = str(e.holder)
        elif e.role == "replica":  # it copies its new primary's keys
            self.holders.pop(who, None)

    def _ended(self, e: kinds.Expired | kinds.Deleted, node: str) -> None:
        """A server ended a holder's key (expired or deleted)."""
        if self.holders.get(node) == e.holder:
            del self.holders[node]
        if isinstance(e, kinds.Expired) and e.holder is not None:
            self.expired[str(e.holder)] = number(e.t_ms or 0)
