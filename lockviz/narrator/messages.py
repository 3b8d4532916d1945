"""Protocol messages in words: the second layer of the
:class:`~lockviz.narrator.events.Narrator` (:class:`Messages`).

A request is said with its arguments, and labelled as a Redis user recognises the real command
(``SET NX PX 2000``) or in its backend's own verbs; a reply says OK with the fencing token, or a
refusal naming who holds the key, or, in a fan-out (Redlock), each node's ✔ or ✖. A write's
reply also says what the storage did with it (stored, rejected, a stale write's damage), judged
by the checker's own rule as it lands; the storage's other kinds (reads, sequencer checks,
idempotency keys) are said here too.
"""

from __future__ import annotations

from collections.abc import Callable

from algorithms import checker
from lockviz.narrator.memory import TOKEN_NAMES, Memory
from lockviz.narrator.words import Event, Said, duration, plain_error, queue_name


class Messages(Memory):
    """Says requests and replies, remembering what they change (see the module docstring)."""

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
            args.append(queue_name(e["path"]))
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
    def _queue(children: object) -> str:
        names = [queue_name(c) for c in children] if isinstance(children, list) else []
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

    def _paren_token(self, token: object) -> str:
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


# Request labels by op, for the ops whose words need no more than the event.
_REQUESTS: dict[str, Callable[[Event], str]] = {
    "extend": lambda e: "extend" + (f" {e['ttl_ms']} ms" if e.get("ttl_ms") is not None else ""),
    "create": lambda e: "create sequential node",
    "children": lambda e: "list the queue" + (" + watch it" if e.get("watch") else ""),
    "watch": lambda e: f"watch {queue_name(e.get('path'))}",
    "delete": lambda e: f"delete {queue_name(e.get('path'))}",
}

# (label, short) of a yes, by op, where the yes carries more than "OK".
_REPLIES: dict[str, Callable[[Messages, Event], tuple[str, str]]] = {
    "create": lambda n, e: (
        f"created {queue_name(e.get('path'))} · {n.token(e.get('token'))}",
        "created",
    ),
    "children": lambda n, e: (Messages._queue(e.get("children")), "queue"),
    "watch": lambda n, e: ("watching" if e.get("exists") else "already gone", ""),
    "delete": lambda n, e: ("deleted", ""),
    "lock": lambda n, e: (
        ("queued: waits its turn", "queued")
        if e.get("token") is None
        else (f"OK · {n.token(e['token'])}", "OK")
    ),
}


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
