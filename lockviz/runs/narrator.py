"""Runs in words: every event, click and verdict as lockviz says it, in one place.

The pages, the exports and the terminal all read their words here; the browser receives them
as data with each event (``said``), never makes its own. An event is said in a few ways:

* ``text``: a sentence with its subject, for the story panel, a replay's current event and
  the walkthrough ("alice ← storage: write REJECTED (1 < 2)");
* ``label``: the diagram's label, on the event's arrow or beside its mark ("SET NX PX 2000",
  "✖ redis-3 said no: key held by bob", "alice's lease expired"); a ``\\n`` starts a new line;
* ``short``: the same label cut to what matters ("✖ redis-3"), for where the label does not fit;
* ``mark``: the words of a second mark the event makes elsewhere: what the storage did with a
  write ("stored A (token 1)", "A (token 1) overwrote B (token 2)"), what a lease's end leaves
  beside a holder that still believes ("believes it holds\\n(lease gone)"), the verdict's
  overlaps at the end of a run (one line each);
* ``tone``: ``"damage"`` on an accepted stale write, which the diagram draws in red;
* ``round`` and ``fold``: an acquire that is refused and retried is a series of rounds;
  ``round`` numbers the round an event belongs to, and the event that settles a refused round
  from the second on says what the diagram folds away ("rounds 2–23 refused").

Some words need what came before (a write's reply names the value its request carried, a refusal
names who holds the key, a stale write names what it overwrote), so a :class:`Narrator` follows
one run's events in order. Nothing here trusts an event: an import may carry any JSON, and a
missing field is said as "?", never raised. Steps are numbered once, 1 to n in script order,
narrated or not: the story, the diagram's badges, the replay and the exports all use
:func:`step_number`.

One module by design, past the usual ~300 lines: every word about a run lives here and nowhere
else, so a wording is changed once and reaches every page, export and the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from algorithms import checker
from lockviz.catalogue import BACKENDS, server_kind

Event = Mapping[str, Any]

# What each lock service's fencing token is, as its own documentation names it.
TOKEN_NAMES = {"zookeeper": "czxid", "etcd": "revision"}
FOLD_FROM = 2  # the first refused round stays drawn; later ones fold


@dataclass(frozen=True)
class Said:
    phrase: str  # what happened, without its subject (the terminal prints the actor apart)
    text: str  # a sentence with its subject
    label: str = ""  # the diagram's label
    mark: str = ""  # a second mark's words (see the module docstring)
    short: str = ""  # the label cut short, for where it does not fit
    tone: str = ""  # "damage": an accepted stale write
    round: int = 0  # the acquire round this event belongs to (0: none)
    fold: str = ""  # on the event that settles a refused round: what the diagram folds

    def as_data(self) -> dict[str, Any]:
        """What the browser gets with each event (optional words only when there are some)."""
        data: dict[str, Any] = {"text": self.text, "label": self.label, "mark": self.mark}
        for key in ("short", "tone", "round", "fold"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        return data


def signed_ms(ms: Any) -> str:
    """``+20 s``, ``−500 ms``: a clock jump's size as a learner reads it."""
    if not isinstance(ms, int | float):
        return "?"
    sign = "\u2212" if ms < 0 else "+"
    return f"{sign}{abs(ms) / 1000:g} s" if abs(ms) >= 1000 else f"{sign}{abs(ms):g} ms"


def duration(ms: Any) -> str:
    """``2 s``, ``1.5 s``, ``500 ms``: a lease or a pause as a learner reads it."""
    if not isinstance(ms, int | float):
        return "?"
    return f"{ms / 1000:g} s" if abs(ms) >= 1000 else f"{ms:g} ms"


def seconds(ms: Any) -> str:
    return f"{ms / 1000:.2f} s" if isinstance(ms, int | float) else "?"


def step_number(index: Any) -> str:
    """Step ``index`` (0-based in the script) as every page numbers it: 1, 2, 3 …"""
    return str(index + 1) if isinstance(index, int) and not isinstance(index, bool) else "?"


def plain_error(error: Any) -> str:
    """A client library's error as a learner reads it: "connection reset", not errno 104."""
    raw = str(error or "").strip()
    low = raw.lower()
    for needle, words in (
        ("reset by peer", "connection reset"),
        ("connection refused", "connection refused"),
        ("closed the connection", "connection closed by the server"),
        ("closed by server", "connection closed by the server"),
        ("idle-in-transaction", "session ended (idle in transaction too long)"),
        ("lease not found", "lease not found"),
    ):
        if needle in low:
            return words
    found = re.match(r"no reply within (\d+) ms", raw)
    if found:
        return f"no reply within {found.group(1)} ms"
    if "timed out" in low or "timeout" in low:
        return "timed out"
    raw = re.sub(r"\s*\((?:Error|errno) [^)]*\)", "", raw)
    raw = re.sub(r"\b\d{1,3}(?:\.\d{1,3}){3}:\d+\b", "the server", raw)
    return raw[:80] or "error"


def _queue_name(name: Any) -> str:
    """``alice.d5ad8ba2.lock-0000000003`` as a learner reads it: ``alice #3``."""
    text = str(name).rsplit("/", 1)[-1]
    found = re.match(r"([^.]+)\..*lock-0*(\d+)$", text)
    return f"{found.group(1)} #{found.group(2)}" if found else text


