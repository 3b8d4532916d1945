"""Protocol messages in words: :func:`say_request` and :func:`say_reply`, the sayers of the
``request`` and ``reply`` kinds.

A request is said with its arguments, and labelled as a Redis user recognises the real command
(``SET NX PX 2000``) or in its backend's own verbs; a reply says OK with the fencing token, or a
refusal naming who holds the key, or, in a fan-out (Redlock), each node's ✔ or ✖. What the
storage did with a write, and the storage's other kinds, are said by :mod:`.storage`.
"""

from __future__ import annotations

from collections.abc import Callable

from lockviz.lab.events import Reply, Request
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


def say_request(memory: Memory, e: Request) -> Said:
    who = str(e.actor)
    rounds = memory.round_of(e, who)
    phrase = f"→ {e.to}  {e.op}{_args(memory, e)}"
    text = f"{who} → {e.to}: {e.op}{_args(memory, e)}"
    label = _request_label(memory, e)
    if memory.fan_out and e.op not in STORAGE_OPS:  # one label per fan-out
        first = memory.burst.get(who) != e.op
        label = f"{label} → all {len(memory.nodes)}" if first and memory.nodes else ""
    return Said(phrase, text, label, round=rounds)


def say_reply(memory: Memory, e: Reply) -> Said:
    who = str(e.actor)
    rounds = memory.round_of(e, who)
    result = _result(memory, e)
    phrase = f"← {e.frm}  {e.op}: {result}"
    text = f"{who} ← {e.frm}: {e.op} {result}"
    label, short = _reply_label(memory, e)
    if e.op == "write" and not e.error:
        mark, tone = write_mark(memory, memory.request_of(e), e)
        return Said(phrase, text, label, mark, short, tone)
    fold = memory.fold(who, bool(e.ok)) if e.op == "acquire" and not memory.fan_out else ""
    return Said(phrase, text, label, "", short, "", rounds, fold)


def _args(memory: Memory, e: Request) -> str:
    args = []
    if e.op in ("write", "merge") and (e.stamp or e.holds or e.values):
        args.append(replica_request(e, memory.storage == "crdt"))
    elif e.op == "write":
        args.append(f"value {e.value!r} with {memory.token(e.token)}")
        args.extend(write_basis(e))
    elif e.op == "check":
        args.append(check_subject(e))
    elif e.op == "wait":
        args.append(f"until {e.numreplicas} replica acknowledges, up to {e.wait_ms} ms")
    elif e.ttl_ms is not None:
        args.append(f"lease {e.ttl_ms} ms")
    if e.why:
        args.append(str(e.why))
    if e.unsafe:
        args.append("plain DEL")
    if e.path and e.op in ("watch", "delete"):
        args.append(queue_name(e.path))
    return f" ({', '.join(args)})" if args else ""


def _request_label(memory: Memory, e: Request) -> str:
    """Redis users recognise the real command; other backends get their own verbs."""
    ttl, op = e.ttl_ms, str(e.op or "request")
    if op == "acquire":
        if memory.backend in (None, "redis", "redlock", "redis-sentinel"):
            return "SET NX" + (f" PX {ttl}" if ttl is not None else "")
        if memory.backend == "postgres":
            return "try advisory lock" if ttl is None else f"advisory lock ({duration(ttl)})"
        return "acquire" + (f" ttl {ttl} ms" if ttl is not None else "")
    if op == "write" and e.stamp is not None:
        return replica_request(e, memory.storage == "crdt", short=True)
    if op == "write":
        value = e.value if e.value is not None else ""
        return f"write {value} ({memory.token(e.token)})" + "".join(
            f" · {basis}" for basis in write_basis(e)
        )
    if op in STORAGE_REQUESTS:
        return STORAGE_REQUESTS[op](e)
    if op == "release" and memory.fan_out:
        return "undo: DEL if ours" if memory.undoing(e) else "DEL if ours"
    if op == "release" and e.why == "not replicated":
        return "undo: DEL if ours"
    words = _REQUESTS.get(op)
    if words is not None:
        return words(e)
    return op.replace("_", " ") + (" (plain DEL)" if e.unsafe else "")


def _result(memory: Memory, e: Reply) -> str:
    op = str(e.op)
    if op in STORAGE_RESULTS and e.ok:
        return STORAGE_RESULTS[op](e)
    if op == "write" and replicated(e):
        told = replica_result(e)
        return f"OK, but kept another write: {told}" if e.kept is False else f"OK: {told}"
    if op == "write" and "accepted" in e.model_fields_set:
        if e.duplicate:
            return duplicate(e)
        return "accepted" if e.accepted else f"REJECTED ({e.reason})"
    if e.error:
        return f"failed: {plain_error(e.error)}"
    result = _RESULTS.get(op)
    if result is not None and (e.ok or e.acked is not None):
        return result(memory, e)
    if e.ok:
        return f"OK {memory.token(e.token)}" if e.token is not None else "OK"
    refused = _refusal(memory, e)
    return refused or str(e.reason or "no")


def _refusal(memory: Memory, e: Reply) -> str:
    """Why a server said no, with whom it is holding the key for when we know."""
    if e.op not in ("acquire", "release", "extend") or e.ok or e.error:
        return ""
    reason = str(e.reason or "")
    if reason.startswith(tuple(REFUSED)):  # not the key: the node itself refuses writes
        return REFUSED[reason.split()[0]]
    holder = memory.holders.get(str(e.frm))
    if e.op in ("release", "extend"):  # the key is not ours to delete or to extend
        mine = holder is None or holder == e.actor
        return "our key is gone" if mine else f"key held by {holder}"
    return f"key held by {holder}" if holder else "key held by another client"


