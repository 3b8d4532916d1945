"""The narrator's shape: a layer below the app's features, one sayer per declared kind, sayers
that only read the memory, and a memory that changes only in ``Memory.see``."""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path

import pytest

from lockviz.lab.events import KINDS
from lockviz.narrator import Narrator, narrate
from lockviz.narrator.memory import Memory
from lockviz.narrator.phrases import unknown
from lockviz.narrator.sayers import SAYERS

PACKAGE = Path(__file__).parents[3] / "lockviz" / "narrator"
# What the narrator may read of the app: its own modules, the backends, the events' and the
# verdict's declarations.
BELOW = ("lockviz.narrator", "lockviz.catalogue", "lockviz.lab.events", "lockviz.lab.verdicts")
RUNS = sorted((Path(__file__).parents[2] / "browser" / "data" / "runs").glob("*.json"))


def test_the_narrator_imports_nothing_above_it() -> None:
    """models/runs.py imports the narrator, so the narrator must not import runs/, views…"""
    upward = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            upward += [
                f"{path.name}: {name}"
                for name in names
                if name.startswith("lockviz") and not name.startswith(BELOW)
            ]
    assert upward == []


def test_every_declared_kind_has_one_sayer_and_no_other_kind_has_one() -> None:
    assert sorted(SAYERS) == sorted(KINDS)


def test_a_kind_without_a_sayer_is_said_by_its_name() -> None:
    said = Narrator().said({"kind": "teleported", "actor": "alice"})
    assert (said.phrase, said.text, said.label) == ("teleported", "alice teleported", "")
    assert unknown(Memory(), {"kind": "teleported", "actor": "lab"}).text == "teleported"


@pytest.mark.parametrize("path", RUNS, ids=lambda p: p.stem)
def test_sayers_read_the_memory_and_only_see_changes_it(path: Path) -> None:
    """Each recorded run, event by event: the sayer leaves the memory as it found it, and the
    narrator says what the sayer says on the memory so far."""
    run = json.loads(path.read_text())
    narrator = Narrator(run["scenario"].get("backend"))
    for e in run["events"]:
        before = copy.deepcopy(narrator.memory)
        words = SAYERS[e["kind"]](narrator.memory, e)
        assert narrator.memory == before, f"the {e['kind']} sayer changed the memory"
        assert narrator.said(e) == words


def test_no_word_is_said_twice_in_a_row() -> None:
    """Words built from parts can stutter ("zk-1: lock lock node of bob deleted" did): no
    sentence or label of any recorded run repeats a word."""
    twice = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
    found = set()
    for path in RUNS:
        run = json.loads(path.read_text())
        for e in narrate(run["events"], run["scenario"]["backend"]):
            for field in ("text", "label", "mark"):
                said = str(e["said"].get(field) or "")
                if twice.search(said):
                    found.add(f"{path.stem} {e['kind']} {field}: {said}")
    assert sorted(found) == []


def said_in(slug: str) -> list[str]:
    run = json.loads(next(p for p in RUNS if p.stem == slug).read_text())
    return [e["said"]["text"] for e in narrate(run["events"], run["scenario"]["backend"])]


def test_what_an_actor_has_is_said_as_its_own_and_a_refused_extend_says_why() -> None:
    """ "redis-3's wall clock jumped", not "redis-3 wall clock"; a note that names its client
    is not prefixed with the name again; an extend refused says whose the key is now."""
    assert any(
        t.startswith("redis-3's wall clock jumped +15 s") for t in said_in("redlock-clock-jump")
    )
    slow = said_in("redlock-slow-clock")
    assert "alice's own clock now runs at ×0.3" in slow
    assert any(t.startswith("alice checks its lease by its own clock") for t in slow)
    assert "alice ← redis-1: extend key held by bob" in said_in("watchdog-pause")


def test_a_client_that_gives_up_on_suspended_is_said_in_the_third_person() -> None:
    """The client's reason ("connection suspended: my lock may be gone") is its own voice; the
    narrator says what it does: it gives the lock (or the leadership) up."""
    said = said_in("zk-leader-crash")
    assert any(t.startswith("alice gives the lock up: its connection is suspended") for t in said)
    assert not [t for t in said if "my lock" in t]