class Narrator:
    """Says one run's events, in order (see the module docstring)."""

    def __init__(self, backend: str | None = None) -> None:
        self.backend = backend
        self.nodes: list[str] = []
        self.requests: dict[tuple[Any, Any], Event] = {}
        self.holders: dict[str, str] = {}  # lock node -> the client whose key it holds
        self.stored: Event | None = None  # the write request whose value the storage holds
        self.judged: list[Event] = []  # run_started, grants, versioned writes: a write's judges
        self.expired: dict[str, float] = {}  # client -> when a server ended its lease/session
        self.rounds: dict[str, _Rounds] = {}
        self.linking: dict[str, list[str]] = {}  # client -> the nodes of its last link click
        self.burst: dict[str, str] = {}  # client -> the op of the fan-out it is sending now
        self.releasing: set[str] = set()  # clients whose own release is deleting their key

    # -- the entry points -------------------------------------------------------------------

    def said(self, e: Event) -> Said:
        try:
            return self._said(e)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            kind = str(e.get("kind"))
            return Said(kind, f"{e.get('actor', '?')} {kind}")

    def narrate(self, e: Event) -> dict[str, Any]:
        """The event as the browser gets it: its fields and, under ``said``, its words."""
        return {**e, "said": self.said(e).as_data()}

    def _said(self, e: Event) -> Said:
        kind, who = e["kind"], str(e.get("actor", "?"))
        if kind == "run_started":
            self.backend = e.get("backend") or self.backend
            self.nodes = [str(n) for n in e.get("nodes") or []]
        if kind == "request":
            return self._request(e, who)
        if kind == "reply":
            return self._reply(e, who)
        said = self._other(e, who)
        self._follow(e, who)
        return said

    # -- what the run has done so far ---------------------------------------------------------

    @property
    def fences(self) -> bool:
        service = BACKENDS.get(str(self.backend))
        return service is None or service.fencing

    @property
    def fan_out(self) -> bool:
        """A lock asked of every server at once (Redlock): each reply names its server."""
        return self.backend == "redlock"

    def token(self, value: Any) -> str:
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
            for node in e.get("nodes") or [e.get("node")]:
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
            self.linking[str(e["client"])] = [str(n) for n in e.get("nodes") or []]

    def _ended(self, e: Event, node: str) -> None:
        """A server ended a holder's key (expired or deleted)."""
        if self.holders.get(node) == e.get("holder"):
            del self.holders[node]
        if e["kind"] == "expired" and e.get("holder") is not None:
            self.expired[str(e["holder"])] = float(e.get("t_ms") or 0)

    # -- protocol messages ----------------------------------------------------------------

    def _request(self, e: Event, who: str) -> Said:
        self.requests[(who, e.get("call"))] = e
        rounds = self._round_of(e, who)
        phrase = f"→ {e.get('to')}  {e.get('op')}{self._args(e)}"
        text = f"{who} → {e.get('to')}: {e.get('op')}{self._args(e)}"
        label = self._request_label(e)
        if self.fan_out and e.get("op") not in ("write", "read", "check"):  # one label per fan-out
            first = self.burst.get(who) != e.get("op")
            self.burst[who] = str(e.get("op"))
            label = f"{label} → all {len(self.nodes)}" if first and self.nodes else ""
        return Said(phrase, text, label, round=rounds)

    def _args(self, e: Event) -> str:
        args = []
        if e.get("op") == "write":
            args.append(f"value {e.get('value')!r} with {self.token(e.get('token'))}")
            args.extend(_write_basis(e))
        elif e.get("op") == "check":
            args.append(_check_subject(e))
        elif e.get("ttl_ms") is not None:
            args.append(f"lease {e['ttl_ms']} ms")
        if e.get("unsafe"):
            args.append("plain DEL")
        if e.get("path") and e.get("op") in ("watch", "delete"):
            args.append(_queue_name(e["path"]))
        return f" ({', '.join(args)})" if args else ""

    def _request_label(self, e: Event) -> str:
        """Redis users recognise the real command; other backends get their own verbs."""
        ttl, op = e.get("ttl_ms"), str(e.get("op") or "request")
        if op == "acquire":
            if self.backend in (None, "redis", "redlock"):
                return "SET NX" + (f" PX {ttl}" if ttl is not None else "")
            if self.backend == "postgres":
                return "try advisory lock" if ttl is None else f"advisory lock ({duration(ttl)})"
            return "acquire" + (f" ttl {ttl} ms" if ttl is not None else "")
        if op == "write":
            value = e.get("value") if e.get("value") is not None else ""
            return f"write {value} ({self.token(e.get('token'))})" + "".join(
                f" · {basis}" for basis in _write_basis(e)
            )
        if op in _STORAGE_REQUESTS:
            return _STORAGE_REQUESTS[op](e)
        if op == "release" and self.fan_out:
            return "undo: DEL if ours" if self._undoing(e) else "DEL if ours"
        words = _REQUESTS.get(op)
        if words is not None:
            return words(e)
        return op.replace("_", " ") + (" (plain DEL)" if e.get("unsafe") else "")

    def _reply(self, e: Event, who: str) -> Said:
        self.burst.pop(who, None)
        request = self.requests.pop((who, e.get("call")), {})
        rounds = self._round_of(e, who)
        result = self._result(e)
        phrase = f"← {e.get('from')}  {e.get('op')}: {result}"
        text = f"{who} ← {e.get('from')}: {e.get('op')} {result}"
        label, short = self._reply_label(e)
        if e.get("op") == "write" and not e.get("error"):
            mark, tone = self._write_mark(request, e)
            return Said(phrase, text, label, mark, short, tone)
        self._hold(e, who)
        fold = self._settle(e, who) if e.get("op") == "acquire" and not self.fan_out else ""
        return Said(phrase, text, label, "", short, "", rounds, fold)

    def _hold(self, e: Event, who: str) -> None:
        node = str(e.get("from"))
        if e.get("op") == "acquire" and e.get("ok"):
            self.holders[node] = who
        elif e.get("op") == "release" and e.get("ok") and self.holders.get(node) == who:
            del self.holders[node]

    def _result(self, e: Event) -> str:
        if e.get("op") in _STORAGE_RESULTS and e.get("ok"):
            return _STORAGE_RESULTS[str(e["op"])](e)
        if e.get("op") == "write" and "accepted" in e:
            if e.get("duplicate"):
                return _duplicate(e)
            return "accepted" if e["accepted"] else f"REJECTED ({e.get('reason')})"
        if e.get("error"):
            return f"failed: {plain_error(e['error'])}"
        if e.get("ok"):
            return f"OK {self.token(e['token'])}" if e.get("token") is not None else "OK"
        refused = self._refusal(e)
        return refused or str(e.get("reason") or "no")

    def _refusal(self, e: Event) -> str:
        """Why a server said no, with whom it is holding the key for when we know."""
        if e.get("op") not in ("acquire", "release") or e.get("ok") or e.get("error"):
            return ""
        holder = self.holders.get(str(e.get("from")))
        if e.get("op") == "release":
            mine = holder is None or holder == e.get("actor")
            return "our key is gone" if mine else f"key held by {holder}"
        return f"key held by {holder}" if holder else "key held by another client"

    def _reply_label(self, e: Event) -> tuple[str, str]:
        """(label, short) for a reply arrow."""
        op = e.get("op")
        if op in ("write", *_STORAGE_RESULTS) and not e.get("error"):
            return self._storage_label(e)
        if self.fan_out:
            return self._node_reply(e)
        if e.get("error"):
            return f"error: {plain_error(e['error'])}", "error"
        if op == "acquire" and not e.get("ok"):
            nil = "nil" if self.backend in (None, "redis") else "no"
            return f"{nil}: {self._refusal(e)}", nil
        if not e.get("ok"):
            reason = e.get("reason")
            return "failed" + (f": {reason}" if reason else ""), "failed"
        words = _REPLIES.get(str(op))
        if words is not None:
            return words(self, e)
        if e.get("token") is not None and self.token(e["token"]) != "no token":
            return f"OK · {self.token(e['token'])}", "OK"
        return "OK", ""

    def _storage_label(self, e: Event) -> tuple[str, str]:
        """(label, short) for the storage's answer, or the lock service's to its check."""
        if e.get("op") in _STORAGE_RESULTS:
            return _STORAGE_RESULTS[str(e["op"])](e), ""
        if e.get("duplicate"):
            return _duplicate(e), ""
        if e.get("accepted") is False:
            return f"REJECTED {self._compared(e)}".strip(), "REJECTED"
        return "accepted", ""

    def _node_reply(self, e: Event) -> tuple[str, str]:
        """One node's answer in a fan-out: named, with ✔ or ✖ and why not."""
        node = str(e.get("from"))
        if e.get("error"):
            return f"✖ {node} unreachable: {plain_error(e['error'])}", f"✖ {node}"
        if e.get("op") == "release" and self._undoing(e):
            return "", ""  # the undo of a refused round: its replies are in the tooltips
        if e.get("ok"):
            return f"✔ {node}", ""
        why = self._refusal(e) or e.get("reason")
        return f"✖ {node} said no: {why or 'no'}", f"✖ {node}"

    @staticmethod
    def _queue(children: Any) -> str:
        names = [_queue_name(c) for c in children] if isinstance(children, list) else []
        if not names:
            return "queue: empty"
        shown = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
        return f"queue: {shown}"

    def _compared(self, e: Event) -> str:
        """A rejected write's tokens, compared: ``1 < 2``, ``czxid 6 < 8``."""
        token, highest = e.get("token"), e.get("highest")
        if token is None or highest is None:
            return str(e.get("reason") or "")
        name = TOKEN_NAMES.get(str(self.backend))
        return f"{name + ' ' if name else ''}{token} < {highest}"

    def _write_mark(self, request: Event, e: Event) -> tuple[str, str]:
        """(what the storage did with a write, its tone) beside its mark on the storage."""
        if e.get("duplicate"):
            return f"repeat of key {request.get('key', '?')}: not applied again", ""
        token = e.get("token", request.get("token"))
        if e.get("accepted") is False:
            return f"REJECTED {self._compared(e) or self.token(token)}", ""
        value = request.get("value")
        mine = f"{value if value is not None else ''}{self._paren_token(token)}"
        before, self.stored = self.stored, request or e
        judged = self._judge(request, e)
        if judged is None or not judged.stale:
            return f"stored {mine}", ""
        if before is not None and before.get("actor") != e.get("actor"):
            old = f"{before.get('value')}{self._paren_token(before.get('token'))}"
            return f"{mine} overwrote {old}", "damage"
        if judged.superseded_by:
            return f"{mine} stored after {judged.superseded_by} took the lock", "damage"
        return f"{mine} stored without holding the lock", "damage"

    def _paren_token(self, token: Any) -> str:
        return f" ({self.token(token)})" if token is not None and self.fences else ""

    def _judge(self, request: Event, e: Event) -> checker.Write | None:
        """The write as the checker will judge it: the same rule, on the grants so far."""
        if not request or not e.get("accepted"):
            return None
        try:
            judged = checker.writes([*self.judged, request, e])
        except (KeyError, TypeError, ValueError):  # an imported run's odd event: not judged
            return None
        if "found" in e:  # a versioned write: a later out-of-date one names whose it lost
            self.judged.append(e)
        return judged[-1] if judged else None

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

    # -- everything else ------------------------------------------------------------------

    def _other(self, e: Event, who: str) -> Said:
        kind = str(e["kind"])
        if kind == "note":
            return self._note(e, who)
        if kind == "lost":
            return self._lost(e, who)
        if kind == "link":
            return self._link(e, who)
        if kind in ("expired", "deleted"):
            return self._server_end(e, who)
        if kind == "run_finished":
            return self._finished(e)
        if kind == "woken":
            text = f"woken by its watch: {e.get('by')}"
            return Said(text, f"{who} {text}", f"watch fired: {e.get('by')}", short="watch fired")
        if kind == "granted":
            label, short = self._granted_label(e)
            return Said(_granted(e, self), f"{who} {_granted(e, self)}", label, short=short)
        if kind == "step":
            words = click(e)
            text = f"step {step_number(e.get('index'))}: {words}"
            if e.get("say"):
                text += f" — {e['say']}"
            return Said(text, text, words)
        phrase, label = self._phrase(e)
        return Said(phrase, phrase if who == "lab" else f"{who} {phrase}", label)

    def _granted_label(self, e: Event) -> tuple[str, str]:
        ttl = e.get("ttl_ms")
        if self.backend == "redlock" or e.get("nodes"):
            nodes = e.get("nodes") or []
            got = f"{len(nodes)} of {len(self.nodes) or '?'}"
            return f"lease {duration(ttl)} on {got}\nno fencing token", got
        lease = "session" if self.backend == "zookeeper" else "lease"
        held = f"{lease} {duration(ttl)}" if ttl else "no lease"
        token = self.token(e.get("token"))
        return f"{held} · {token}", token if token != "no token" else held

    def _note(self, e: Event, who: str) -> Said:
        text = str(e.get("text"))
        state = self.rounds.get(who)
        if state is None or not state.open or "undoing" not in text:
            return Said(text, f"{who}: {text}", text)
        quorum = len(self.nodes) // 2 + 1 if self.nodes else 0
        label = (
            f"{state.yes} of {len(self.nodes)} said yes, {quorum} needed: undo everywhere"
            if state.yes < quorum
            else "a majority said yes, too late: undo everywhere"
        )
        number, fold = state.number, self._settle(e, who)
        return Said(text, f"{who}: {text}", label, short=f"{state.yes} of {len(self.nodes)}",
                    round=number, fold=fold)  # fmt: skip

    def _lost(self, e: Event, who: str) -> Said:
        reason = str(e.get("reason") or "lock gone")
        ended = self.expired.get(who)
        if self.backend == "zookeeper" and ended is not None:
            text = (
                f"learned it lost the lock: ZooKeeper had expired its session at "
                f"{seconds(ended)} (it noticed when its connection was {reason.split(':')[0]})"
            )
            return Said(text, f"{who} {text}", "lost: session expired", short="lost")
        if "suspended" in reason:
            label = "lost: connection suspended"
        elif "expired" in reason:
            label = "lost: " + ("session expired" if "session" in reason else "lease expired")
        else:
            label = f"lost: {reason.split(':')[0]}"
        text = f"learned it lost the lock: {reason}"
        return Said(text, f"{who} {text}", label, short="lost")

    def _server_end(self, e: Event, who: str) -> Said:
        holder = str(e.get("holder") or "?")
        gap = "believes it holds\n(lease gone)"
        state = self.rounds.get(holder)  # a key left by a round of an acquire still going on
        rounds = state.number if state is not None else 0
        if e["kind"] == "expired":
            what = "session" if self.backend == "zookeeper" else "lease"
            phrase = f"{what} of {holder} EXPIRED on the server"
            return Said(phrase, f"{who}: {phrase}", f"{holder}'s {what} expired", gap, round=rounds)
        node = "lock node" if self.backend == "zookeeper" else "key"
        phrase = f"lock {node} of {holder} deleted"
        mine = holder in self.releasing  # its own release: the mark is enough
        label = "" if mine else f"deleted {holder}'s {node}"
        return Said(phrase, f"{who}: {phrase}", label, gap, round=rounds)

    def _link(self, e: Event, who: str) -> Said:
        phrase, label = _link(e)
        nodes = self.linking.get(who) or []
        node, mode = e.get("node"), e.get("mode")
        if not e.get("peers") and node in nodes and len(nodes) > 1:  # one click, several links
            names = ", ".join(nodes)
            label = {
                "pass": f"{who} ⇹ {names} healed",
                "delay": f"{who} ⇹ {names} delayed {e.get('ms')} ms",
            }.get(str(mode), f"✂ {who} ⇹ {names} cut ({mode})")
        elif mode in ("blackhole", "reset") and not e.get("peers"):
            label = "✂ " + label
        return Said(phrase, f"{who} {phrase}", label)

    def _finished(self, e: Event) -> Said:
        found = e.get("verdict")
        verdict: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        overlaps = [
            f"two holders: {' & '.join(map(str, o.get('clients') or []))} "
            f"({seconds(float(o['end_ms']) - float(o['start_ms']))})"
            for o in verdict.get("overlaps") or []
            if isinstance(o, Mapping)
        ]
        end = f"run end {seconds(e.get('t_ms'))}"
        return Said("run finished", "run finished", end, "\n".join(overlaps))

    def _phrase(self, e: Event) -> tuple[str, str]:
        """(what happened, its diagram label) for an event that is not a message."""
        say = _PHRASES.get(str(e["kind"]))
        return say(e) if say is not None else (str(e["kind"]), "")


