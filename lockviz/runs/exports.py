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
from collections.abc import Iterable, Mapping

from algorithms.checker import storage_kind
from lockviz.lab.events import EventJson
from lockviz.narrator import Narrator, Said, electing, headline

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


def secs(t_ms: object) -> str:
    return f"t={float(t_ms) / 1000:.2f} s" if isinstance(t_ms, int | float) else "t=?"


class _Participants:
    """Lifelines in order (clients, lock nodes, storage) with ids Mermaid cannot misread."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}  # in the order they were met
        self.roles: dict[str, str] = {}
        self.taken: set[str] = set()  # every id handed out: linear in the number of actors

    def add(self, name: object, role: str) -> None:
        name = str(name)
        if name in self.ids or (name == "lab" and role != "other"):
            return  # the lab is drawn as notes over every lifeline, unless a message names it
        candidate = re.sub(r"[^a-z0-9_]", "_", name.lower())
        if not _ID.match(candidate) or candidate in _KEYWORDS or candidate in self.taken:
            candidate = f"p{len(self.ids) + 1}"
            while candidate in self.taken:
                candidate += "_"
        self.ids[name] = candidate
        self.taken.add(candidate)
        self.roles[name] = role

    def id(self, name: object) -> str:
        self.add(name, "other")
        return self.ids[str(name)]

    def ordered(self) -> list[str]:
        rank = {"client": 0, "node": 1, "other": 2, "storage": 3}
        met = {name: i for i, name in enumerate(self.ids)}
        return sorted(met, key=lambda n: (rank[self.roles[n]], met[n]))

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


def _discover(run: Mapping[str, object], events: list[EventJson]) -> _Participants:
    people = _Participants()
    started: EventJson = next((e for e in events if e.get("kind") == "run_started"), {})
    scenario = _object(run.get("scenario"))
    for name in _names(started.get("clients")) or _names(scenario.get("clients")):
        people.add(name, "client")
    for name in _names(started.get("nodes")):
        people.add(name, "node")
    storage = started.get("storage") if isinstance(started.get("storage"), str) else "storage"
    for e in events:
        kind = e.get("kind")
        if kind in CLIENT_KINDS and e.get("actor") != storage:  # the storage asks a lock node
            people.add(e.get("actor"), "client")
        for server in (e.get("to"), e.get("from")) if kind in ("request", "reply") else ():
            if isinstance(server, str) and server != storage:
                people.add(server, "node")
        if kind in SERVER_KINDS:
            people.add(e.get("actor"), "node")
    people.add(storage, "storage")
    return people


def _names(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


# The events drawn as notes over their lifeline, in the narrator's words.
NOTE_KINDS = CLIENT_KINDS - {"request", "reply"} | SERVER_KINDS


def _object(value: object) -> Mapping[str, object]:
    """A JSON object of the run (its scenario, its verdict), or an empty one."""
    return value if isinstance(value, dict) else {}


def _rejected(e: EventJson) -> bool:
    return e.get("kind") == "reply" and e.get("op") == "write" and e.get("accepted") is False


def mermaid(run: Mapping[str, object]) -> str:
    """The run as a Mermaid ``sequenceDiagram`` (see the module docstring)."""
    listed = run.get("events")
    events: list[EventJson] = (
        [e for e in listed or [] if isinstance(e, dict)] if isinstance(listed, list) else []
    )
    people = _discover(run, events)
    scenario = _object(run.get("scenario"))
    found = run.get("verdict")
    verdict = found if isinstance(found, dict) else None
    title = scenario.get("title") or "lockviz run"
    head = [
        "sequenceDiagram",
        f"    title {text(title, 120)} · lockviz run {text(run.get('run_id', '?'), 20)}",
    ]
    head += [f"    {line}" for line in people.declarations()]
    return "\n".join(head + [f"    {line}" for line in _body(events, people, verdict)]) + "\n"


def _body(
    events: list[EventJson], people: _Participants, verdict: Mapping[str, object] | None
) -> Iterable[str]:
    body = _Body(events, people, verdict)
    for e in events:
        yield from body.line(e)
    yield from body.close()
    if verdict is not None:
        summary = wrapped(verdict.get("summary") or "")
        started = next((e for e in events if e["kind"] == "run_started"), {})
        chosen = headline(verdict, storage=storage_kind(events), election=electing(started))
        words = chosen[0].lstrip("✔⚠✖ ")
        yield f"Note over {people.span()}: Verdict · {text(words)}<br/>{summary}"


class _Body:
    """The diagram's statements, event by event; blocks (rects, breaks) open and close in pairs."""

    def __init__(
        self, events: list[EventJson], people: _Participants, verdict: Mapping[str, object] | None
    ) -> None:
        self.people = people
        self.every = people.span()
        writes = (verdict or {}).get("writes")
        self.stale = {
            w.get("seq")
            for w in (writes if isinstance(writes, list) else [])
            if isinstance(w, dict) and w.get("stale") and w.get("accepted")
        }
        # A rejected or stale write is drawn as one block, request and reply together.
        self.grouped = {
            (e.get("actor"), e.get("call"))
            for e in events
            if e.get("kind") == "reply" and (_rejected(e) or e.get("seq") in self.stale)
        }
        self.held: dict[tuple[object, object], tuple[EventJson, str]] = {}  # (actor, call)
        self.pause_open: str | None = None  # whose pause rect is open (rects must nest)
        self.narrator = Narrator()

    def line(self, e: EventJson) -> Iterable[str]:
        kind, when = e.get("kind"), secs(e.get("t_ms"))
        said = self.narrator.said(e)
        if kind == "request":
            yield from self._request(e, said.label or said.short)
        elif kind == "reply":
            yield from self._reply(e, said, when)
        elif kind == "step":  # every step, narrated or not, numbered as on every page
            yield f"Note over {self.every}: {when} · {wrapped(said.text)}"
        elif kind == "run_started":
            fencing = "on" if e.get("fencing") else "off"
            backend = f"{e.get('backend')}" + (f" ({e.get('variant')})" if e.get("variant") else "")
            line = f"run started · {backend} · fencing {fencing} · lease {e.get('ttl_ms')} ms"
            yield f"Note over {self.every}: {when} · {text(line)}"
        elif kind == "schedule_shifted":  # the machine fell behind: whether the story survived
            yield f"Note over {self.every}: {when} · {wrapped(said.phrase)}"
        elif kind in ("run_finished", "run_failed"):
            yield from self.close()
            if kind == "run_failed":
                yield f"Note over {self.every}: {when} · run FAILED: {wrapped(e.get('error'))}"
        elif kind in NOTE_KINDS:
            yield from self._note(e, said.phrase, when)

    def close(self) -> Iterable[str]:
        if self.pause_open is not None:
            yield "end"
            self.pause_open = None

    def _request(self, e: EventJson, label: str) -> Iterable[str]:
        key = (e.get("actor"), e.get("call"))
        if key in self.grouped:
            self.held[key] = (e, label)
            return
        yield f"{self.people.id(e.get('actor'))}->>{self.people.id(e.get('to'))}: {text(label)}"

    def _reply(self, e: EventJson, said: Said, when: str) -> Iterable[str]:
        found = self.held.pop((e.get("actor"), e.get("call")), None)
        me, server = self.people.id(e.get("actor")), self.people.id(e.get("from"))
        arrows = [f"{server}-->>{me}: {text(said.label or said.short or said.phrase)}"]
        if found is not None:
            request, asked = found
            arrows.insert(0, f"{me}->>{self.people.id(request.get('to'))}: {text(asked)}")
        if _rejected(e):
            reason = text(e.get("reason") or "stale token")
            yield f"break {when} · write REJECTED by fencing ({reason})"
            yield from (f"    {a}" for a in arrows)
            yield "end"
        elif e.get("seq") in self.stale or said.tone == "damage":
            yield STALE_FILL
            yield from (f"    {a}" for a in arrows)
            damage = f": {said.mark}" if said.tone == "damage" else ""
            yield f"    Note over {me},{server}: {when} · STALE WRITE ACCEPTED{text(damage)}"
            yield "end"
        else:
            yield from arrows

    def _note(self, e: EventJson, note: str, when: str) -> Iterable[str]:
        kind, actor = e.get("kind"), e.get("actor")
        where = self.people.id(actor) if actor != "lab" else self.every
        if kind == "paused" and self.pause_open is None:
            self.pause_open = str(actor)
            yield PAUSE_FILL
        yield f"Note over {where}: {when} · {text(note)}"
        if kind in ("resumed", "crashed") and self.pause_open == actor:
            yield "end"
            self.pause_open = None
