"""A scenario before it runs, in words: its steps (a click, its number, the story panels), its
setting, and a checkpoint's question. A run's ``step`` events are said with the same
:func:`click` and :func:`step_number`, so step 5 is step 5 on every page."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from lockviz.catalogue import BACKENDS
from lockviz.narrator.words import duration, items, number, signed_ms


def step_number(index: object) -> str:
    """Step ``index`` (0-based in the script) as every page numbers it: 1, 2, 3 …"""
    return str(index + 1) if isinstance(index, int) and not isinstance(index, bool) else "?"


def electing(scenario: Mapping[str, object]) -> bool:
    """Whether the scenario's lock is a leader election (its clients campaign and resign)."""
    service = BACKENDS.get(str(scenario.get("backend")))
    variant = scenario.get("variant")
    chosen = service.variant(variant if isinstance(variant, str) else None) if service else None
    return chosen is not None and chosen.election


def click(step: Mapping[str, object], election: bool = False) -> str:
    """A step (a click, or a scenario's step) in words: "alice paused for 500 ms (SIGSTOP)";
    in a leader ``election`` a client campaigns and resigns rather than acquires and releases."""
    who = step.get("client") or step.get("node") or "?"
    verb, ms = step.get("do"), step.get("ms")
    nodes = ", ".join(str(n) for n in items(step.get("nodes") or []))
    links = f"{who} ⇹ {nodes or 'every server'}"
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
        "leader": f"{who} asks who leads",
    }
    if election:
        words.update(acquire=f"{who} campaigns to lead", release=f"{who} resigns")
    return words.get(str(verb), str(verb))


def story(steps: Iterable[Mapping[str, object]], election: bool = False) -> list[dict[str, object]]:
    """Every step of a script, numbered once: its number, time, click and narration.

    The story panels list all steps, narrated or not, so that step 5 is step 5 everywhere.
    """
    return [
        {
            "index": i,
            "number": step_number(i),
            "at_ms": step.get("at_ms"),
            "t_s": number(step.get("at_ms") or 0) / 1000,
            "click": click(step, election),
            "say": step.get("say") or "",
        }
        for i, step in enumerate(steps)
    ]


def setup(scenario: Mapping[str, object]) -> str:
    """The scenario's setting, before anything has happened: who, on what, with which lease and
    storage. It never says how the run turns out (a lesson shows it before the run)."""
    service = BACKENDS.get(str(scenario.get("backend")))
    count = scenario.get(service.node_count_field) if service and service.node_count_field else None
    variant = scenario.get("variant")
    on = (
        service.describe(
            variant if isinstance(variant, str) else None, count if isinstance(count, int) else None
        )
        if service
        else "?"
    )
    clients = [str(c) for c in items(scenario.get("clients") or [])]
    who = ", ".join(clients[:-1]) + f" and {clients[-1]}" if len(clients) > 1 else "".join(clients)
    kind = scenario.get("storage") or ("fenced" if scenario.get("fencing", True) else "plain")
    checks = _SETUP_STORAGE.get(str(kind), "the storage does not check tokens")
    alone = len(clients) == 1
    if service is not None and not service.lock:
        write = "writes" if alone else "write"
        return f"{who} {write} to one storage with no lock at all; {checks}."
    chosen = service.variant(variant if isinstance(variant, str) else None) if service else None
    words = chosen.ttl if chosen is not None else "lease"
    lease = f", with {_a(words)} {words} of {duration(scenario.get('ttl_ms'))}" if words else ""
    if electing(scenario):
        stand = "stands" if alone else "stand"
        return f"{who} {stand} for leader on {on}{lease}; {checks}."
    idle = scenario.get("idle_session_timeout_ms")
    if idle:
        lease += f"; the server ends a session idle for {duration(idle)}"
    takes = "takes a lock" if alone else "share one lock"
    return f"{who} {takes} on {on}{lease}; {checks}."


def _a(words: str) -> str:
    """The article before ``words``: "a lease", "an idle-in-transaction timeout"."""
    return "an" if words[:1].lower() in "aeio" else "a"


def hold(scenario: Mapping[str, object]) -> str:
    """What the server counts down for a silent holder, in the catalogue's words for the lock:
    "lease 2 s", "session timeout 1.5 s", "idle-in-transaction timeout 2 s", "no lease" (and
    a PostgreSQL server's idle session timeout): a page's header line says it."""
    service = BACKENDS.get(str(scenario.get("backend")))
    if service is None or not service.lock:
        return "no lock" if service is not None else f"lease {duration(scenario.get('ttl_ms'))}"
    variant = scenario.get("variant")
    chosen = service.variant(variant if isinstance(variant, str) else None)
    words = chosen.ttl if chosen is not None else "lease"
    found = f"{words} {duration(scenario.get('ttl_ms'))}" if words else "no lease"
    idle = scenario.get("idle_session_timeout_ms")
    return f"{found} · idle session timeout {duration(idle)}" if idle else found


_SETUP_STORAGE = {  # what the storage checks, as a scenario's setting says it
    "fenced": "the storage checks fencing tokens",
    "plain": "the storage does not check tokens",
    "sequencer": "the storage asks the lock service, at each write, whether the writer still "
    "holds the lock",
    "cas": "the storage applies a write only if the data is still at the version its writer read",
    "fenced_reads": "the storage checks fencing tokens on reads as well as writes",
    "lww": "two storage replicas each accept every write and keep the one with the latest "
    "timestamp, by its writer's own clock",
    "crdt": "two storage replicas each accept every write into a set and merge by union",
}


def checkpoint(step: Mapping[str, object], index: int, election: bool = False) -> dict[str, str]:
    """A checkpoint's step as a lesson shows it before it is answered: the click and the
    question, never the narration (which tells the answer)."""
    ask = step.get("ask") or {}
    question = ask.get("question") if isinstance(ask, Mapping) else ""
    words = click(step, election)
    text = f"step {step_number(index)}: {words} — predict: {question or '?'}"
    return {"text": text, "label": words, "mark": ""}
