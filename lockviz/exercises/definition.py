"""Exercise format 1: a scenario, a goal, and what the learner may change.

An exercise is JSON (a built-in's file in ``builtin/``, a teacher's in the library, an export):

* ``kind``: ``break`` (the lock is fixed; the learner adds faults, at most ``budget.faults``,
  and with ``budget.steps: "free"`` writes the clients' steps too), ``fix`` (the schedule is
  fixed; the learner changes only what ``may_change`` names: ``storage``, ``ttl_ms``,
  ``variant``, ``renew``, ``check_lease``, ``order``, the last swapping the times of the two
  steps ``order`` names) or ``predict`` (the learner picks one of ``choices``, outcomes from
  :data:`lockviz.exercises.goals.OUTCOMES`, before the run);
* ``scenario``: the starting point, any scenario the schema accepts (lockviz.scenarios.schema);
* ``goal``: what the run's verdict must show (lockviz.exercises.goals; ``safe`` for fix);
* ``hints`` (up to three, shown on request), ``solution`` (its words, and the worked answer:
  ``steps`` for break, ``changes`` for fix, ``predict`` for predict), shown once solved or
  after ``reveal_after`` attempts that counted; ``concepts`` it practises, each by its id in
  the course's list (:class:`lockviz.teaching.concepts.Concept`: ``"LEASE"``, ``"LOST_UPDATE"``),
  so the exercises list can say which lessons teach them (lockviz.exercises.practice).

:func:`parse` checks every field and every rule across them, naming each problem by its field
(``scenario.steps[2].ms: ...``, ``order: step 7 does not exist``), as the scenario schema does.
Text from outside (a pasted or uploaded exercise, the editor's JSON boxes, an archive's entry,
a built-in's file alike) is decoded by :func:`loads` first: the one bounded decoder,
lockviz.jsontext, within :data:`MAX_BYTES`.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from lockviz import jsontext, plaintext
from lockviz.errors import ExerciseRefused, JsonRefused, ScenarioError
from lockviz.exercises.goals import OUTCOMES, Goal, Outcome
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.scenarios import schema
from lockviz.scenarios.schema import Scenario
from lockviz.teaching.concepts import Concept

Kind = Literal["break", "fix", "predict"]
Change = Literal["storage", "ttl_ms", "variant", "renew", "check_lease", "order"]
Name = Annotated[str, Field(max_length=40), AfterValidator(plaintext.printable)]
Text = Annotated[str, Field(min_length=1, max_length=1500), AfterValidator(plaintext.no_nul)]
Title = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(plaintext.printable)]
MAX_FAULTS = 10
# An exercise's JSON text: a scenario of schema.MAX_STEPS steps and a solution as long fit.
MAX_BYTES = 256 * 1024


def _concept(value: str) -> str:
    if value not in Concept.__members__:
        raise ValueError(
            f"{value[:40]!r} is not a concept of the course; name each by its id, one of "
            f"{', '.join(Concept.__members__)}"
        )
    return value


ConceptId = Annotated[str, Field(max_length=40), AfterValidator(_concept)]

# Each change a fix may make, as a refusal and the page name it.
CHANGES: dict[str, str] = {
    "storage": "the storage kind",
    "ttl_ms": "the lease (ttl_ms)",
    "variant": "the variant",
    "renew": "renewal (a watchdog extends the lease)",
    "check_lease": "check_lease (each write checks its lease first)",
    "order": "the order of two steps",
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Budget(_Strict):
    faults: int = Field(ge=0, le=MAX_FAULTS)
    steps: Literal["given", "free"] = "given"


class Changes(_Strict):
    """What a fix changes; a field left out is left as the scenario has it."""

    storage: Name | None = None
    ttl_ms: int | None = Field(default=None, ge=100, le=60_000)
    variant: Name | None = None
    renew: bool | None = None
    check_lease: bool | None = None
    order: bool | None = None  # swap the two steps the exercise's ``order`` names

    def given(self) -> dict[str, object]:
        return self.model_dump(exclude_none=True)


class Solution(_Strict):
    text: Text
    steps: list[JsonObject] | None = Field(default=None, max_length=schema.MAX_STEPS)
    changes: Changes | None = None
    predict: Outcome | None = None


class Exercise(_Strict):
    format: Literal[1]
    kind: Kind
    title: Title
    brief: Text
    scenario: JsonObject
    goal: Goal | None = None
    budget: Budget | None = None
    may_change: list[Change] = Field(default_factory=list, max_length=len(CHANGES))
    order: list[int] | None = Field(default=None, min_length=2, max_length=2)
    choices: list[Outcome] = Field(default_factory=list, max_length=len(OUTCOMES))
    hints: list[Text] = Field(default_factory=list, max_length=3)
    solution: Solution
    reveal_after: int = Field(default=3, ge=1, le=20)
    concepts: list[ConceptId] = Field(default_factory=list, max_length=8)

    def setting(self) -> Scenario:
        """The starting point, checked by the scenario schema (it was, by :func:`parse`)."""
        return schema.parse(self.scenario)

    def to_json(self) -> JsonObject:
        found: JsonObject = self.model_dump(mode="json", exclude_none=True)
        return found

    @property
    def practises(self) -> tuple[Concept, ...]:
        """The concepts it declares it practises, in the order it names them."""
        return tuple(Concept[name] for name in self.concepts)


def loads(text: str | bytes, where: str = "exercise") -> JsonValue:
    """Outside JSON text of an exercise (or of a part of one: ``where`` names it) decoded within
    bounds (lockviz.jsontext), with no NUL in it (PostgreSQL stores none); or
    :class:`ExerciseRefused` with the sentence that says why not."""
    try:
        found = jsontext.loads(text, max_bytes=MAX_BYTES, where=where)
    except JsonRefused as exc:
        raise ExerciseRefused(exc.problems) from None
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if "\\u0000" in raw or "\x00" in raw:
        raise ExerciseRefused([f"{where}: {plaintext.problem(chr(0), lines=True)}"])
    return found


def read(text: str | bytes, where: str = "exercise") -> Exercise:
    """An exercise from outside JSON text: :func:`loads`, then :func:`parse`."""
    return parse(loads(text, where))


def parse(data: object) -> Exercise:
    """A valid :class:`Exercise` from decoded JSON, or :class:`ExerciseRefused` naming each
    problem by its field."""
    if not isinstance(data, dict):
        raise ExerciseRefused(["exercise: must be a JSON object"])
    try:
        found = Exercise.model_validate(data)
    except ValidationError as exc:
        raise ExerciseRefused([schema.describe(e) for e in exc.errors()]) from None
    problems: list[str] = []
    try:
        setting = found.setting()
    except ScenarioError as exc:
        raise ExerciseRefused([f"scenario.{p}" for p in exc.problems]) from None
    problems += _rules(found, setting)
    if problems:
        raise ExerciseRefused(problems)
    return found


def _rules(ex: Exercise, setting: Scenario) -> list[str]:
    """The rules across fields: what each kind needs and may not have."""
    problems = _goal_rules(ex)
    if (ex.kind == "break") != (ex.budget is not None):
        problems.append("budget: a break exercise needs one (its faults), no other kind has one")
    problems += _change_rules(ex, setting)
    wanted = {"break": "steps", "fix": "changes", "predict": "predict"}[ex.kind]
    if getattr(ex.solution, wanted) is None:
        problems.append(f"solution.{wanted}: the worked answer of a {ex.kind} exercise")
    return problems


def _goal_rules(ex: Exercise) -> list[str]:
    if ex.kind == "predict":
        problems = []
        if ex.goal is not None:
            problems.append("goal: a prediction's goal is the learner's choice; leave it out")
        if len(set(ex.choices)) < 2:
            problems.append(f"choices: give at least two outcomes of {list(OUTCOMES)}")
        if ex.solution.predict not in ex.choices:
            problems.append("solution.predict: must be one of the choices")
        return problems
    if ex.goal is None:
        return ["goal: required (what the run must show)"]
    if (ex.kind == "fix") != (ex.goal == "safe"):
        return ['goal: a fix asks for "safe"; a break for two_holders, stale_write or lost_update']
    return []


def _change_rules(ex: Exercise, setting: Scenario) -> list[str]:
    """What a fix may change (nothing, for the other kinds), and the two steps it may swap."""
    problems = []
    if ex.kind != "fix" and ex.may_change:
        problems.append("may_change: only a fix exercise lets the learner change settings")
    if ex.kind == "fix" and not ex.may_change:
        problems.append(f"may_change: name what the learner may change, of {list(CHANGES)}")
    if ("order" in ex.may_change) != (ex.order is not None):
        problems.append('order: the two steps to swap, given exactly when may_change has "order"')
    last = len(setting.steps) - 1
    problems += [
        f"order: step {i} does not exist (0 to {last})"
        for i in ex.order or []
        if not 0 <= i <= last
    ]
    if ex.order is not None and ex.order[0] == ex.order[1]:
        problems.append("order: two different steps")
    return problems
