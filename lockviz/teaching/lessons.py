"""The course: the built-in scenarios in modules, each one a lesson with a take-away.

Nine modules: one lock service each (single Redis, Redis with replicas and Sentinel, Redlock,
ZooKeeper, PostgreSQL, etcd: from one node to replicas and failover, to independent nodes, to
consensus), then what the storage checks, then one pause on every lock service and the Redlock
debate, then beyond one lock (elections, lockless storage, pitfalls). Within a module the
basics come first (the lock doing its job, clients taking turns), then the ways it fails. The
plan, with the concepts each lesson teaches and uses, is lockviz/teaching/syllabus.py; its order
is held to them (nothing is used before an earlier lesson taught it).
Lessons are looked up by the scenario's slug, so a lesson appears as soon as its scenario file
exists and a missing one is simply not listed. A built-in that no module names yet joins the
module of its lock service, at its end: every built-in scenario is a lesson. Lessons are
numbered once, 1 to n, across the course.

A walkthrough tells a real run of the lesson's scenario. It needs a run of the scenario *as
written* (``same_script``): the questions and their answers were written for that script, not
for a variation with fencing switched off or another backend.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lockviz.errors import ScenarioError
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario
from lockviz.teaching.concepts import Met, Placed, Planned, builds_on
from lockviz.teaching.syllabus import MODULES

# A run is only read here: the tables need Django set up, and bench/lessons.py runs without it.
if TYPE_CHECKING:
    from lockviz.models import Run

# Lessons that tell one story with several kinds of storage, linked side by side (each runs as
# its own built-in, with its prediction): the fencing hole and its closers; lockless; and so on.
HOLE = ("fenced", "fenced_reads", "sequencer", "cas")
PLAIN_FENCED = ("plain", "fenced")
SIDE_BY_SIDE: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(
        (
            "storage-hole-fenced",
            "storage-hole-plain",
            "storage-hole-fenced-reads",
            "storage-hole-sequencer",
            "storage-hole-cas",
        ),
        HOLE,
    ),
    **dict.fromkeys(("lww-clock-behind", "crdt-clock-behind"), ("lww", "crdt")),
    **dict.fromkeys(
        ("leader-etcd-pause-fenced", "leader-etcd-pause-plain"), ("fenced", "plain", "sequencer")
    ),
    **dict.fromkeys(("pitfall-write-after-failed-acquire", "pitfall-slow-write"), PLAIN_FENCED),
    "pitfall-read-outside-lock": ("fenced", "cas"),
}


def side_by_side(slug: str) -> str:
    """The comparison of lesson ``slug``'s story across storage kinds ('' when it has none)."""
    kinds = SIDE_BY_SIDE.get(slug)
    return f"/compare/?scenario={slug}&lanes={','.join(kinds)}" if kinds else ""


@dataclass(frozen=True)
class Lesson:
    number: int
    slug: str
    title: str
    takeaway: str
    minutes: int
    scenario: Scenario
    module: str = ""  # its module's slug
    planned: Planned | None = None  # its row in the course plan (None: not planned yet)
    builds_on: tuple[Met, ...] = ()  # what it needs that earlier lessons taught

    @property
    def backend(self) -> str:
        """The lock service, as a learner names it: "Redis", "Redlock (5 nodes)", ..."""
        s = self.scenario
        return s.lock_service.describe(s.variant, s.node_count)

    @property
    def side_by_side(self) -> str:
        return side_by_side(self.slug)

    @property
    def checkpoints(self) -> int:
        return sum(1 for step in self.scenario.steps if step.ask is not None)

    @property
    def basis(self) -> list[Basis]:
        """What it builds on, one earlier lesson at a time, each with the concepts met there."""
        found: dict[int, Basis] = {}
        for met in self.builds_on:
            was = found.get(met.number, Basis(met.number, met.slug, met.title, ()))
            found[met.number] = Basis(
                was.number, was.slug, was.title, (*was.concepts, met.concept.value)
            )
        return [found[n] for n in sorted(found)]


