"""What a class's page needs of the run the presenter shows (``/runs/<id>/follow.json``).

Its scenario as a student may read it (a checkpoint's question, never its answer, and no
expectation), and how to draw it as the presenter's page does (static/lockviz/run/drawing.js reads
``drawn``): the same lifelines from the start, the same time axis, the same marks across it. So a
follower's diagram is the presenter's, event for event, at the presenter's position.
"""

from __future__ import annotations

from django.db.models import Max

from lockviz import narrator
from lockviz.catalogue import BACKENDS
from lockviz.errors import ScenarioError
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.models import Run
from lockviz.teaching import reveals


def scenario(run: Run, hidden: frozenset[int]) -> JsonObject:
    """``run``'s scenario without the ``hidden`` answers (lockviz.teaching.reveals), each
    checkpoint's question without its choices' answer, and without ``expect``."""
    shown = reveals.scenario(run.scenario, hidden)
    steps: list[JsonValue] = []
    given = shown.get("steps")
    for step in given if isinstance(given, list) else []:
        copy = dict(step) if isinstance(step, dict) else step
        ask = step.get("ask") if isinstance(step, dict) else None
        if isinstance(copy, dict) and isinstance(ask, dict):
            copy["ask"] = {"question": ask.get("question", "")}
        steps.append(copy)
    shown["steps"] = steps
    shown.pop("expect", None)
    return shown


def drawn(run: Run) -> dict[str, object]:
    """How the presenter's page draws ``run``: its lock servers' lifelines, whether it is a
    free-play session (drawn without a schedule), where its events end (a replay's time axis)
    and, for a What if…? fork, where it parts from its original and the longer of the two
    schedules (the compare page draws both lanes on one axis); a checkpoint's step as a lesson
    draws it (``hidden``)."""
    end = run.events.aggregate(end=Max("t_ms"))["end"]
    fork: dict[str, object] | None = None
    if run.parent is not None and run.diverged_ms is not None:
        mark = {"t_ms": run.diverged_ms, "label": narrator.divergence(run.diverged_ms)}
        schedules = [schedule_ms(r) for r in (run, run.parent)]
        fork = {"marks": [mark], "duration_ms": max(ms or 4000 for ms in schedules) + 800}
    return {"nodes": lifelines(run), "open_ended": run.open_ended, "end_ms": end, "fork": fork,
            "hidden": checkpoints(run.scenario)}  # fmt: skip


def checkpoints(stored: JsonValue) -> dict[str, dict[str, str]]:
    """Each checkpoint's step as a lesson draws it, answered or not, by step index: its click
    and its question, never its narration (lockviz.narrator.checkpoint)."""
    steps = stored.get("steps") if isinstance(stored, dict) else None
    return {
        str(i): narrator.checkpoint(step, i)
        for i, step in enumerate(steps if isinstance(steps, list) else [])
        if isinstance(step, dict) and step.get("ask")
    }


def lifelines(run: Run) -> list[str]:
    """The lock servers' lifelines, known before the first event (a replay draws them all)."""
    service = BACKENDS.get(str(run.scenario.get("backend")))
    if service is None:
        return []
    field = service.node_count_field
    count = run.scenario.get(field) if field else None
    return service.nodes(count if isinstance(count, int) else None)


def schedule_ms(run: Run) -> int:
    """A run's schedule (lockviz.scenarios.schema.Scenario.duration_ms), 0 for one an older
    schema wrote (the compare page draws such a lane for 4 s: views/compare.py)."""
    try:
        return run.parsed_scenario.duration_ms
    except ScenarioError:
        return 0
