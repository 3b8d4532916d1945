"""A recorded run as text other tools draw: a Mermaid ``sequenceDiagram``.

Input is the exported run (``/runs/<id>/export.json``: ``scenario``, ``events``, ``verdict``);
output is plain text that Mermaid's own parser accepts whatever the run holds. Everything that
came from a user (titles, narration, client names, values) goes through :func:`text`, which
removes what Mermaid's grammar reads as syntax: ``;`` ends a statement, ``%%{...}%%`` anywhere
is a config directive, newlines end a line, and ``<`` ``>`` would be read as HTML. Those become
Mermaid entity codes (``#59;``, ``#37;``, ``#lt;``, ``#gt;``), which Mermaid prints as the
characters themselves.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable
from typing import Any

_ENTITIES = {"#": "#35;", ";": "#59;", "%": "#37;", "<": "#lt;", ">": "#gt;"}
_SYNTAX = re.compile("[#;%<>]")
_CONTROL = re.compile("[\x00-\x1f\x7f\u2028\u2029]+")
_ID = re.compile(r"^[a-z][a-z0-9_]{0,30}$")
# Words of the sequenceDiagram grammar: a participant id must not be one of them.
_KEYWORDS = {
    "participant", "actor", "as", "end", "loop", "rect", "opt", "alt", "else", "par", "and",
    "critical", "option", "break", "note", "left", "right", "over", "of", "activate",
    "deactivate", "title", "autonumber", "box", "create", "destroy", "links", "link",
    "properties", "details", "sequencediagram",
}  # fmt: skip
CLIENT_KINDS = {"request", "reply", "granted", "acquire_failed", "released", "extended", "lost",
                "paused", "resumed", "crashed"}  # fmt: skip
SERVER_KINDS = {"expired", "deleted", "clock_jumped", "restarted"}
PAUSE_FILL = "rect rgb(232, 232, 232)"
STALE_FILL = "rect rgb(255, 220, 220)"
NOTE_WIDTH = 64  # characters per line of a narration note


def text(value: object, limit: int = 200) -> str:
    """One line of user text, safe inside any Mermaid label."""
    line = _CONTROL.sub(" ", str(value)).strip()
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return _SYNTAX.sub(lambda m: _ENTITIES[m.group()], line) or "-"


def wrapped(value: object, limit: int = 400, width: int = NOTE_WIDTH) -> str:
    """Longer text as several lines (Mermaid's ``<br/>``), each escaped."""
    line = _CONTROL.sub(" ", str(value)).strip()
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return "<br/>".join(text(part, limit) for part in textwrap.wrap(line, width)) or "-"


def secs(t_ms: Any) -> str:
    return f"t={float(t_ms) / 1000:.2f} s" if isinstance(t_ms, int | float) else "t=?"


def verdict_headline(verdict: dict[str, Any]) -> str:
    """The verdict in one line, worded as on the run page."""
    if verdict.get("data_corrupted"):
        return "Mutual exclusion violated, data corrupted"
    if verdict.get("mutual_exclusion") == "violated":
        if verdict.get("stale_writes_rejected"):
            return "Mutual exclusion violated — fencing saved the data"
        return "Mutual exclusion violated"
    return "Mutual exclusion held"


class _Participants:
    """Lifelines in order (clients, lock nodes, storage) with ids Mermaid cannot misread."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.roles: dict[str, str] = {}

    def add(self, name: object, role: str) -> None:
        name = str(name)
        if name in self.ids or name == "lab":
            return
        candidate = re.sub(r"[^a-z0-9_]", "_", name.lower())
        if not _ID.match(candidate) or candidate in _KEYWORDS or candidate in self.ids.values():
            candidate = f"p{len(self.ids) + 1}"
        self.ids[name] = candidate
        self.roles[name] = role

    def id(self, name: object) -> str:
        self.add(name, "other")
        return self.ids[str(name)]

    def ordered(self) -> list[str]:
        rank = {"client": 0, "node": 1, "other": 2, "storage": 3}
        names = list(self.ids)
        return sorted(names, key=lambda n: (rank[self.roles[n]], names.index(n)))

    def declarations(self) -> list[str]:
        lines = []
        for name in self.ordered():
            pid = self.ids[name]
            lines.append(f"participant {pid}" + ("" if pid == name else f" as {text(name, 40)}"))
        return lines

    def span(self) -> str:
        """``first,last``: a note across every lifeline."""
        ordered = [self.ids[n] for n in self.ordered()]
        return ordered[0] if len(ordered) == 1 else f"{ordered[0]},{ordered[-1]}"


def _discover(run: dict[str, Any], events: list[dict[str, Any]]) -> _Participants:
    people = _Participants()
    started = next((e for e in events if e.get("kind") == "run_started"), {})
    scenario = run.get("scenario") or {}
    for name in _names(started.get("clients")) or _names(scenario.get("clients")):
        people.add(name, "client")
    for name in _names(started.get("nodes")):
        people.add(name, "node")
    storage = started.get("storage") if isinstance(started.get("storage"), str) else "storage"
    for e in events:
        kind = e.get("kind")
        if kind in CLIENT_KINDS:
            people.add(e.get("actor"), "client")
        for server in (e.get("to"), e.get("from")) if kind in ("request", "reply") else ():
            if isinstance(server, str) and server != storage:
                people.add(server, "node")
        if kind in SERVER_KINDS:
            people.add(e.get("actor"), "node")
    people.add(storage, "storage")
    return people


def _names(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _request_label(e: dict[str, Any]) -> str:
    op = str(e.get("op") or "request")
    if op == "write":
        token = e.get("token")
        return f"write {e.get('value')!r}, " + (
            f"token {token}" if token is not None else "no token"
        )
    if e.get("ttl_ms") is not None:
        return f"{op}, lease {e['ttl_ms']} ms"
    return op + (" (plain DEL)" if e.get("unsafe") else "")


def _reply_label(e: dict[str, Any]) -> str:
    if e.get("error"):
        return f"error: {e['error']}"
    if e.get("op") == "write" and "accepted" in e:
        return "accepted" if e["accepted"] else f"REJECTED: {e.get('reason') or 'stale token'}"
    if e.get("ok"):
        return f"OK, token {e['token']}" if e.get("token") is not None else "OK"
    return f"no: {e.get('reason')}" if e.get("reason") else "no"


def _note(e: dict[str, Any]) -> str | None:
    """What a client or server event says, for a note over its lifeline."""
    kind = e.get("kind")
    notes = {
        "granted": lambda: f"granted, token {e.get('token')} · lease {e.get('ttl_ms')} ms",
        "acquire_failed": lambda: f"gave up acquiring: {e.get('reason')}",
        "released": lambda: "released" if e.get("ok") else "released, but the lock was not ours",
        "extended": lambda: (
            f"extended, lease {e.get('ttl_ms')} ms" if e.get("ok") else "extend failed"
        ),
        "lost": lambda: f"learned it lost the lock: {e.get('reason')}",
        "paused": lambda: f"FROZEN (SIGSTOP) for {e.get('ms')} ms",
        "resumed": lambda: "thawed (SIGCONT)",
        "crashed": lambda: "CRASHED (kill -9)",
        "restarted": lambda: "restarted",
        "expired": lambda: f"lease of {e.get('holder') or '?'} EXPIRED",
        "deleted": lambda: f"lock key of {e.get('holder') or '?'} deleted",
        "clock_jumped": lambda: f"wall clock jumped {e.get('ms')} ms",
    }
    return notes[kind]() if kind in notes else None  # type: ignore[index]


def _rejected(e: dict[str, Any]) -> bool:
    return e.get("kind") == "reply" and e.get("op") == "write" and e.get("accepted") is False


def mermaid(run: dict[str, Any]) -> str:
    """The run as a Mermaid ``sequenceDiagram`` (see the module docstring)."""
    events = [e for e in run.get("events") or [] if isinstance(e, dict)]
    people = _discover(run, events)
    scenario = run.get("scenario") or {}
    verdict = run.get("verdict") if isinstance(run.get("verdict"), dict) else None
    title = scenario.get("title") or "lockviz run"
    head = [
        "sequenceDiagram",
        f"    title {text(title, 120)} · lockviz run {text(run.get('run_id', '?'), 20)}",
    ]
    head += [f"    {line}" for line in people.declarations()]
    return "\n".join(head + [f"    {line}" for line in _body(events, people, verdict)]) + "\n"


def _body(
    events: list[dict[str, Any]], people: _Participants, verdict: dict[str, Any] | None
) -> Iterable[str]:
    every = people.span()
    writes = (verdict or {}).get("writes")
    stale = {
        w.get("seq")
        for w in (writes if isinstance(writes, list) else [])
        if isinstance(w, dict) and w.get("stale") and w.get("accepted")
    }
    # A rejected or stale write is drawn as one block, request and reply together.
    grouped = {
        (e.get("actor"), e.get("call"))
        for e in events
        if e.get("kind") == "reply" and (_rejected(e) or e.get("seq") in stale)
    }
    held: dict[tuple[Any, Any], dict[str, Any]] = {}
    pause_open: str | None = None  # the client whose pause rect is open (rects must nest)
    for e in events:
        kind, actor, when = e.get("kind"), e.get("actor"), secs(e.get("t_ms"))
        if kind == "request":
            key = (actor, e.get("call"))
            if key in grouped:
                held[key] = e
                continue
            yield f"{people.id(actor)}->>{people.id(e.get('to'))}: {text(_request_label(e))}"
        elif kind == "reply":
            request = held.pop((actor, e.get("call")), None)
            me, server = people.id(actor), people.id(e.get("from"))
            arrows = [f"{server}-->>{me}: {text(_reply_label(e))}"]
            if request is not None:
                arrows.insert(
                    0, f"{me}->>{people.id(request.get('to'))}: {text(_request_label(request))}"
                )
            if _rejected(e):
                reason = text(e.get("reason") or "stale token")
                yield f"break {when} · write REJECTED by fencing ({reason})"
                yield from (f"    {a}" for a in arrows)
                yield "end"
            elif e.get("seq") in stale:
                yield STALE_FILL
                yield from (f"    {a}" for a in arrows)
                yield f"    Note over {me},{server}: {when} · STALE WRITE ACCEPTED (data corrupted)"
                yield "end"
            else:
                yield from arrows
        elif kind == "step":
            if e.get("say"):
                step = e.get("index")
                number = f"step {step + 1}" if isinstance(step, int) else "step"
                yield f"Note over {every}: {when} · {number} · {wrapped(e['say'])}"
        elif kind == "run_started":
            fencing = "on" if e.get("fencing") else "off"
            backend = f"{e.get('backend')}" + (f" ({e.get('variant')})" if e.get("variant") else "")
            line = f"run started · {backend} · fencing {fencing} · lease {e.get('ttl_ms')} ms"
            yield f"Note over {every}: {when} · {text(line)}"
        elif kind in ("run_finished", "run_failed"):
            if pause_open is not None:
                yield "end"
                pause_open = None
            if kind == "run_failed":
                yield f"Note over {every}: {when} · run FAILED: {wrapped(e.get('error'))}"
        else:
            note = _note(e)
            if note is None:
                continue
            where = people.id(actor) if actor != "lab" else every
            if kind == "paused" and pause_open is None:
                pause_open = str(actor)
                yield PAUSE_FILL
            yield f"Note over {where}: {when} · {text(note)}"
            if kind in ("resumed", "crashed") and pause_open == actor:
                yield "end"
                pause_open = None
    if pause_open is not None:
        yield "end"
    if verdict is not None:
        summary = wrapped(verdict.get("summary") or "")
        yield f"Note over {every}: Verdict · {text(verdict_headline(verdict))}<br/>{summary}"