@dataclass
class _Rounds:
    """One client's acquire, round by round."""

    number: int = 0
    open: bool = False
    refused: int = 0  # the last round that was refused
    yes: int = 0  # this round's yeses
    asked: int = 0


# Request labels by op, for the ops whose words need no more than the event.
_REQUESTS: dict[str, Callable[[Event], str]] = {
    "extend": lambda e: "extend" + (f" {e['ttl_ms']} ms" if e.get("ttl_ms") is not None else ""),
    "create": lambda e: "create sequential node",
    "children": lambda e: "list the queue" + (" + watch it" if e.get("watch") else ""),
    "watch": lambda e: f"watch {_queue_name(e.get('path'))}",
    "delete": lambda e: f"delete {_queue_name(e.get('path'))}",
}

# (label, short) of a yes, by op, where the yes carries more than "OK".
_REPLIES: dict[str, Callable[[Narrator, Event], tuple[str, str]]] = {
    "create": lambda n, e: (
        f"created {_queue_name(e.get('path'))} · {n.token(e.get('token'))}",
        "created",
    ),
    "children": lambda n, e: (Narrator._queue(e.get("children")), "queue"),
    "watch": lambda n, e: ("watching" if e.get("exists") else "already gone", ""),
    "delete": lambda n, e: ("deleted", ""),
    "lock": lambda n, e: (
        ("queued: waits its turn", "queued")
        if e.get("token") is None
        else (f"OK · {n.token(e['token'])}", "OK")
    ),
}


