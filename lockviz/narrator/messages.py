"""Protocol messages in words: :func:`say_request` and :func:`say_reply`, the sayers of the
``request`` and ``reply`` kinds.

A request is said with its arguments, and labelled as a Redis user recognises the real command
(``SET NX PX 2000``) or in its backend's own verbs; a reply says OK with the fencing token, or a
refusal naming who holds the key, or, in a fan-out (Redlock), each node's ✔ or ✖. What the
storage did with a write, and the storage's other kinds, are said by :mod:`.storage`.
"""

from __future__ import annotations

from collections.abc import Callable

from lockviz.lab.events import EventJson
from lockviz.narrator.memory import STORAGE_OPS, Memory
from lockviz.narrator.storage import (
    STORAGE_REQUESTS,
    STORAGE_RESULTS,
    check_subject,
    compared,
    duplicate,
    replica_label,
    replica_request,
    replica_result,
    replicated,
    write_basis,
    write_mark,
)
from lockviz.narrator.words import Said, duration, plain_error, queue_name


def say_request(memory: Memory, e: EventJson) -> Said:
    who = str(e.get("actor", "?"))
    rounds = memory.round_of(e, who)
    phrase = f"→ {e.get('to')}  {e.get('op')}{_args(memory, e)}"
    text = f"{who} → {e.get('to')}: {e.get('op')}{_args(memory, e)}"
    label = _request_label(memory, e)
    if memory.fan_out and e.get("op") not in STORAGE_OPS:  # one label per fan-out
        first = memory.burst.get(who) != e.get("op")
        label = f"{label} → all {len(memory.nodes)}" if first and memory.nodes else ""
    return Said(phrase, text, label, round=rounds)


def say_reply(memory: Memory, e: EventJson) -> Said:
    who = str(e.get("actor", "?"))
    rounds = memory.round_of(e, who)
    result = _result(memory, e)
    phrase = f"← {e.get('from')}  {e.get('op')}: {result}"
    text = f"{who} ← {e.get('from')}: {e.get('op')} {result}"
    label, short = _reply_label(memory, e)
    if e.get("op") == "write" and not e.get("error"):
        mark, tone = write_mark(memory, memory.request_of(e), e)
        return Said(phrase, text, label, mark, short, tone)
    fold = memory.fold(e, who) if e.get("op") == "acquire" and not memory.fan_out else ""
    return Said(phrase, text, label, "", short, "", rounds, fold)


def _args(memory: Memory, e: EventJson) -> str:
    args = []
    if e.get("op") in ("write", "merge") and (e.get("stamp") or e.get("holds") or e.get("values")):
        args.append(replica_request(e, memory.storage == "crdt"))
    elif e.get("op") == "write":
        args.append(f"value {e.get('value')!r} with {memory.token(e.get('token'))}")
        args.extend(write_basis(e))
    elif e.get("op") == "check":
        args.append(check_subject(e))
    elif e.get("op") == "wait":
        wanted, wait = e.get("numreplicas"), e.get("wait_ms")
        args.append(f"until {wanted} replica acknowledges, up to {wait} ms")
    elif e.get("ttl_ms") is not None:
        args.append(f"lease {e['ttl_ms']} ms")
    if e.get("why"):
        args.append(str(e["why"]))
    if e.get("unsafe"):
        args.append("plain DEL")
    if e.get("path") and e.get("op") in ("watch", "delete"):
        args.append(queue_name(e["path"]))
    return f" ({', '.join(args)})" if args else ""


def _request_label(memory: Memory, e: EventJson) -> str:
    """Redis users recognise the real command; other backends get their own verbs."""
    ttl, op = e.get("ttl_ms"), str(e.get("op") or "request")
    if op == "acquire":
        if memory.backend in (None, "redis", "redlock", "redis-sentinel"):
            return "SET NX" + (f" PX {ttl}" if ttl is not None else "")
        if memory.backend == "postgres":
            return "try advisory lock" if ttl is None else f"advisory lock ({duration(ttl)})"
        return "acquire" + (f" ttl {ttl} ms" if ttl is not None else "")
    if op == "write" and e.get("stamp") is not None:
        return replica_request(e, memory.storage == "crdt", short=True)
    if op == "write":
        value = e.get("value") if e.get("value") is not None else ""
        return f"write {value} ({memory.token(e.get('token'))})" + "".join(
            f" · {basis}" for basis in write_basis(e)
        )
    if op in STORAGE_REQUESTS:
        return STORAGE_REQUESTS[op](e)
    if op == "release" and memory.fan_out:
        return "undo: DEL if ours" if memory.undoing(e) else "DEL if ours"
    if op == "release" and e.get("why") == "not replicated":
        return "undo: DEL if ours"
    words = _REQUESTS.get(op)
    if words is not None:
        return words(e)
    return op.replace("_", " ") + (" (plain DEL)" if e.get("unsafe") else "")


