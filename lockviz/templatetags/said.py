"""``{% load said %}``: the narrator's words (lockviz/narrator/) where templates need them.

* ``scenario|story``: every step, numbered once (1, 2, 3 … narrated or not), with its click and
  its narration, for the story panels;
* ``scenario|setup``: the setting before anything has happened, which a lesson shows before the
  run (never its outcome);
* ``scenario|hold``: what the server counts down for a silent holder, in the words that fit the
  lock ("lease 2 s", "session timeout 1.5 s", "no lease"), for a page's header line;
* ``verdict|damage``: each stale write the storage accepted, to link to the moment it landed;
* ``slug|no_fencing``: why a built-in's lock service cannot fence ("" when it can);
* ``summary|unjudged``: a verdict's summary as (why it was not judged, what the run showed).
"""

from __future__ import annotations

from collections.abc import Mapping

from django import template

from algorithms import summary as verdict_words
from lockviz import narrator
from lockviz.models import Run
from lockviz.runs import waits
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario

register = template.Library()


def _json(scenario: Scenario | Mapping[str, object] | None) -> Mapping[str, object]:
    if isinstance(scenario, Scenario):
        return scenario.to_json()
    return scenario if isinstance(scenario, Mapping) else {}


@register.filter
def story(scenario: Scenario | Mapping[str, object] | None) -> list[dict[str, object]]:
    data = _json(scenario)
    steps = data.get("steps")
    return (
        narrator.story((s for s in steps if isinstance(s, Mapping)), narrator.electing(data))
        if isinstance(steps, list)
        else []
    )


@register.filter
def setup(scenario: Scenario | Mapping[str, object] | None) -> str:
    return narrator.setup(_json(scenario))


@register.filter
def hold(scenario: Scenario | Mapping[str, object] | None) -> str:
    return narrator.hold(_json(scenario))


@register.filter
def damage(verdict: Mapping[str, object] | None) -> list[dict[str, object]]:
    return narrator.damage(verdict if isinstance(verdict, Mapping) else None)


@register.filter
def no_fencing(slug: str) -> str:
    """Why a built-in scenario's lock service cannot fence ("" when it can)."""
    found = builtin().get(str(slug))
    return found.lock_service.no_fencing if found is not None else ""


@register.filter
def unjudged(summary: str) -> tuple[str, str]:
    return verdict_words.unjudged(str(summary))


@register.filter
def waited(run: Run) -> str:
    """How long ``run`` waited for the lab and behind whom, in a sentence ("" if it did not)."""
    found = waits.of(run)
    return found.sentence if found else ""