def _reason(reason: Any) -> str:
    """A client's own reason as it is, a library's error in plain words."""
    text = str(reason or "?")
    return plain_error(text) if "connection" in text or "Error" in text else text


def _released(e: Event) -> tuple[str, str]:
    if e.get("ok"):
        return "released", ""
    return f"released, but {e.get('reason', 'the lock was not ours')}", ""


def _paused(e: Event) -> tuple[str, str]:
    ms = f" {e['ms']} ms" if e.get("ms") is not None else ""
    return f"FROZEN (SIGSTOP) for {e.get('ms')} ms", f"GC pause (SIGSTOP){ms}"


def _crashed(e: Event) -> tuple[str, str]:
    server = server_kind(str(e.get("actor"))) is not None
    return "CRASHED (kill -9)", "kill -9" if server else "crashed (SIGKILL)"


def _clock_jumped(e: Event) -> tuple[str, str]:
    total = signed_ms(e.get("offset_ms"))
    return f"wall clock jumped {signed_ms(e.get('ms'))} (offset now {total})", (
        f"clock {signed_ms(e.get('ms') or 0)}"
    )


def _granted(e: Event, narrator: Narrator) -> str:
    token = narrator.token(e.get("token"))
    token = "no fencing token" if token == "no token" else token
    lease = f"lease {e['ttl_ms']} ms" if e.get("ttl_ms") else "no lease"
    valid = f", valid {e['validity_ms']} ms" if e.get("validity_ms") else ""
    return f"believes it holds the lock ({token}, {lease}{valid})"


