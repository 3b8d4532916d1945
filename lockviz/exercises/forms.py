"""An exercise's answer as a form: the rows a break adds, the knobs a fix turns, a prediction.

Break: the learner's steps are rows of the shared step row editor (lockviz.teaching.steprows),
read back with its :func:`~lockviz.teaching.steprows.step_of`; with the clients' steps given,
only faults are offered. Fix: every knob is on the form, each with the value the setting has
and the ones the catalogue offers (storage kinds, the lock service's variants: lockviz.catalogue,
so a new kind or variant is offered as soon as it is declared); which of them the learner may
turn is said beside each, and the server refuses, by name, a turned knob the exercise does not
allow (lockviz.exercises.answers). Predict: one of the exercise's outcomes.
"""

from __future__ import annotations

from dataclasses import dataclass

from lockviz.catalogue import STORAGE_KINDS
from lockviz.errors import ExerciseRefused, ScenarioError
from lockviz.exercises import answers
from lockviz.exercises.answers import Answer
from lockviz.exercises.definition import CHANGES, Exercise
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.narrator import click
from lockviz.scenarios.verbs import VERBS
from lockviz.teaching import steprows
from lockviz.teaching.play import Posted
from lockviz.teaching.steprows import Row

MAX_ROWS = 30  # a break's rows: faults, or a short schedule


@dataclass(frozen=True)
class Knob:
    """One thing a fix could change, as its form shows it."""

    name: str  # the Changes field
    label: str
    kind: str  # "choice", "number" or "check"
    value: str | bool
    allowed: bool
    options: tuple[tuple[str, str], ...] = ()  # a choice's (value, label)


def knobs(ex: Exercise, answer: Answer | None = None) -> list[Knob]:
    """Every knob of a fix, set as ``answer`` (the learner's last) or the setting has it."""
    setting = ex.setting()
    now = answers.current(setting)
    given = answer.get("changes") if answer else None
    chosen = given if isinstance(given, dict) else {}

    def value(name: str) -> str | bool:
        found = chosen.get(name, now[name])
        return found if isinstance(found, bool) else str(found)

    found = [
        Knob("storage", "The storage checks", "choice", value("storage"),
             "storage" in ex.may_change, tuple((k.name, k.label) for k in STORAGE_KINDS.values())),
        Knob("variant", f"{setting.lock_service.label}'s variant", "choice", value("variant"),
             "variant" in ex.may_change,
             tuple((v.name, v.label) for v in setting.lock_service.variants)),
        Knob("ttl_ms", "Lease (ttl_ms)", "number", value("ttl_ms"), "ttl_ms" in ex.may_change),
        Knob("renew", "A watchdog renews the lease", "check", value("renew"),
             "renew" in ex.may_change),
        Knob("check_lease", "Each write first checks its lease (check_lease)", "check",
             value("check_lease"), "check_lease" in ex.may_change),
    ]  # fmt: skip
    if ex.order is not None:
        a, b = (setting.steps[i] for i in ex.order)
        label = f"Swap the times of “{click(a.to_json())}” and “{click(b.to_json())}”"
        found.append(Knob("order", label, "check", value("order"), "order" in ex.may_change))
    return found


def allowed_words(ex: Exercise) -> str:
    return ", ".join(CHANGES[c] for c in ex.may_change)


def changes_of(form: Posted, ex: Exercise) -> Answer:
    """A fix's form as an answer: every knob as posted (a tick box not posted is unticked, as a
    browser sends it; a field not posted at all is left as the setting has it)."""
    changes: JsonObject = {}
    for knob in knobs(ex):
        raw = form.get(knob.name)
        if knob.kind == "check":
            changes[knob.name] = bool(raw)
        elif raw is None:
            continue
        elif knob.kind == "number":
            text = str(raw or "").strip()[:12]
            try:
                changes[knob.name] = int(text)
            except ValueError:
                raise ExerciseRefused(
                    [f"{knob.name}: {text[:12]!r} is not a whole number of milliseconds"]
                ) from None
        else:
            changes[knob.name] = str(raw)[:40]
    return {"changes": changes}


def verbs_of(ex: Exercise) -> list[str]:
    """The verbs a break's rows offer: faults only while the clients' steps are given."""
    given = ex.budget is not None and ex.budget.steps == "given"
    return [name for name, verb in VERBS.items() if not (given and verb.command)]


def rows_of(ex: Exercise, answer: Answer | None = None) -> list[Row]:
    """A break's rows: the learner's last steps, or the starting point's (at least one row)."""
    steps = (answer or answers.starting(ex)).get("steps")
    found = (
        [steprows.row_of(s) for s in steps if isinstance(s, dict)]
        if isinstance(steps, list)
        else []
    )
    return found or [steprows.blank()]


def steps_of(form: Posted, ex: Exercise) -> Answer:
    """A break's posted rows as an answer (a blank row is skipped), or each row's problem."""
    setting = ex.setting()
    try:
        count = min(int(str(form.get("rows") or 0)[:4]), MAX_ROWS)
    except ValueError:
        count = 0
    steps: list[JsonValue] = []
    problems: list[str] = []
    for i in range(max(count, 0)):
        if not steprows.filled(form, i):
            continue
        try:
            steps.append(
                steprows.step_of(form, i, setting.clients, setting.servers, "this exercise")
            )
        except ScenarioError as exc:
            verb = str(form.get(f"do_{i}") or "")[:20]
            problems.extend(f"step {i + 1} ({verb}): {p}" for p in exc.problems)
    if problems:
        raise ExerciseRefused(problems)
    return {"steps": steps}


def posted_rows(form: Posted) -> list[Row]:
    """The rows as posted, so a refused answer comes back as the learner left it."""
    try:
        count = min(int(str(form.get("rows") or 0)[:4]), MAX_ROWS)
    except ValueError:
        count = 0
    return [steprows.posted(form, i) for i in range(max(count, 0))] or [steprows.blank()]