def _result(memory: Memory, e: EventJson) -> str:
    if e.get("op") in STORAGE_RESULTS and e.get("ok"):
        return STORAGE_RESULTS[str(e["op"])](e)
    if e.get("op") == "write" and replicated(e):
        told = replica_result(e)
        return f"OK, but kept another write: {told}" if e.get("kept") is False else f"OK: {told}"
    if e.get("op") == "write" and "accepted" in e:
        if e.get("duplicate"):
            return duplicate(e)
        return "accepted" if e["accepted"] else f"REJECTED ({e.get('reason')})"
    if e.get("error"):
        return f"failed: {plain_error(e['error'])}"
    result = _RESULTS.get(str(e.get("op")))
    if result is not None and (e.get("ok") or e.get("acked") is not None):
        return result(memory, e)
    if e.get("ok"):
        return f"OK {memory.token(e['token'])}" if e.get("token") is not None else "OK"
    refused = _refusal(memory, e)
    return refused or str(e.get("reason") or "no")


def _refusal(memory: Memory, e: EventJson) -> str:
    """Why a server said no, with whom it is holding the key for when we know."""
    if e.get("op") not in ("acquire", "release", "extend") or e.get("ok") or e.get("error"):
        return ""
    reason = str(e.get("reason") or "")
    if reason.startswith(tuple(REFUSED)):  # not the key: the node itself refuses writes
        return REFUSED[reason.split()[0]]
    holder = memory.holders.get(str(e.get("from")))
    if e.get("op") in ("release", "extend"):  # the key is not ours to delete or to extend
        mine = holder is None or holder == e.get("actor")
        return "our key is gone" if mine else f"key held by {holder}"
    return f"key held by {holder}" if holder else "key held by another client"


def _reply_label(memory: Memory, e: EventJson) -> tuple[str, str]:
    """(label, short) for a reply arrow."""
    op = e.get("op")
    if op in ("write", *STORAGE_RESULTS) and not e.get("error"):
        return _storage_label(memory, e)
    if memory.fan_out:
        return _node_reply(memory, e)
    if e.get("error"):
        return f"error: {plain_error(e['error'])}", "error"
    if op == "acquire" and not e.get("ok") and not _refused_by_node(e):
        nil = "nil" if memory.backend in (None, "redis", "redis-sentinel") else "no"
        return f"{nil}: {_refusal(memory, e)}", nil
    if op == "wait" or _refused_by_node(e):
        return _replicated_label(e)
    if not e.get("ok"):
        reason = e.get("reason")
        return "failed" + (f": {reason}" if reason else ""), "failed"
    words = _REPLIES.get(str(op))
    if words is not None:
        return words(memory, e)
    if e.get("token") is not None and memory.token(e["token"]) != "no token":
        return f"OK · {memory.token(e['token'])}", "OK"
    return "OK", ""


def _refused_by_node(e: EventJson) -> bool:
    """A Redis node that refuses writes (a replica now, a primary with too few replicas)."""
    return not e.get("ok") and str(e.get("reason") or "").startswith(tuple(REFUSED))


def _replicated_label(e: EventJson) -> tuple[str, str]:
    """(label, short) for a replicated Redis's own answers: WAIT's count, a node's refusal."""
    if e.get("op") == "wait":
        acked = e.get("acked")
        return f"WAIT: {acked} acknowledged" + ("" if e.get("ok") else " — not enough"), "WAIT"
    first = str(e["reason"]).split()[0]
    return REFUSED[first], first