def _restarted(e: Event) -> tuple[str, str]:
    persistence = e.get("persistence")
    if persistence is None:
        return "restarted", "restarted"
    if persistence == "fsync":
        return "restarted (fsync: its keys kept)", "restarted (fsync: keys kept)"
    return "restarted (no fsync: empty)", "restarted (no fsync: empty)"


def _shifted(e: Event) -> tuple[str, str]:
    late = f"{float(e.get('late_ms') or 0):.0f} ms"
    behind = f"the machine fell behind by {late} at {e.get('what')}"
    if e.get("kept") is not False:
        return f"{behind}: the rest of the schedule moves {late} later, keeping its intervals", (
            f"schedule +{late}"
        )
    at = f"{float(e.get('fixed_ms') or 0):.0f} ms"
    fixed = {
        "lease": f"{e.get('fixed_by')}'s lease ends at {at}",
        "wait": f"{e.get('fixed_by')}'s wait for the lock ends at {at}",
        "step": f"{e.get('fixed_by')} already came at {at}",
    }.get(str(e.get("fixed")), f"something came at {at}")
    return (
        f"{behind}: the schedule moves {late} later, but {fixed}, and {e.get('moved')} now "
        f"comes after it ({float(e.get('moved_to_ms') or 0):.0f} ms): this run cannot keep its "
        "story",
        "story lost",
    )