def _reply_label(memory: Memory, e: Reply) -> tuple[str, str]:
    """(label, short) for a reply arrow."""
    op = e.op
    if op in ("write", *STORAGE_RESULTS) and not e.error:
        return _storage_label(memory, e)
    if memory.fan_out:
        return _node_reply(memory, e)
    if e.error:
        return f"error: {plain_error(e.error)}", "error"
    if op == "acquire" and not e.ok and not _refused_by_node(e):
        nil = "nil" if memory.backend in (None, "redis", "redis-sentinel") else "no"
        return f"{nil}: {_refusal(memory, e)}", nil
    if op == "wait" or _refused_by_node(e):
        return _replicated_label(e)
    if not e.ok:
        return "failed" + (f": {e.reason}" if e.reason else ""), "failed"
    words = _REPLIES.get(str(op))
    if words is not None:
        return words(memory, e)
    if e.token is not None and memory.token(e.token) != "no token":
        return f"OK · {memory.token(e.token)}", "OK"
    return "OK", ""


def _refused_by_node(e: Reply) -> bool:
    """A Redis node that refuses writes (a replica now, a primary with too few replicas)."""
    return not e.ok and str(e.reason or "").startswith(tuple(REFUSED))


def _replicated_label(e: Reply) -> tuple[str, str]:
    """(label, short) for a replicated Redis's own answers: WAIT's count, a node's refusal."""
    if e.op == "wait":
        return f"WAIT: {e.acked} acknowledged" + ("" if e.ok else " — not enough"), "WAIT"
    first = str(e.reason).split()[0]
    return REFUSED[first], first


def _storage_label(memory: Memory, e: Reply) -> tuple[str, str]:
    """(label, short) for the storage's answer, or the lock service's to its check."""
    if replicated(e):
        return replica_label(e), ""
    if e.op in STORAGE_RESULTS:
        return STORAGE_RESULTS[str(e.op)](e), ""
    if e.duplicate:
        return duplicate(e), ""
    if e.accepted is False:
        return f"REJECTED {compared(memory, e)}".strip(), "REJECTED"
    return "accepted", ""


def _node_reply(memory: Memory, e: Reply) -> tuple[str, str]:
    """One node's answer in a fan-out: named, with ✔ or ✖ and why not."""
    node = str(e.frm)
    if e.error:
        return f"✖ {node} unreachable: {plain_error(e.error)}", f"✖ {node}"
    if e.op == "release" and memory.undoing(e):
        return "", ""  # the undo of a refused round: its replies are in the tooltips
    if e.ok:
        return f"✔ {node}", ""
    why = _refusal(memory, e) or e.reason
    return f"✖ {node} said no: {why or 'no'}", f"✖ {node}"


def _queue(children: object) -> str:
    names = [queue_name(c) for c in children] if isinstance(children, list) else []
    if not names:
        return "queue: empty"
    shown = ", ".join(names[:3]) + (f" +{len(names) - 3}" if len(names) > 3 else "")
    return f"queue: {shown}"


# A reply's result by op, where it says more than OK (a yes, or WAIT's count either way).
_RESULTS: dict[str, Callable[[Memory, Reply], str]] = {
    "leader": lambda m, e: f"{e.value} leads ({m.token(e.token)})",
    "campaign": lambda m, e: f"elected ({m.token(e.token)})",
    "discover": lambda m, e: f"the primary is {e.primary}",
    "wait": lambda m, e: f"{e.acked} replica(s) acknowledged" + ("" if e.ok else ": not enough"),
}

# A Redis node that refuses writes, in its own first word, and what that means.
REFUSED = {
    "READONLY": "READONLY: it is a replica now",
    "NOREPLICAS": "NOREPLICAS: it has heard from too few replicas",
}

# Request labels by op, for the ops whose words need no more than the event.
_REQUESTS: dict[str, Callable[[Request], str]] = {
    "discover": lambda e: "which node is primary?",
    "wait": lambda e: f"WAIT {e.numreplicas} {e.wait_ms}",
    "extend": lambda e: "extend" + (f" {e.ttl_ms} ms" if e.ttl_ms is not None else ""),
    "create": lambda e: "create sequential node",
    "children": lambda e: "list the queue" + (" + watch it" if e.watch else ""),
    "watch": lambda e: f"watch {queue_name(e.path)}",
    "delete": lambda e: f"delete {queue_name(e.path)}",
    # a leader election's own calls (etcd's election API; ZooKeeper's recipe)
    "campaign": lambda e: "campaign: lead when the keys ahead are gone",
    "claim": lambda e: "is my key still there?",
    "resign": lambda e: "resign: delete my key if still mine",
    "leader": lambda e: "who leads?",
    "proclaim": lambda e: f"proclaim {e.value}",
}

# (label, short) of a yes, by op, where the yes carries more than "OK".
_REPLIES: dict[str, Callable[[Memory, Reply], tuple[str, str]]] = {
    "discover": lambda m, e: (f"primary: {e.primary}", "primary"),
    "create": lambda m, e: (
        f"created {queue_name(e.path)} · {m.token(e.token)}",
        "created",
    ),
    "children": lambda m, e: (_queue(e.children), "queue"),
    "watch": lambda m, e: ("watching" if e.exists else "already gone", ""),
    "delete": lambda m, e: ("deleted", ""),
    "campaign": lambda m, e: (f"elected · {m.token(e.token)}", "elected"),
    "claim": lambda m, e: ("still mine", ""),
    "resign": lambda m, e: ("resigned", ""),
    "leader": lambda m, e: (f"{e.value} leads · {m.token(e.token)}", "leader"),
    "lock": lambda m, e: (
        ("queued: waits its turn", "queued")
        if e.token is None
        else (f"OK · {m.token(e.token)}", "OK")
    ),
}
