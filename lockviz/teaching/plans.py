"""Lecture plans: an ordered list of items a teacher prepares, and presents to a room.

An item is one of

* ``lesson``: a lesson of the course (a built-in scenario's slug: lockviz.teaching.lessons);
* ``replay``: a stored run, optionally from one moment (``from``, an event's seq) to another
  (``to``): the replay opens at ``from`` and its playing stops at ``to``;
* ``scenario``: a scenario to run live, a built-in's ``slug`` or a whole ``scenario`` (JSON,
  checked by lockviz.scenarios.schema, as an import is);
* ``poll``: a question with 2 to 6 choices, asked of the room as lockviz.teaching.rooms.ask asks;
* ``exercise``: a built-in exercise (lockviz.exercises), which each student does on their own;
  the room's class view follows who solved it in how many attempts;

and each has the teacher's ``note``: shown to the presenter only (the plan's pages and the plan
bar on the presenter's screens), never in a room's state, a poll or anything a student reads.

:func:`read` turns decoded JSON (the editor's form, or an imported file: plan_files.py) into a
title and :class:`Item` values, or :class:`PlanRefused` naming every problem by its item's number
(``item 2 (replay): ...``). :func:`may_edit` alone decides who may change a plan.

Over ~300 lines: each kind's reader sits beside the :class:`Item` it makes and the kept items'
reading (:func:`items_of`), so a new field of an item is added in one module.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TypedDict

from django.db.models import Max

from lockviz import plaintext
from lockviz.errors import PlanRefused, ScenarioError
from lockviz.exercises.builtin import builtin as exercises
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.models import Plan, Run
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import parse
from lockviz.teaching import lessons

KINDS = ("lesson", "replay", "scenario", "poll", "exercise")
KIND_WORDS = {
    "lesson": "lesson", "replay": "replay", "scenario": "live run", "poll": "poll",
    "exercise": "exercise",
}  # fmt: skip
MAX_ITEMS, MAX_TITLE, MAX_NOTE = 30, 120, 2000
MAX_PLANS = 200  # a browser's own (a copy and an import are new plans too)
MAX_QUESTION, MAX_CHOICE, MIN_CHOICES, MAX_CHOICES = 300, 200, 2, 6  # as rooms' polls
MAX_SCENARIO_BYTES = 64 * 1024  # a scenario item's JSON (the built-ins are under 8 KB)
RUN_ID, SLUG = re.compile(r"^[A-Za-z0-9_-]{1,16}$"), re.compile(r"^[a-z0-9-]{1,100}$")


@dataclass(frozen=True)
class Item:
    """One item of a plan; only the fields of its ``kind`` are set."""

    kind: str
    note: str = ""
    lesson: str = ""
    run: str = ""
    seq_from: int | None = None
    seq_to: int | None = None
    slug: str = ""
    scenario: JsonObject | None = None
    question: str = ""
    choices: tuple[str, ...] = field(default_factory=tuple)
    exercise: str = ""

    def as_data(self) -> JsonObject:
        """As a plan keeps it (``Plan.items``) and exports it: the fields of its kind."""
        data: JsonObject = {"kind": self.kind}
        if self.kind == "lesson":
            data["lesson"] = self.lesson
        elif self.kind == "replay":
            data.update({"run": self.run, "from": self.seq_from, "to": self.seq_to})
        elif self.kind == "scenario":
            data.update({"slug": self.slug} if self.slug else {"scenario": self.scenario})
        elif self.kind == "exercise":
            data["exercise"] = self.exercise
        else:
            data.update({"question": self.question, "choices": [*self.choices]})
        data["note"] = self.note
        return data

    @property
    def title(self) -> str:
        """What the item is, in a line: the plan's list and the presenter's bar say it."""
        if self.kind == "lesson":
            found = lessons.lesson(self.lesson)
            return f"Lesson {found.number}: {found.title}" if found else f"Lesson {self.lesson}"
        if self.kind == "replay":
            run = Run.objects.filter(pk=self.run).only("title").first()
            span = ""
            if self.seq_from is not None or self.seq_to is not None:
                end = f"#{self.seq_to}" if self.seq_to else "the end"
                span = f" (#{self.seq_from or 1} to {end})"
            return f"Replay: {run.title if run else 'run ' + self.run}{span}"
        if self.kind == "scenario":
            known = builtin().get(self.slug) if self.slug else None
            name = known.title if known else str((self.scenario or {}).get("title") or "")
            return f"Live run: {name or 'a scenario'}"
        if self.kind == "exercise":
            chosen = exercises().get(self.exercise)
            return f"Exercise: {chosen.title if chosen else self.exercise}"
        return f"Poll: {self.question}"


class Fields(TypedDict, total=False):
    """The fields of an :class:`Item` its kind sets (its ``kind`` and ``note`` aside)."""

    lesson: str
    run: str
    seq_from: int | None
    seq_to: int | None
    slug: str
    scenario: JsonObject
    question: str
    choices: tuple[str, ...]
    exercise: str


def read(data: JsonValue) -> tuple[str, list[Item]]:
    """A plan's title and items from decoded JSON ``{"title", "items": [...]}``, or
    :class:`PlanRefused` naming every problem (the title's, and each item's by its number)."""
    if not isinstance(data, dict):
        raise PlanRefused("plan: must be a JSON object with a title and items")
    title = data.get("title")
    problems = _title_problems(title)
    given = data.get("items")
    if not isinstance(given, list):
        raise PlanRefused([*problems, "items: must be a list of items"])
    if not given:
        problems.append("items: a plan needs at least one item")
    if len(given) > MAX_ITEMS:
        raise PlanRefused([*problems, f"items: {len(given)} items; a plan has at most {MAX_ITEMS}"])
    items: list[Item] = []
    for number, raw in enumerate(given, start=1):
        try:
            items.append(read_item(raw))
        except PlanRefused as exc:
            kind = raw.get("kind") if isinstance(raw, dict) else None
            named = f"item {number}" + (f" ({KIND_WORDS[kind]})" if kind in KINDS else "")
            problems += [f"{named}: {problem}" for problem in exc.problems]
    if problems:
        raise PlanRefused(problems)
    return str(title).strip(), items


def _title_problems(title: JsonValue) -> list[str]:
    if not isinstance(title, str) or not title.strip():
        return ["title: give the plan a title"]
    if len(title.strip()) > MAX_TITLE:
        return [f"title: {len(title.strip())} characters; the most is {MAX_TITLE}"]
    said = plaintext.problem(title.strip())
    return [f"title: {said}"] if said is not None else []


def read_item(raw: JsonValue) -> Item:
    """One item, or :class:`PlanRefused` with each of its problems (not yet numbered)."""
    if not isinstance(raw, dict):
        raise PlanRefused("must be an object with a kind")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise PlanRefused(f"kind: {str(kind)[:20]!r} is not one of {', '.join(KINDS)}")
    problems: list[str] = []
    note = raw.get("note") or ""
    if not isinstance(note, str):
        problems.append("note: must be text")
        note = ""
    elif len(note) > MAX_NOTE:
        problems.append(f"note: {len(note)} characters; the most is {MAX_NOTE}")
    elif (said := plaintext.problem(note, lines=True)) is not None:
        problems.append(f"note: {said}")
    readers = {
        "lesson": _lesson, "replay": _replay, "scenario": _scenario, "poll": _poll,
        "exercise": _exercise,
    }  # fmt: skip
    fields, found = readers[kind](raw)
    problems += found
    if problems:
        raise PlanRefused(problems)
    return Item(kind=kind, note=note.strip(), **fields)


def _lesson(raw: JsonObject) -> tuple[Fields, list[str]]:
    slug = raw.get("lesson")
    if not isinstance(slug, str) or not slug:
        return {}, ["lesson: choose a lesson of the course"]
    if lessons.lesson(slug) is None:
        return {}, [f"lesson: {slug[:40]!r} is not a lesson of the course"]
    return {"lesson": slug}, []


def _exercise(raw: JsonObject) -> tuple[Fields, list[str]]:
    slug = raw.get("exercise")
    if not isinstance(slug, str) or not slug:
        return {}, ["exercise: choose an exercise"]
    if slug not in exercises():
        return {}, [f"exercise: {slug[:40]!r} is not a built-in exercise"]
    return {"exercise": slug}, []


def _replay(raw: JsonObject) -> tuple[Fields, list[str]]:
    run_id = raw.get("run")
    if not isinstance(run_id, str) or not run_id.strip():
        return {}, ["run: give the id of a stored run (its page's address ends with it)"]
    run_id = run_id.strip()
    if not RUN_ID.match(run_id):
        return {}, [f"run: {run_id[:40]!r} is not a run id"]
    if not Run.objects.filter(pk=run_id).exists():
        return {}, [f"run: there is no run {run_id!r} here (import its export.json first)"]
    last = Run.objects.filter(pk=run_id).aggregate(last=Max("events__seq"))["last"]
    problems: list[str] = []
    bounds: dict[str, int | None] = {}
    for name in ("from", "to"):
        value = raw.get(name)
        if value in (None, ""):
            bounds[name] = None
            continue
        if isinstance(value, str) and value.strip().lstrip("#").isdigit():
            value = int(value.strip().lstrip("#"))
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(f"{name}: {str(value)[:20]!r} is not a moment (an event's #, 1 up)")
            bounds[name] = None
        elif value > (last or 0):
            problems.append(f"{name}: #{value} is past the run's last event (#{last or 0})")
            bounds[name] = None
        else:
            bounds[name] = value
    low, high = bounds["from"], bounds["to"]
    if low is not None and high is not None and low > high:
        problems.append(f"to: #{high} comes before from (#{low})")
    return {"run": run_id, "seq_from": low, "seq_to": high}, problems


def _scenario(raw: JsonObject) -> tuple[Fields, list[str]]:
    slug, scenario = raw.get("slug") or "", raw.get("scenario")
    if slug and scenario is not None:
        return {}, ["give a built-in scenario (slug) or a scenario's JSON, not both"]
    if slug:
        if not isinstance(slug, str) or not SLUG.match(slug) or slug not in builtin():
            return {}, [f"slug: {str(slug)[:40]!r} is not a built-in scenario"]
        return {"slug": slug}, []
    try:
        decoded = _decoded(scenario)
        parsed = parse(decoded)
    except PlanRefused as exc:
        return {}, exc.problems
    except ScenarioError as exc:
        return {}, [f"scenario.{problem}" for problem in exc.problems[:10]]
    return {"scenario": parsed.to_json()}, []


def _decoded(scenario: JsonValue) -> JsonValue:
    """A scenario item's JSON: given decoded (a file) or as text (the editor's box), bounded."""
    if isinstance(scenario, str) and scenario.strip():  # the editor's text box
        if len(scenario.encode()) > MAX_SCENARIO_BYTES:
            raise PlanRefused(f"scenario: larger than {MAX_SCENARIO_BYTES // 1024} KB")
        try:
            scenario = json.loads(scenario)
        except json.JSONDecodeError as exc:
            raise PlanRefused(f"scenario: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    elif scenario is None or isinstance(scenario, str):
        raise PlanRefused("scenario: choose a built-in scenario or paste a scenario's JSON")
    if len(json.dumps(scenario).encode()) > MAX_SCENARIO_BYTES:
        raise PlanRefused(f"scenario: larger than {MAX_SCENARIO_BYTES // 1024} KB")
    return scenario


def _poll(raw: JsonObject) -> tuple[Fields, list[str]]:
    problems: list[str] = []
    question = raw.get("question")
    question = question.strip() if isinstance(question, str) else ""
    if not question:
        problems.append("question: ask something")
    elif len(question) > MAX_QUESTION:
        problems.append(f"question: {len(question)} characters; the most is {MAX_QUESTION}")
    elif (said := plaintext.problem(question)) is not None:
        problems.append(f"question: {said}")
    given = raw.get("choices")  # a list, or the editor's text box: one choice a line
    lines = (
        given.splitlines() if isinstance(given, str) else given if isinstance(given, list) else []
    )
    choices = [c.strip() for c in lines if isinstance(c, str) and c.strip()]
    if not MIN_CHOICES <= len(choices) <= MAX_CHOICES or len(set(choices)) != len(choices):
        problems.append(
            f"choices: give {MIN_CHOICES} to {MAX_CHOICES} different answers to choose from "
            f"(one a line); there are {len(choices)}"
        )
    for number, choice in enumerate(choices, start=1):
        if len(choice) > MAX_CHOICE:
            problems.append(f"choice {number}: {len(choice)} characters; the most is {MAX_CHOICE}")
        elif (said := plaintext.problem(choice)) is not None:
            problems.append(f"choice {number}: {said}")
    return {"question": question, "choices": tuple(choices)}, problems


# -- kept plans ----------------------------------------------------------------------------


def items_of(plan: Plan) -> list[Item]:
    """The plan's items as it keeps them (checked when they were kept: :meth:`Item.as_data`)."""
    return [_stored(dict(raw)) for raw in plan.items]