def _link(e: Event) -> tuple[str, str]:
    who, mode = e.get("actor"), e.get("mode")
    if e.get("peers"):
        return f"links to its peers {', '.join(map(str, e['peers']))}: {mode}", f"cut off ({mode})"
    node = e.get("node")
    if mode == "pass":
        return f"link to {node} healed", f"{who} ⇹ {node} healed"
    if mode == "delay":
        jitter = f" ± {e['jitter_ms']}" if e.get("jitter_ms") else ""
        return f"link to {node} delayed {e.get('ms')}{jitter} ms", (
            f"{who} ⇹ {node} delayed {e.get('ms')}{jitter} ms"
        )
    held = "connections are reset" if mode == "reset" else "bytes are held, nothing arrives"
    return f"link to {node} cut ({mode}): {held}", f"{who} ⇹ {node} cut ({mode})"


def _session(e: Event) -> tuple[str, str]:
    state = str(e.get("state"))
    words = {
        "SUSPENDED": ("ZooKeeper connection suspended", "suspended"),
        "LOST": ("ZooKeeper session expired", "session expired"),
        "CONNECTED": ("connected to ZooKeeper again", "reconnected"),
    }
    return words.get(state, (f"ZooKeeper session {state}", state.lower()))


_PHRASES: dict[str, Callable[[Event], tuple[str, str]]] = {
    "acquire_failed": lambda e: (
        f"gave up acquiring: {e.get('reason')}",
        f"gave up: {_reason(e.get('reason'))}",
    ),
    "released": _released,
    "extended": lambda e: (
        f"extended to {e.get('ttl_ms')} ms" if e.get("ok") else "extend failed",
        "",
    ),
    "paused": _paused,
    "resumed": lambda e: (
        "thawed (SIGCONT)" + (f": {e['why']}" if e.get("why") else ""),
        "resumed (SIGCONT)",
    ),
    "step_refused": lambda e: (
        f"could not take step {step_number(e.get('index'))}: {e.get('why')}",
        f"refused: {e.get('why')}",
    ),
    "ending": lambda e: (f"the run ends now: {e.get('why')}", f"ending: {e.get('why')}"),
    "crashed": _crashed,
    "restarted": _restarted,
    "clock_jumped": _clock_jumped,
    "clock_rate": lambda e: (f"own clock now runs at ×{e.get('rate')}", f"clock ×{e.get('rate')}"),
    "run_started": lambda e: (f"run started: {e.get('title')}", ""),
    "run_failed": lambda e: (f"run FAILED: {e.get('error')}", f"run failed: {e.get('error')}"),
    "run_interrupted": lambda e: (f"run INTERRUPTED: {e.get('why')}", ""),
    "run_cancelled": lambda e: (f"run cancelled: {e.get('why')}", ""),
    "releasing": lambda e: ("leaves its critical section and releases", ""),
    "session": _session,
    "renewal_started": lambda e: (f"watchdog renews every {e.get('interval_ms')} ms", ""),
    "schedule_shifted": _shifted,
}


def click(step: Mapping[str, Any]) -> str:
    """A step (a click, or a scenario's step) in words: "alice paused for 500 ms (SIGSTOP)"."""
    who = step.get("client") or step.get("node") or "?"
    verb, ms = step.get("do"), step.get("ms")
    links = f"{who} ⇹ {', '.join(step.get('nodes') or []) or 'every server'}"
    if step.get("node") and verb in ("partition", "heal"):
        links = f"{who} ⇹ its peers"
    words = {
        "acquire": f"{who} asks for the lock",
        "read": f"{who} reads the storage",
        "write": f"{who} writes {step.get('value', '')!r} to the storage"
        + (f" (idempotency key {step['key']!r})" if step.get("key") else ""),
        "release": f"{who} releases the lock",
        "extend": f"{who} extends its lease",
        "pause": f"{who} paused for {ms} ms (SIGSTOP)",
        "crash": f"{who} killed (kill -9)" if step.get("node") else f"{who} crashed (SIGKILL)",
        "restart": f"{who} restarted",
        "clock_jump": f"{who}'s clock jumped {signed_ms(ms or 0)}",
        "clock_rate": f"{who}'s clock runs ×{step.get('rate')}",
        "partition": f"{links} cut ({step.get('mode') or 'blackhole'})",
        "heal": f"{links} healed",
        "delay": f"{links} delayed {ms} ms",
    }
    return words.get(str(verb), str(verb))


def narrate(events: Iterable[Event], backend: str | None = None) -> list[dict[str, Any]]:
    """Every event of a run with its words (``said``), in order."""
    narrator = Narrator(backend)
    return [narrator.narrate(e) for e in events if isinstance(e, Mapping)]


# -- a scenario before it runs -------------------------------------------------------------