@dataclass(frozen=True)
class Basis:
    """An earlier lesson a lesson builds on, and the concepts the learner met there."""

    number: int
    slug: str
    title: str
    concepts: tuple[str, ...]

    @property
    def sentence(self) -> str:
        """ "leases and fencing tokens in lesson 1"."""
        named = list(self.concepts)
        words = ", ".join(named[:-1]) + f" and {named[-1]}" if len(named) > 1 else named[0]
        return f"{words} in lesson {self.number}"


@dataclass(frozen=True)
class Module:
    number: int
    slug: str
    title: str
    about: str
    lessons: tuple[Lesson, ...]

    @property
    def minutes(self) -> int:
        return sum(item.minutes for item in self.lessons)


def modules(scenarios: Mapping[str, Scenario] | None = None) -> list[Module]:
    """The course in modules (the built-ins by default); a module with no lesson is left out."""
    scenarios = builtin() if scenarios is None else scenarios
    rows = _placed(scenarios)
    met = builds_on([row for _module, row in rows])
    found: list[Module] = []
    for slug, title, about in [(p.slug, p.title, p.about) for p in MODULES] + [MORE]:
        items = tuple(
            _lesson(row, scenarios[row.planned.slug], slug, met[row.planned.slug])
            for module, row in rows
            if module == slug
        )
        if items:
            found.append(Module(len(found) + 1, slug, title, about, items))
    return found


MORE = ("more", "More", "Further scenarios.")  # built-ins of a lock service no module has


def _placed(scenarios: Mapping[str, Scenario]) -> list[tuple[str, Placed]]:
    """Every scenario in course order with its module's slug: the planned ones where the plan
    puts them, a built-in no row names at the end of its lock service's module (or in "more")."""
    named = {row.slug for plan in MODULES for row in plan.lessons}
    order: list[tuple[str, Planned]] = []
    for plan in MODULES:
        order += [(plan.slug, row) for row in plan.lessons if row.slug in scenarios]
        order += [
            (plan.slug, Planned(slug))
            for slug, s in sorted(scenarios.items())
            if slug not in named and s.backend == plan.backend
        ]
    seen = {row.slug for _, row in order}
    order += [(MORE[0], Planned(slug)) for slug in sorted(scenarios) if slug not in seen]
    return [
        (module, Placed(n, row, row.title or scenarios[row.slug].title, scenarios[row.slug]))
        for n, (module, row) in enumerate(order, start=1)
    ]


def placed(scenarios: Mapping[str, Scenario] | None = None) -> list[Placed]:
    """The course in order as the concept rules read it (lockviz.teaching.concepts.problems)."""
    return [row for _module, row in _placed(builtin() if scenarios is None else scenarios)]


def course(scenarios: Mapping[str, Scenario] | None = None) -> list[Lesson]:
    """Every scenario of ``scenarios`` (the built-ins by default) as a lesson, in course order."""
    return [item for module in modules(scenarios) for item in module.lessons]


def _lesson(row: Placed, scenario: Scenario, module: str, met: tuple[Met, ...]) -> Lesson:
    return Lesson(
        number=row.number,
        slug=row.planned.slug,
        title=row.title,
        takeaway=takeaway(scenario),
        minutes=minutes(scenario),
        scenario=scenario,
        module=module,
        planned=row.planned,
        builds_on=met,
    )


def lesson(slug: str) -> Lesson | None:
    return next((item for item in course() if item.slug == slug), None)


def takeaway(scenario: Scenario) -> str:
    """The scenario's own take-away, else its description's first sentence."""
    if scenario.takeaway:
        return scenario.takeaway
    first = re.split(r"(?<=[.!?])\s", scenario.description.strip(), maxsplit=1)[0]
    return first or scenario.title


def minutes(scenario: Scenario) -> int:
    """A reading estimate, 2 to 4 minutes: narration and questions take the time, not the run."""
    narrated = sum(1 for step in scenario.steps if step.say)
    asks = sum(1 for step in scenario.steps if step.ask)
    estimate = 1.5 + narrated * 0.2 + asks * 0.5 + scenario.duration_ms / 20_000
    return max(2, min(4, round(estimate)))


def same_script(run: Run, lesson_: Lesson) -> bool:
    """Whether a run played the lesson's scenario as written (so its questions fit the run):
    the same on the servers, whatever the words."""
    try:
        return run.parsed_scenario.script() == lesson_.scenario.script()
    except ScenarioError:
        return False
