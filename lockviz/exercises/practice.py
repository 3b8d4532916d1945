"""What an exercise practises, in the course's order: which lessons teach what it asks for.

An exercise names the concepts it practises by their ids (``concepts``: members of
:class:`lockviz.teaching.concepts.Concept`), and the course says which lesson teaches each (its
home: lockviz.teaching.lessons, in course order). What it *needs* is more than it names: what
its setting and its worked solution imply (:func:`lockviz.teaching.concepts.implied`, read off
the scenario, as for a lesson) and what its goal or its choices ask about (:data:`GOALS`,
:data:`OUTCOMES`). So the exercises list can say "practises what lessons 37–43 teach"
(:func:`span`), and :func:`problems` holds an exercise to one rule: it needs nothing taught
after the last lesson it names, so a learner who has done those lessons has met everything it
asks (tests/lockviz/exercises/test_practice.py holds every built-in to it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from lockviz.errors import ExerciseRefused
from lockviz.exercises import answers
from lockviz.exercises.definition import Exercise
from lockviz.teaching import lessons
from lockviz.teaching.concepts import Concept, implied

C = Concept
# What each goal and each predicted outcome asks a learner to know (lockviz.exercises.goals).
GOALS: dict[str, frozenset[Concept]] = {
    "two_holders": frozenset({C.MUTUAL_EXCLUSION}),
    "stale_write": frozenset({C.STALE_WRITE}),
    "lost_update": frozenset({C.LOST_UPDATE}),
    "safe": frozenset({C.STALE_WRITE, C.LIVENESS}),  # no stale write lands, and still live
}
OUTCOMES: dict[str, frozenset[Concept]] = {
    "stuck": frozenset({C.LIVENESS}),
    "corrupted": frozenset({C.STALE_WRITE}),
    "refused": frozenset({C.STALE_WRITE, C.FENCED_STORAGE}),
    "two_holders": frozenset({C.MUTUAL_EXCLUSION}),
    "held": frozenset({C.MUTUAL_EXCLUSION}),
}


@dataclass(frozen=True)
class Span:
    """The lessons that teach what an exercise practises: from ``first`` to ``last``."""

    first: int
    last: int

    @property
    def sentence(self) -> str:
        if self.first == self.last:
            return f"practises what lesson {self.first} teaches"
        return f"practises what lessons {self.first}–{self.last} teach"


@cache
def homes() -> Mapping[Concept, int]:
    """Each concept's home: the number of the lesson that teaches it."""
    found: dict[Concept, int] = {}
    for placed in lessons.placed():
        for concept in placed.planned.teaches:
            found.setdefault(concept, placed.number)
    return found


def needs(ex: Exercise) -> frozenset[Concept]:
    """What ``ex`` cannot be done without: what it names, what its setting and its worked
    solution imply, and what its goal (or its choices) ask about."""
    found = set(ex.practises) | implied(ex.setting())
    try:
        solved, _goal = answers.scenario_for(ex, answers.solution(ex))
    except ExerciseRefused:  # a teacher's worked answer that does not run: its setting alone
        solved = None
    if solved is not None:
        found |= implied(solved)
    found |= GOALS.get(ex.goal or "", frozenset())
    for choice in ex.choices:
        found |= OUTCOMES.get(choice, frozenset())
    return frozenset(found)


def span(ex: Exercise) -> Span | None:
    """The lessons that teach the concepts ``ex`` names (None when it names none)."""
    taught = [homes()[c] for c in ex.practises if c in homes()]
    return Span(min(taught), max(taught)) if taught else None


def problems(ex: Exercise) -> list[str]:
    """Why the concepts ``ex`` names do not say what it asks (empty when they do)."""
    found = span(ex)
    if found is None:
        return ["concepts: name the concepts it practises (the course's ids)"]
    later = sorted(
        ((homes()[c], c) for c in needs(ex) if c in homes() and homes()[c] > found.last),
        key=lambda pair: (pair[0], pair[1].name),  # a lesson may teach two: by name among them
    )
    return [
        f"concepts: it needs {concept.value} ({concept.name}), which lesson {number} teaches, "
        f"after the last lesson it names ({found.last})"
        for number, concept in later
    ]