def story(steps: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every step of a script, numbered once: its number, time, click and narration.

    The story panels list all steps, narrated or not, so that step 5 is step 5 everywhere.
    """
    return [
        {
            "index": i,
            "number": step_number(i),
            "at_ms": step.get("at_ms"),
            "t_s": (step.get("at_ms") or 0) / 1000,
            "click": click(step),
            "say": step.get("say") or "",
        }
        for i, step in enumerate(steps)
    ]


def setup(scenario: Mapping[str, Any]) -> str:
    """The scenario's setting, before anything has happened: who, on what, with which lease and
    storage. It never says how the run turns out (a lesson shows it before the run)."""
    service = BACKENDS.get(str(scenario.get("backend")))
    count = scenario.get(service.node_count_field) if service and service.node_count_field else None
    on = service.describe(scenario.get("variant"), count) if service else "?"
    clients = [str(c) for c in scenario.get("clients") or []]
    who = ", ".join(clients[:-1]) + f" and {clients[-1]}" if len(clients) > 1 else "".join(clients)
    kind = scenario.get("storage") or ("fenced" if scenario.get("fencing", True) else "plain")
    checks = _SETUP_STORAGE.get(str(kind), "the storage does not check tokens")
    if service is not None and not service.lock:
        return f"{who} write to one storage with no lock at all; {checks}."
    leased = scenario.get("variant") != "no_ttl" and scenario.get("backend") != "postgres"
    lease = f", with a lease of {duration(scenario.get('ttl_ms'))}" if leased else ""
    return f"{who} share one lock on {on}{lease}; {checks}."


_SETUP_STORAGE = {  # what the storage checks, as a scenario's setting says it
    "fenced": "the storage checks fencing tokens",
    "plain": "the storage does not check tokens",
    "sequencer": "the storage asks the lock service, at each write, whether the writer still "
    "holds the lock",
    "cas": "the storage applies a write only if the data is still at the version its writer read",
}


def checkpoint(step: Mapping[str, Any], index: int) -> dict[str, str]:
    """A checkpoint's step as a lesson shows it before it is answered: the click and the
    question, never the narration (which tells the answer)."""
    ask = step.get("ask") or {}
    question = ask.get("question") if isinstance(ask, Mapping) else ""
    text = f"step {step_number(index)}: {click(step)} — predict: {question or '?'}"
    return {"text": text, "label": click(step), "mark": ""}


# -- the storage's kinds: reads, sequencer checks, idempotency keys --------------------------


def _write_basis(e: Event) -> list[str]:
    """What a write is based on besides its token: the version read, its idempotency key."""
    basis = []
    if e.get("read") is not None:
        basis.append(f"read v{e['read']}")
    if e.get("key") is not None:
        basis.append(f"key {e['key']}")
    return basis


def _check_subject(e: Event) -> str:
    """What the storage asks the lock service about: whose lock, and how it knows it."""
    if e.get("path") is not None:
        return f"is {e.get('holder')}'s lock node {e['path']} still there (czxid {e.get('token')})?"
    if e.get("lease") is not None:
        return f"is {e.get('holder')}'s lease {e['lease']} alive?"
    if e.get("session") is not None:
        return f"does {e.get('holder')}'s session (pid {e['session']}) still hold the lock?"
    if e.get("key") is not None and e.get("value") is None:
        return f"is {e.get('holder')}'s key {e['key']} still there (revision {e.get('token')})?"
    return f"does {e.get('key')} still hold {e.get('holder')}'s value?"


def _duplicate(e: Event) -> str:
    first = "accepted" if e.get("accepted") else "rejected"
    return f"duplicate: the first result ({first}), not applied again"


def _read_result(e: Event) -> str:
    value = e.get("value")
    return f"v{e.get('version')}: {value!r}" if value is not None else f"v{e.get('version')}: empty"


def _check_result(e: Event) -> str:
    return "✔ current" if e.get("current") else f"✖ {e.get('why') or 'not current'}"


_STORAGE_REQUESTS: dict[str, Callable[[Event], str]] = {
    "read": lambda e: "read",
    "check": lambda e: f"check {e.get('holder')}'s lock",
}
_STORAGE_RESULTS: dict[str, Callable[[Event], str]] = {
    "read": _read_result,
    "check": _check_result,
}
# What stopped a stale write, by the kind of storage (see lockviz.catalogue.STORAGE_KINDS).
SAVED_BY = {
    "fenced": "fencing",
    "sequencer": "the sequencer check",
    "cas": "compare-and-set",
    "plain": "the storage",
}


def no_lock_headline(verdict: Mapping[str, Any], storage: str) -> tuple[str, str]:
    """A run without a lock service: did an update get lost?"""
    if verdict.get("data_corrupted"):
        return "✖ No lock, and an update was lost", "bad"
    if verdict.get("stale_writes_rejected"):
        return f"✔ No lock, but {SAVED_BY.get(storage, 'the storage')} kept every update", "good"
    return "✔ No lock, and no update was lost", "good"


# -- What if…? forks -------------------------------------------------------------------------


def fork_label(diverged_ms: float) -> str:
    """A fork's lane, beside its original: "What if…? (from 2.80 s)"."""
    return f"What if…? (from {diverged_ms / 1000:.2f} s)"


def divergence(diverged_ms: float) -> str:
    """The mark across both lanes where a fork parts from its original."""
    return f"what if…? parts from here ({diverged_ms / 1000:.2f} s)"


# -- verdicts ------------------------------------------------------------------------------


# Runs that ended without a verdict, by status: their headline.
_NOT_JUDGED = {
    "interrupted": ("⏹ The run was interrupted: the app stopped before it ended", "bad"),
    "cancelled": ("⏹ The run was cancelled: nobody watched it while it waited", "pending"),
    "failed": ("✖ The run failed", "bad"),
}


def headline(
    verdict: Mapping[str, Any] | None, error: str = "", status: str = "", storage: str = "fenced"
) -> tuple[str, str]:
    """A run's outcome in one line, and its tone (good, warn, bad, pending); ``storage`` is the
    kind of storage the run wrote to (what saved the data, when something did)."""
    if status in _NOT_JUDGED:
        return _NOT_JUDGED[status]
    if error:
        return _NOT_JUDGED["failed"]
    if not verdict:
        return ("… waiting for the lab" if status == "queued" else "… running live"), "pending"
    if verdict.get("inconclusive"):
        return f"⚠ Inconclusive: {verdict['inconclusive']}", "warn"
    if verdict.get("mutual_exclusion") == "none":
        return no_lock_headline(verdict, storage)
    if verdict.get("data_corrupted"):
        return "✖ Mutual exclusion violated, data corrupted", "bad"
    if verdict.get("mutual_exclusion") == "violated":
        if verdict.get("stale_writes_rejected"):
            saved = SAVED_BY.get(storage, "the storage")
            return f"⚠ Mutual exclusion violated — {saved} saved the data", "warn"
        return "⚠ Mutual exclusion violated", "warn"
    if verdict.get("liveness") == "stuck":
        return "⚠ Mutual exclusion held, but the lock is stuck", "warn"
    return "✔ Mutual exclusion held", "good"


def expectation(
    verdict: Mapping[str, Any] | None, expect_met: bool | None, mismatches: list[str]
) -> tuple[str, str] | None:
    """What became of the scenario's prediction, and its tone (met, missed, unjudged); None
    when there is nothing to say (no verdict, or no prediction)."""
    if verdict and verdict.get("inconclusive"):
        return (
            "⚠ Not judged: the machine fell behind and this run could not keep the story the "
            "scenario predicts. Run it again when the lab is quieter.",
            "unjudged",
        )
    if expect_met is None:
        return None
    if expect_met:
        return "✔ As the scenario predicted.", "met"
    return f"✖ Not what the scenario predicted: {'; '.join(mismatches)}", "missed"


def facts(verdict: Mapping[str, Any], storage: str = "fenced") -> list[tuple[str, str]]:
    """The verdict's findings, each as (what, how much), in the order the pages list them."""
    overlaps = "; ".join(
        f"{' & '.join(o['clients'])} from {o['start_ms']:.0f} to {o['end_ms']:.0f} ms"
        for o in verdict.get("overlaps") or []
    )
    found = [
        ("Two holders at once", overlaps or "never"),
        ("Stale writes accepted", str(verdict.get("stale_writes_accepted", 0))),
        (f"Stale writes rejected by {SAVED_BY.get(storage, 'the storage')}",
         str(verdict.get("stale_writes_rejected", 0))),
    ]  # fmt: skip
    if verdict.get("mutual_exclusion") == "none":
        found[0] = ("Two holders at once", "no lock in play")
    if verdict.get("acquire_failures"):
        found.append(("Acquires that gave up", str(verdict["acquire_failures"])))
    if verdict.get("stuck_clients"):
        found.append(("Stuck behind a crashed holder", ", ".join(verdict["stuck_clients"])))
    if verdict.get("wakeups"):
        found.append(("Wake-ups of waiting clients", str(verdict["wakeups"])))
    return found


def damage(verdict: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each stale write the storage accepted, as a link to the moment it landed."""
    found = []
    for w in (verdict or {}).get("writes") or []:
        if isinstance(w, Mapping) and w.get("stale") and w.get("accepted"):
            after = f" after {w['superseded_by']} took the lock" if w.get("superseded_by") else ""
            found.append(
                {
                    "seq": w.get("seq"),
                    "text": f"{w.get('client')}'s stale write {w.get('value')!s} landed{after}: "
                    "see it at the storage",
                }
            )
    return found


# -- the terminal --------------------------------------------------------------------------


def render(events: Iterable[Event]) -> str:
    """A run as a text timeline: ``  2512.4 ms  #7   bob       believes it holds the lock``."""
    narrator, lines = Narrator(), []
    for e in events:
        said = narrator.said(e)
        lines.append(f"{e['t_ms']:>9.1f} ms  #{e['seq']:<3} {e['actor']:<9} {said.phrase}")
    return "\n".join(lines)


def verdict_text(
    verdict: Mapping[str, Any] | None, mismatches: list[str], storage: str = "fenced"
) -> str:
    if verdict is None:
        return "No verdict: the run did not complete."
    lines = [
        f"mutual exclusion: {verdict['mutual_exclusion']}",
        f"stale writes accepted: {verdict['stale_writes_accepted']}",
        f"stale writes rejected: {verdict['stale_writes_rejected']}",
        f"data corrupted: {'yes' if verdict['data_corrupted'] else 'no'}",
    ]
    if verdict.get("liveness") == "stuck":
        lines.append(f"liveness: STUCK ({', '.join(verdict.get('stuck_clients', []))})")
    if verdict.get("acquire_failures"):
        lines.append(f"acquires that gave up: {verdict['acquire_failures']}")
    if verdict.get("wakeups"):
        lines.append(f"wake-ups of waiting clients: {verdict['wakeups']}")
    for o in verdict["overlaps"]:
        lines.append(
            f"two holders: {' & '.join(o['clients'])} from {o['start_ms']} to {o['end_ms']} ms"
        )
    lines.append(headline(verdict, storage=storage)[0])
    lines.append(verdict["summary"])
    lines.extend(f"NOT AS EXPECTED: {m}" for m in mismatches)
    return "\n".join(lines)
