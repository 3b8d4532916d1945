"""A learner's answer to an exercise, as the scenario to run and the goal to judge it by.

An answer is JSON, as the attempt stores it: ``{"steps": [...]}`` for break (the learner's
rows: faults, and with ``budget.steps: "free"`` every step), ``{"changes": {...}}`` for fix
(:class:`lockviz.exercises.definition.Changes`), ``{"predict": "<outcome>"}`` for predict.
:func:`scenario_for` turns it into the scenario to run, or refuses it with
:class:`ExerciseRefused`, each problem naming what is wrong: a step by its number and verb, a
change the exercise does not allow by its name (``ttl_ms: this exercise fixes the lease
(ttl_ms) at 2000; you may change only the storage kind``), a fault past the budget.

The exercise's own solution is an answer too (:func:`solution`), and so is its starting point
(:func:`starting`): the live tests run both.
"""

from __future__ import annotations

from pydantic import ValidationError

from lockviz.errors import ExerciseRefused, ScenarioError
from lockviz.exercises.definition import CHANGES, Changes, Exercise
from lockviz.exercises.goals import OUTCOMES
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.scenarios import schema
from lockviz.scenarios.rules import MAX_RUN_MS
from lockviz.scenarios.schema import Scenario
from lockviz.scenarios.verbs import VERBS

Answer = JsonObject


def scenario_for(ex: Exercise, answer: Answer) -> tuple[Scenario, str]:
    """The scenario ``answer`` makes of ``ex``, and the goal its run is judged by."""
    if ex.kind == "break":
        steps = answer.get("steps")
        rows = [s for s in steps if isinstance(s, dict)] if isinstance(steps, list) else []
        return break_scenario(ex, rows), str(ex.goal)
    if ex.kind == "fix":
        found = answer.get("changes")
        try:
            changes = Changes.model_validate(found if isinstance(found, dict) else {})
        except ValidationError as exc:
            raise ExerciseRefused([schema.describe(e) for e in exc.errors()]) from None
        return fix_scenario(ex, changes), "safe"
    choice = str(answer.get("predict") or "")
    if choice not in ex.choices:
        raise ExerciseRefused(["predict: choose one of the outcomes before the run"])
    return _titled(ex, ex.setting()), f"predict:{choice}"


def _titled(ex: Exercise, scenario: Scenario) -> Scenario:
    """The run's title says which exercise it answers; its prediction (none) is not told."""
    title = f"Exercise: {ex.title}"[:120]
    return scenario.model_copy(
        update={"title": title, "expect": None, "description": ex.brief[:2000]}
    )


def _where(i: int, step: JsonObject) -> str:
    return f"step {i + 1} ({str(step.get('do') or '?')[:20]})"


def break_scenario(ex: Exercise, rows: list[JsonObject]) -> Scenario:
    """The setting with the learner's steps: within the budget, each step checked."""
    assert ex.budget is not None
    setting, problems = ex.setting(), []
    checked: list[JsonValue] = []
    faults = 0
    for i, row in enumerate(rows[: schema.MAX_STEPS]):
        at_ms = row.get("at_ms")
        if not isinstance(at_ms, int) or isinstance(at_ms, bool) or not 0 <= at_ms <= MAX_RUN_MS:
            problems.append(f"{_where(i, row)}: at_ms: a whole number of ms from 0 to {MAX_RUN_MS}")
            continue
        try:
            step = schema.check_step(setting, row, at_ms)
        except ScenarioError as exc:
            problems.extend(f"{_where(i, row)}: {p}" for p in exc.problems)
            continue
        if step.command and ex.budget.steps == "given":
            problems.append(
                f"{_where(i, row)}: this exercise gives the clients' steps; you add only faults "
                f"({', '.join(v for v, verb in VERBS.items() if not verb.command)})"
            )
            continue
        faults += 0 if step.command else 1
        checked.append(step.to_json())
    if faults > ex.budget.faults:
        problems.append(f"steps: {faults} faults; this exercise allows at most {ex.budget.faults}")
    if problems:
        raise ExerciseRefused(problems)
    given = [s.to_json() for s in setting.steps] if ex.budget.steps == "given" else []
    merged = sorted([*given, *checked], key=_at)  # stable: a given step first at the same ms
    return _titled(ex, _parsed({**setting.to_json(), "steps": merged}))


def _at(step: JsonValue) -> int:
    at = step.get("at_ms") if isinstance(step, dict) else 0
    return at if isinstance(at, int) else 0


def _parsed(data: JsonObject) -> Scenario:
    data.pop("fencing", None)  # "storage" says it (parse fills both)
    try:
        return schema.parse(data)
    except ScenarioError as exc:
        raise ExerciseRefused(exc.problems) from None


def current(setting: Scenario) -> dict[str, object]:
    """Each change's value in the setting as it starts."""
    writes = [s for s in setting.steps if s.do == "write"]
    return {
        "storage": setting.storage_kind,
        "ttl_ms": setting.ttl_ms,
        "variant": setting.variant or setting.lock_service.default_variant,
        "renew": setting.renew,
        "check_lease": bool(writes) and all(s.check_lease for s in writes),
        "order": False,
    }


def fix_scenario(ex: Exercise, changes: Changes) -> Scenario:
    """The setting with ``changes``, or a refusal naming each change it does not allow."""
    setting = ex.setting()
    now, allowed = current(setting), ", ".join(CHANGES[c] for c in ex.may_change)
    wanted = {k: v for k, v in changes.given().items() if v != now[k]}
    refused = [
        f"{k}: this exercise fixes {CHANGES[k]} at {now[k]!r}; you may change only {allowed}"
        for k in wanted
        if k not in ex.may_change
    ]
    if refused:
        raise ExerciseRefused(refused)
    data = setting.to_json()
    for key in ("storage", "ttl_ms", "variant", "renew"):
        if key in wanted:
            data[key] = wanted[key]  # type: ignore[assignment]
    steps = [s.to_json() for s in setting.steps]
    if "check_lease" in wanted:
        for step in steps:
            if step.get("do") == "write":
                step.pop("check_lease", None)
                if wanted["check_lease"]:
                    step["check_lease"] = True
    if wanted.get("order") and ex.order is not None:
        a, b = ex.order
        steps[a]["at_ms"], steps[b]["at_ms"] = steps[b]["at_ms"], steps[a]["at_ms"]
    data["steps"] = [*sorted(steps, key=_at)]
    return _titled(ex, _parsed(data))


def solution(ex: Exercise) -> Answer:
    """The exercise's worked answer."""
    if ex.kind == "break":
        return {"steps": list(ex.solution.steps or [])}
    if ex.kind == "fix":
        assert ex.solution.changes is not None
        found: JsonObject = ex.solution.changes.model_dump(mode="json", exclude_none=True)
        return {"changes": found}
    return {"predict": ex.solution.predict}


def starting(ex: Exercise) -> Answer:
    """The answer a learner starts from: no faults added (the clients' steps as given), no
    change, or the first choice that is not the solution's."""
    if ex.kind == "break":
        steps = (
            [s.to_json() for s in ex.setting().steps]
            if ex.budget and ex.budget.steps == "free"
            else []
        )
        return {"steps": list(steps)}
    if ex.kind == "fix":
        return {"changes": {}}
    return {"predict": next(c for c in ex.choices if c != ex.solution.predict)}


def outcome_words(choice: str) -> str:
    return OUTCOMES.get(choice, choice)