def _storage_label(memory: Memory, e: EventJson) -> tuple[str, str]:
    """(label, short) for the storage's answer, or the lock service's to its check."""
    if replicated(e):
        return replica_label(e), ""
    if e.get("op") in STORAGE_RESULTS:
        return STORAGE_RESULTS[str(e["op"])](e), ""
    if e.get("duplicate"):
        return duplicate(e), ""
    if e.get("accepted") is False:
        return f"REJECTED {compared(memory, e)}".strip(), "REJECTED"
    return "accepted", ""


def _node_reply(memory: Memory, e: EventJson) -> tuple[str, str]:
    """One node's answer in a fan-out: named, with ✔ or ✖ and why not."""
    node = str(e.get("from"))
    if e.get("error"):
        return f"✖ {node} unreachable: {plain_error(e['error'])}", f"✖ {node}"
    if e.get("op") == "release" and memory.undoing(e):
        return "", ""  # the undo of a refused round: its replies are in the tooltips
    if e.get("ok"):
        return f"✔ {node}", ""
    why = _refusal(memory, e) or e.get("reason")
    return f"✖ {node} said no: {why or 'no'}", f"✖ {node}"


def _queue(children: object) -> str:
    names = [queue_name(c) for c in children] if isinstance(children, list) else []
    if not names:
        return "queue: empty"
    shown = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
    return f"queue: {shown}"


# A reply's result by op, where it says more than OK (a yes, or WAIT's count either way).
_RESULTS: dict[str, Callable[[Memory, EventJson], str]] = {
    "leader": lambda m, e: f"{e.get('value')} leads ({m.token(e.get('token'))})",
    "campaign": lambda m, e: f"elected ({m.token(e.get('token'))})",
    "discover": lambda m, e: f"the primary is {e.get('primary')}",
    "wait": lambda m, e: (
        f"{e.get('acked')} replica(s) acknowledged" + ("" if e.get("ok") else ": not enough")
    ),
}

# A Redis node that refuses writes, in its own first word, and what that means.
REFUSED = {
    "READONLY": "READONLY: it is a replica now",
    "NOREPLICAS": "NOREPLICAS: it has heard from too few replicas",
}

# Request labels by op, for the ops whose words need no more than the event.
_REQUESTS: dict[str, Callable[[EventJson], str]] = {
    "discover": lambda e: "which node is primary?",
    "wait": lambda e: f"WAIT {e.get('numreplicas')} {e.get('wait_ms')}",
    "extend": lambda e: "extend" + (f" {e['ttl_ms']} ms" if e.get("ttl_ms") is not None else ""),
    "create": lambda e: "create sequential node",
    "children": lambda e: "list the queue" + (" + watch it" if e.get("watch") else ""),
    "watch": lambda e: f"watch {queue_name(e.get('path'))}",
    "delete": lambda e: f"delete {queue_name(e.get('path'))}",
    # a leader election's own calls (etcd's election API; ZooKeeper's recipe)
    "campaign": lambda e: "campaign: lead when the keys ahead are gone",
    "claim": lambda e: "is my key still there?",
    "resign": lambda e: "resign: delete my key if still mine",
    "leader": lambda e: "who leads?",
    "proclaim": lambda e: f"proclaim {e.get('value')}",
}

# (label, short) of a yes, by op, where the yes carries more than "OK".
_REPLIES: dict[str, Callable[[Memory, EventJson], tuple[str, str]]] = {
    "discover": lambda m, e: (f"primary: {e.get('primary')}", "primary"),
    "create": lambda m, e: (
        f"created {queue_name(e.get('path'))} · {m.token(e.get('token'))}",
        "created",
    ),
    "children": lambda m, e: (_queue(e.get("children")), "queue"),
    "watch": lambda m, e: ("watching" if e.get("exists") else "already gone", ""),
    "delete": lambda m, e: ("deleted", ""),
    "campaign": lambda m, e: (f"elected · {m.token(e.get('token'))}", "elected"),
    "claim": lambda m, e: ("still mine", ""),
    "resign": lambda m, e: ("resigned", ""),
    "leader": lambda m, e: (f"{e.get('value')} leads · {m.token(e.get('token'))}", "leader"),
    "lock": lambda m, e: (
        ("queued: waits its turn", "queued")
        if e.get("token") is None
        else (f"OK · {m.token(e['token'])}", "OK")
    ),
}
