"""The course can be followed: every concept a lesson uses was taught by an earlier lesson, and
no lesson's words send the learner forward (lockviz/teaching/concepts.py). Each rule is shown
failing on a deliberately broken course too, so that a green run means something."""

from __future__ import annotations

import copy
from dataclasses import replace

from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, parse
from lockviz.teaching.concepts import (
    Concept,
    Placed,
    Planned,
    builds_on,
    implied,
    problems,
)
from lockviz.teaching.lessons import course, placed
from lockviz.teaching.syllabus import MODULES
from tests.conftest import builtin_json


def test_the_built_in_course_uses_nothing_before_it_is_taught_and_points_only_back() -> None:
    assert problems(placed()) == []


def test_every_built_in_is_a_row_of_the_plan_so_it_declares_its_concepts() -> None:
    planned = [row.slug for plan in MODULES for row in plan.lessons]
    assert sorted(planned) == sorted(builtin()), "a built-in with no row declares nothing"
    assert len(planned) == len(set(planned))


def test_the_fenced_pause_follows_the_unfenced_one_and_failures_come_before_their_fixes() -> None:
    order = [item.slug for item in course()]
    assert order.index("gc-pause-fenced") == order.index("gc-pause-unfenced") + 1
    assert order.index("redlock-restart") < order.index("redlock-restart-fsync")
    assert order.index("storage-lost-update") < order.index("storage-hole-fenced")


def misordered() -> list[Placed]:
    """The built-in course with the fenced GC pause moved to the front: it relies on leases and
    pauses that nothing before it taught, and the lessons after it point forward to it."""
    course_ = placed()
    fenced = next(p for p in course_ if p.planned.slug == "gc-pause-fenced")
    rest = [p for p in course_ if p is not fenced]
    return [replace(p, number=n) for n, p in enumerate([fenced, *rest], start=1)]


def test_a_misordered_course_is_refused_with_the_lesson_and_the_concept_named() -> None:
    found = problems(misordered())
    assert any(
        line.startswith("gc-pause-fenced (lesson 1) uses leases (LEASE), which lesson 2")
        for line in found
    ), found
    assert any(line.startswith("gc-pause-fenced (lesson 1) uses process pauses") for line in found)


def worded(slug: str, **changes: object) -> Scenario:
    data = copy.deepcopy(builtin_json(slug))
    data.update(changes)
    return parse(data)


def course_of(*rows: tuple[Planned, Scenario]) -> list[Placed]:
    return [
        Placed(n, row, row.title or scenario.title, scenario)
        for n, (row, scenario) in enumerate(rows, start=1)
    ]


def test_a_description_that_points_to_a_later_lesson_is_refused() -> None:
    first = Planned("contention", "Taking turns", teaches=(Concept.MUTUAL_EXCLUSION,))
    ahead = worded("contention", description="See lesson “Later things” for why.")
    later = Planned("later", "Later things")
    found = problems(course_of((first, ahead), (later, worded("contention"))))
    assert "contention description: points to lesson 2 “Later things”, which comes later" in found
    # The same words pointing back are fine (as far as pointers go).
    back = problems(course_of((later, worded("contention")), (first, ahead)))
    assert not [line for line in back if "points to" in line]


def test_a_pointer_that_does_not_name_its_lesson_or_names_none_is_refused() -> None:
    row = Planned("contention", "Taking turns")
    for text, words in (
        ("Compare with the companion scenario.", "'companion'"),
        ("The next lesson shows it.", "'next lesson'"),
        ("As lesson 12 showed.", "'lesson 12'"),
        ("Compare with the fenced version of this lesson.", "'fenced version of this'"),
    ):
        found = problems(course_of((row, worded("contention", description=text))))
        assert f"contention description: {words} does not name its lesson; write lesson " in (
            "".join(found)
        ), (text, found)
    found = problems(course_of((row, worded("contention", takeaway="As lesson “Nope” said."))))
    assert "contention takeaway: no lesson is called “Nope”" in found


def test_a_concept_taught_twice_or_by_nobody_is_refused() -> None:
    one = Planned("contention", "One", teaches=(Concept.LEASE,))
    two = Planned("again", "Two", teaches=(Concept.LEASE,))
    found = problems(course_of((one, worded("contention")), (two, worded("contention"))))
    assert "again (lesson 2) teaches LEASE again: contention (lesson 1) already did" in found
    assert "no lesson teaches IDEMPOTENCY" in found


def test_what_a_scenario_implies_is_used_even_when_its_row_forgets_it() -> None:
    assert {Concept.QUORUM, Concept.VALIDITY} <= implied(builtin()["redlock-happy"])
    assert {Concept.PAUSE, Concept.FENCED_STORAGE, Concept.STALE_WRITE} <= implied(
        builtin()["gc-pause-fenced"]
    )
    assert Concept.LEASE not in implied(builtin()["naive-no-ttl-crash"])  # no TTL, no lease
    assert {Concept.CAS, Concept.LOST_UPDATE} <= implied(builtin()["storage-lost-update-cas"])
    assert Concept.IDEMPOTENCY in implied(builtin()["storage-retry-idempotent"])
    assert Concept.SILENT_FAILURE in implied(builtin()["zk-partition"])  # a blackhole
    assert Concept.SILENT_FAILURE not in implied(builtin()["pg-ghost-holder-reset"])  # a reset
    # A row that declares nothing still needs what its scenario implies.
    bare = Planned("redlock-happy", "Redlock")
    found = problems(course_of((bare, builtin()["redlock-happy"])))
    assert any("uses majorities of independent nodes (QUORUM), which no lesson" in f for f in found)


def test_each_lesson_says_what_it_builds_on_and_where_the_learner_met_it() -> None:
    lessons = {item.slug: item for item in course()}
    fenced = lessons["gc-pause-fenced"]
    met = {m.concept: m for m in fenced.builds_on}
    assert met[Concept.PAUSE].slug == "gc-pause-unfenced"
    assert met[Concept.TOKEN].sentence == "you met fencing tokens in lesson 1"
    assert lessons["contention"].builds_on == ()  # the first lesson builds on nothing
    for item in course():
        assert all(m.number < item.number for m in item.builds_on), item.slug
    assert builds_on(placed()) == {item.slug: item.builds_on for item in course()}
