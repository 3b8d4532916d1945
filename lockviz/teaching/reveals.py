"""Nothing before the reveal: what of a lesson's run a browser may read before its answers are out.

A lesson's checkpoint has a question, choices, an answer and an explanation, and the step's
narration (``say``) tells the answer too. Whoever started the run (its owner: the learner alone,
or the presenter of a room) has them all: the lesson page asks before it tells. Anyone else (a
student of the room, anyone with a link) gets a checkpoint's answer, explanation and narration
only once a room poll on that checkpoint of that run has been revealed; until then
:func:`hidden` names the checkpoint and every page, export and stream that carries the run goes
through :func:`scenario` and :func:`event` (or :func:`told`), which leave the question and the
choices and drop the rest. What the events themselves show (how the run ends) is the page's
business: the replay and the run page ask a student of the presenter's class (:func:`in_class`)
to confirm that they want the outcome (``OUTCOME`` in the query), and a room's followers get
events only up to the presenter's position (lockviz.consumers.rooms).

Only runs of a built-in lesson that a browser started are withheld: an imported run's scenario
is its importer's file, and a run nobody owns (``manage.py run_scenario``) was no class's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from lockviz import narrator
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.models import Member, Poll, Run
from lockviz.narrator import Told
from lockviz.runs import exports
from lockviz.scenarios.library import builtin

OUTCOME = "outcome"  # ?outcome=shown: the student confirmed they want to see how the run ends


def checkpoints(scenario: Mapping[str, JsonValue]) -> frozenset[int]:
    """The indexes of the scenario's steps that ask something."""
    steps = scenario.get("steps")
    if not isinstance(steps, list):
        return frozenset()
    return frozenset(i for i, s in enumerate(steps) if isinstance(s, dict) and s.get("ask"))


def hidden(run: Run, browser: str) -> frozenset[int]:
    """The checkpoints of ``run`` whose answers ``browser`` may not read yet (none: all of it)."""
    if not run.owner or run.owner == browser:  # nobody's (a script's) or this browser's own
        return frozenset()
    if run.slug not in builtin():
        return frozenset()
    asks = checkpoints(run.scenario)
    return asks - _revealed(run) if asks else asks


def unanswered(run: Run, answered: set[int]) -> frozenset[int]:
    """The checkpoints of ``run`` its owner has not answered yet (``answered``: those they did,
    as their session remembers) and no class poll has revealed: their lesson page holds no
    answer to them until they answer."""
    asks = checkpoints(run.scenario) - answered
    if not asks:
        return asks
    return asks - _revealed(run)


def _revealed(run: Run) -> frozenset[int]:
    revealed = Poll.objects.filter(run=run.pk, state=Poll.State.REVEALED, step__isnull=False)
    return frozenset(i for i in revealed.values_list("step", flat=True) if i is not None)


def in_class(run: Run, browser: str) -> bool:
    """Whether ``browser`` follows a room whose presenter started ``run`` (a student of it)."""
    if not browser or not run.owner or run.owner == browser:
        return False
    return Member.objects.filter(browser=browser, room__presenter=run.owner).exists()


def scenario(data: Mapping[str, JsonValue], withheld: frozenset[int]) -> JsonObject:
    """The scenario without the answers, explanations and narrations of ``withheld`` steps, and
    without its expectation (the outcome in a word) while any is withheld."""
    shown = dict(data)
    if not withheld:
        return shown
    shown["steps"] = [_step(s, i in withheld) for i, s in enumerate(_steps(shown))]
    shown.pop("expect", None)
    return shown


def _steps(data: Mapping[str, JsonValue]) -> list[JsonValue]:
    found = data.get("steps")
    return found if isinstance(found, list) else []


def _step(step: JsonValue, withheld: bool) -> JsonValue:
    if not withheld or not isinstance(step, dict):
        return step
    found = step.get("ask")
    ask: JsonObject = found if isinstance(found, dict) else {}
    kept = {k: v for k, v in step.items() if k not in ("say", "ask")}
    kept["ask"] = {"question": ask.get("question", ""), "choices": ask.get("choices", [])}
    return kept


def event(e: Mapping[str, object], withheld: frozenset[int], data: Mapping[str, JsonValue]) -> Told:
    """A stored or told event of the run whose scenario is ``data``; a withheld checkpoint's
    ``step`` event loses its narration and is said by its click and its question (as the lesson
    page says it before it is answered)."""
    index = e.get("index")
    if e.get("kind") != "step" or index not in withheld or not isinstance(index, int):
        return dict(e)
    kept = {k: v for k, v in e.items() if k != "say"}
    if "said" in e:
        steps = _steps(data)
        found = steps[index] if index < len(steps) else None
        step = found if isinstance(found, dict) else {}
        ask = step.get("ask")
        kept["said"] = narrator.checkpoint({**kept, "ask": ask}, index, narrator.electing(data))
    return kept


def told(
    run: Run, withheld: frozenset[int], after: int = 0, limit: int | None = None
) -> list[Told]:
    """The events after ``after`` (at most ``limit``) with their stored words
    (``Run.said_after``), as a browser that may not read the ``withheld`` checkpoints' answers
    gets them."""
    events = run.said_after(after, limit)
    return [event(e, withheld, run.scenario) for e in events] if withheld else events


def told_between(run: Run, hidden: frozenset[int], after: int, reach: int) -> list[Told]:
    """The events of ``run`` after ``after`` up to ``reach`` with their stored words, as a
    follower that may not read the ``hidden`` answers gets them: only those rows are read (a
    run's seqs count up from 1), so a class stepping through a long run costs a page each."""
    found = told(run, hidden, after, max(0, reach - after))
    return [e for e in found if isinstance(e["seq"], int) and e["seq"] <= reach]


def export(run: Run, withheld: frozenset[int], events: bool = True) -> dict[str, object]:
    """``/runs/<id>/export.json`` for a browser that may not read the ``withheld`` answers
    (without ``events``: all but its events, for :func:`mermaid`)."""
    exported = run.as_export(events)
    if withheld:
        exported["scenario"] = scenario(run.scenario, withheld)
        found = exported["events"]
        assert isinstance(found, list)
        exported["events"] = [event(e, withheld, run.scenario) for e in found]
    return exported


def mermaid(
    head: dict[str, object], texts: list[str], withheld: frozenset[int], data: JsonObject
) -> str:
    """The Mermaid export of a run: ``head`` its :func:`export` without events, ``texts`` its
    events as stored (``Run.event_texts``), ``data`` its scenario. A worker process's job
    (lockviz.edge.workers): decoding and drawing 20,000 events is a second of CPU."""
    found = (json.loads(text) for text in texts)
    events = [event(e, withheld, data) for e in found] if withheld else list(found)
    return exports.mermaid({**head, "events": events})
