"""What a narrator remembers of one run so far: the first layer of the
:class:`~lockviz.narrator.events.Narrator` (:class:`Memory`).

It knows the backend and its servers, who holds which key, whose lease a server ended, which
write the storage holds and the writes' judges, and each client's acquire round by round.
:meth:`Memory._follow` takes in each event that is not a message; the message layer
(:mod:`lockviz.narrator.messages`) keeps its part as it speaks. An acquire that is refused
and tried again is a series of rounds (``round`` and ``fold``, see the package docstring):
:meth:`Memory._round_of` numbers them, :meth:`Memory._settle` closes a refused one and says what
the diagram folds.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockviz.catalogue import BACKENDS, server_kind
from lockviz.narrator.words import Event, items, number

# What each lock service's fencing token is, as its own documentation names it.
TOKEN_NAMES = {"zookeeper": "czxid", "etcd": "revision"}
FOLD_FROM = 2  # the first refused round stays drawn; later ones fold


class Memory:
    """One run's events so far, as its narrator needs them (see the module docstring)."""

    def __init__(self, backend: str | None = None) -> None:
        self.backend = backend
        self.nodes: list[str] = []
        self.requests: dict[tuple[str, object], Event] = {}  # (actor, call): the request
        self.holders: dict[str, str] = {}  # lock node -> the client whose key it holds
        self.stored: Event | None = None  # the write request whose value the storage holds
        self.judged: list[Event] = []  # run_started, grants, versioned writes: a write's judges
        self.expired: dict[str, float] = {}  # client -> when a server ended its lease/session
        self.rounds: dict[str, _Rounds] = {}
        self.linking: dict[str, list[str]] = {}  # client -> the nodes of its last link click
        self.burst: dict[str, str] = {}  # client -> the op of the fan-out it is sending now
        self.releasing: set[str] = set()  # clients whose own release is deleting their key

    # -- what the run has done so far ---------------------------------------------------------

    @property
    def fences(self) -> bool:
        service = BACKENDS.get(str(self.backend))
        return service is None or service.fencing

    @property
    def fan_out(self) -> bool:
        """A lock asked of every server at once (Redlock): each reply names its server."""
        return self.backend == "redlock"

    def token(self, value: object) -> str:
        """A fencing token by its service's own name: ``token 3``, ``czxid 8``, ``revision 7``."""
        if value is None or not self.fences:
            return "no token"
        return f"{TOKEN_NAMES.get(str(self.backend), 'token')} {value}"

    def _follow(self, e: Event, who: str) -> None:
        """What events other than messages change: who holds what, whose lease ended."""
        kind = e["kind"]
        if kind == "run_started":
            self.judged.append(e)  # whether a lock is in play at all (backend "none")
        elif kind == "granted":
            self.judged.append(e)
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
        elif kind in ("crashed", "restarted") and server_kind(who) is not None:
            if e.get("persistence") != "fsync":  # a crash or an empty restart forgets its keys
                self.holders.pop(who, None)
        elif kind == "step" and e.get("client") and e.get("do") in ("partition", "heal", "delay"):
            self.linking[str(e["client"])] = [str(n) for n in items(e.get("nodes") or [])]

    def _ended(self, e: Event, node: str) -> None:
        """A server ended a holder's key (expired or deleted)."""
        if self.holders.get(node) == e.get("holder"):
            del self.holders[node]
        if e["kind"] == "expired" and e.get("holder") is not None:
            self.expired[str(e["holder"])] = number(e.get("t_ms") or 0)

    # -- rounds: an acquire refused and tried again ------------------------------------------

    def _round_of(self, e: Event, who: str) -> int:
        """The round of ``who``'s current acquire this message belongs to (0: none)."""
        state = self.rounds.get(who)
        if e.get("kind") == "request" and e.get("op") == "acquire":
            if state is None:
                state = self.rounds[who] = _Rounds()
            if not state.open:
                state.number, state.open, state.yes, state.asked = state.number + 1, True, 0, 0
            state.asked += 1
            return state.number
        if state is None:
            return 0
        if e.get("kind") == "reply" and e.get("op") == "acquire" and e.get("ok"):
            state.yes += 1
        return state.number

    def _undoing(self, e: Event) -> bool:
        state = self.rounds.get(str(e.get("actor")))
        return state is not None and state.refused == state.number and not state.open

    def _settle(self, e: Event, who: str) -> str:
        """A round refused: close it and say what folds."""
        state = self.rounds.get(who)
        if state is None or not state.open:
            return ""
        if e.get("kind") == "reply" and e.get("ok"):
            return ""  # a single node's yes: the grant follows
        state.open, state.refused = False, state.number
        if state.number < FOLD_FROM:
            return ""
        if state.number == FOLD_FROM:
            return f"round {FOLD_FROM} refused"
        return f"rounds {FOLD_FROM}–{state.number} refused"


@dataclass
class _Rounds:
    """One client's acquire, round by round."""

    number: int = 0
    open: bool = False
    refused: int = 0  # the last round that was refused
    yes: int = 0  # this round's yeses
    asked: int = 0
