"""The narrator reads events as their kinds' models (issue 33): each event's JSON is parsed once,
where it enters (``lab/events.py:lenient``), and only there and in the words of an event that
does not parse is the JSON read."""

from __future__ import annotations

import ast
from pathlib import Path

from lockviz.lab.events import BaseEvent, Crashed, Reply, lenient
from lockviz.narrator import Narrator, render

PACKAGE = Path(__file__).parents[3] / "lockviz" / "narrator"
# Where an event's JSON is still in hand: the parse, and the plain words of an odd event.
BOUNDARY = {
    "rows.py": {"plainly", "__call__"},
    "telling.py": {"said", "words", "narrate"},
    "terminal.py": {"render"},
}


def test_only_the_boundary_takes_an_events_json() -> None:
    """Every sayer, and the memory, take a model: a function given ``EventJson`` is one of the
    few that parse it or say it plainly."""
    takes = set()
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                args = [*node.args.args, *node.args.kwonlyargs]
                if any("EventJson" in ast.unparse(a.annotation or ast.Constant("")) for a in args):
                    takes.add((path.name, node.name))
    allowed = {(module, name) for module, names in BOUNDARY.items() for name in names}
    assert takes - allowed == set()


def test_an_event_is_parsed_leniently_into_its_kinds_model() -> None:
    crashed = lenient({"kind": "crashed", "actor": "redis-2"})  # no seq, no t_ms
    assert isinstance(crashed, Crashed) and crashed.model_fields_set == {"kind", "actor"}
    assert crashed.model_dump()["seq"] is None  # what it lacks reads as None
    reply = lenient({"kind": "reply", "from": "storage", "call": 1, "token": None})
    assert isinstance(reply, Reply) and reply.frm == "storage" and reply.actor == "?"
    assert {"token", "frm"} <= reply.model_fields_set and "accepted" not in reply.model_fields_set
    other = lenient({"kind": "teleported", "actor": "alice", "to": "mars"})
    assert type(other).__name__ == "BaseEvent" and isinstance(other, BaseEvent)
    assert other.kind == "teleported"
    # what does not fit its kind: a field of the wrong type, an undeclared field, no kind
    assert lenient({"kind": "granted", "actor": "x", "token": {"a": 1}}) is None
    assert lenient({"kind": "crashed", "actor": "x", "signal": 9}) is None
    assert lenient({"kind": "?", "seq": "x"}) is None
    assert lenient({}) is None and lenient({"kind": ["step"]}) is None


def test_an_event_that_does_not_fit_its_kind_is_said_plainly() -> None:
    said = Narrator().said({"kind": "granted", "actor": "x", "token": {"a": 1}})
    assert (said.phrase, said.text, said.label) == ("granted", "x granted", "")
    line = render([{"kind": "granted", "actor": "x", "token": {"a": 1}}])
    assert line.split() == ["?", "#?", "?", "granted"]  # no time, number or actor to trust