def _stored(data: JsonObject) -> Item:
    def text(name: str) -> str:
        return str(data.get(name) or "")

    low, high = (n if isinstance(n, int) else None for n in (data.get("from"), data.get("to")))
    scenario, choices = data.get("scenario"), data.get("choices")
    return Item(text("kind"), text("note"), text("lesson"), text("run"), low, high, text("slug"),
                scenario if isinstance(scenario, dict) else None, text("question"),
                tuple(str(c) for c in choices) if isinstance(choices, list) else ())  # fmt: skip


def may_edit(plan: Plan, browser: str) -> bool:
    """Whether ``browser`` may change, delete or present ``plan``: the one place that decides.
    Today the browser that made it, as for runs and rooms; with accounts, "the account, or the
    browser" goes here."""
    return bool(plan.owner) and plan.owner == browser


def save(plan: Plan, title: str, items: list[Item]) -> Plan:
    """Keep ``plan``; a new one only while its owner keeps fewer than :data:`MAX_PLANS`."""
    if plan._state.adding and Plan.objects.filter(owner=plan.owner).count() >= MAX_PLANS:
        raise PlanRefused(f"plans: this browser keeps {MAX_PLANS} plans already; delete one")
    plan.title, plan.items = title, [item.as_data() for item in items]
    plan.save()
    return plan


def copy(plan: Plan, browser: str) -> Plan:
    """A copy of ``plan`` that ``browser`` owns (its notes too: a shared plan shares them)."""
    copied = Plan(owner=browser, copied_from=plan.pk)
    return save(copied, plan.title[:MAX_TITLE], items_of(plan))
