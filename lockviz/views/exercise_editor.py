"""A teacher's own exercise: written in the editor, kept in their library, shared and exported.

``GET /exercises/new/`` opens the editor, filled in from a scenario (``?s=<code>``, the New
scenario editor's link: "Make it an exercise"; ``?from=<slug>``, a built-in scenario), from an
exercise (``?exercise=<slug>``, a built-in to start from) or blank. ``POST`` checks the form as
exercise format 1 (lockviz.exercises.definition: every problem named by its field) and keeps
it in the teacher's library (:class:`lockviz.models.SavedExercise`), with a visibility as a
saved scenario has: private (the teacher and the class they present), unlisted or public. Its
page is ``/exercises/saved/<id>/``, its file ``.../exercise.json``; an exported file pasted
into the editor's JSON box comes back as it was. Only a logged-in teacher keeps exercises.
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from lockviz.errors import ExerciseRefused, Invalid, ScenarioError
from lockviz.exercises.builtin import builtin as exercises
from lockviz.exercises.definition import CHANGES, loads, parse
from lockviz.exercises.goals import GOALS, OUTCOMES
from lockviz.exercises.library import find
from lockviz.exercises.practice import homes
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.library import saving
from lockviz.models import Visibility
from lockviz.scenarios.library import builtin as scenarios
from lockviz.teaching import editor
from lockviz.views import HtmxHttpRequest

MAX_BODY = 96 * 1024


@login_required
@require_http_methods(["GET", "POST"])
def new(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        return _page(request, _start(request))
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY:
        return _page(request, {}, [f"form: more than {MAX_BODY // 1024} KB"], status=413)
    data, problems = _from_form(request)
    if not problems:
        try:
            ex = parse(data)
            shown = saving.visibility(request.POST.get("visibility") or Visibility.PRIVATE)
        except (ExerciseRefused, Invalid) as exc:
            problems = exc.problems
        else:
            saved = saving.save_exercise(_teacher(request), ex, shown)
            return redirect("saved_exercise", saved_id=saved.pk)
    return _page(request, data, problems, status=400)


@require_GET
def export(request: HtmxHttpRequest, saved_id: str) -> HttpResponse:
    """A saved exercise as a file (for whoever may open it: lockviz.library.access)."""
    ex = find(request, f"saved:{saved_id[:16]}")
    response = HttpResponse(
        json.dumps(ex.to_json(), indent=1, ensure_ascii=False) + "\n",
        content_type="application/json",
    )
    response["Content-Disposition"] = 'attachment; filename="lockviz-exercise.json"'
    return response


def _teacher(request: HtmxHttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # login_required let only a teacher through
    return user


def _start(request: HtmxHttpRequest) -> JsonObject:
    """What the editor opens with: an exercise, a scenario to build one on, or a blank one."""
    slug = str(request.GET.get("exercise") or "")[:80]
    if slug in exercises():
        return exercises()[slug].to_json()
    scenario: JsonValue = None
    code, start = str(request.GET.get("s") or ""), str(request.GET.get("from") or "")[:80]
    if start in scenarios():
        scenario = scenarios()[start].to_json()
    elif code:
        try:
            scenario = editor.decode(code)
        except ScenarioError:
            scenario = None
    blank: JsonObject = {
        "format": 1,
        "kind": "break",
        "title": "",
        "brief": "",
        "goal": "two_holders",
    }
    if isinstance(scenario, dict):
        blank["scenario"] = {k: v for k, v in scenario.items() if k not in ("expect",)}
        blank["title"] = str(scenario.get("title") or "")[:120]
    return blank


def _from_form(request: HtmxHttpRequest) -> tuple[JsonObject, list[str]]:
    """The editor's form as exercise JSON, or the JSON pasted whole ("exercise")."""
    post = request.POST
    pasted = str(post.get("exercise") or "").strip()
    if pasted:
        try:
            found = loads(pasted, "exercise")
        except ExerciseRefused as exc:
            return {}, exc.problems
        return (found, []) if isinstance(found, dict) else ({}, ["exercise: a JSON object"])
    data: JsonObject = {"format": 1, "kind": str(post.get("kind") or "")}
    for name in ("title", "brief"):
        data[name] = str(post.get(name) or "").strip()
    problems = _json_fields(post, data)
    data.update(_kind_fields(post, str(data["kind"])))
    data["hints"] = [h for i in range(3) if (h := str(post.get(f"hint_{i}") or "").strip())]
    data["concepts"] = [c.name for c in homes() if post.get(f"concept_{c.name}")]
    data["reveal_after"] = _whole(post.get("reveal_after"), 3)
    return data, problems


def _json_fields(post: QueryDict, data: JsonObject) -> list[str]:
    """The scenario and the solution's answer, each JSON in a text box: into ``data``."""
    solution: JsonObject = {"text": str(post.get("solution_text") or "").strip()}
    data["solution"], data["scenario"] = solution, {}
    problems: list[str] = []
    for name, field in (("scenario", "scenario"), ("solution_answer", "answer")):
        raw = str(post.get(name) or "").strip()
        try:
            value = loads(raw, field) if raw else None
        except ExerciseRefused as exc:
            problems += exc.problems
            continue
        if name == "scenario" and value is not None:
            data["scenario"] = value
        elif name != "scenario" and isinstance(value, dict):
            solution.update(value)
    return problems


def _kind_fields(post: QueryDict, kind: str) -> JsonObject:
    """What the exercise's kind takes: a goal and a budget, what may change, the outcomes."""
    found: JsonObject = {}
    if kind in ("break", "fix") and post.get("goal"):
        found["goal"] = "safe" if kind == "fix" else str(post.get("goal"))[:20]
    if kind == "break":
        steps = str(post.get("steps") or "given")[:8]
        found["budget"] = {"faults": _whole(post.get("faults"), 1), "steps": steps}
    if kind == "fix":
        changes: list[JsonValue] = [c for c in CHANGES if post.get(f"may_{c}")]
        found["may_change"] = changes
        if "order" in changes:  # the form numbers steps from 1
            found["order"] = [_whole(post.get(f"order_{k}"), 0) - 1 for k in ("a", "b")]
    if kind == "predict":
        found["choices"] = [o for o in OUTCOMES if post.get(f"choice_{o}")]
    return found


def _whole(value: object, default: int) -> int:
    text = str(value or "").strip()[:6]
    return int(text) if text.lstrip("-").isdigit() else default


def _page(
    request: HtmxHttpRequest, data: JsonObject, problems: list[str] | None = None, status: int = 200
) -> HttpResponse:
    solution = data.get("solution") if isinstance(data.get("solution"), dict) else {}
    assert isinstance(solution, dict)
    answer = {k: v for k, v in solution.items() if k != "text"}
    scenario = data.get("scenario")
    context = {
        "data": data,
        "problems": problems or [],
        "scenario_json": json.dumps(scenario, indent=1, ensure_ascii=False) if scenario else "",
        "answer_json": json.dumps(answer, ensure_ascii=False) if answer else "",
        "solution_text": solution.get("text", ""),
        "goals": [(k, v) for k, v in GOALS.items() if k != "safe"],
        "changes": list(CHANGES.items()),
        "outcomes": list(OUTCOMES.items()),
        "concepts": [(c.name, c.value, n) for c, n in sorted(homes().items(), key=lambda h: h[1])],
        "visibilities": Visibility.choices,
        "hints": [*(hints if isinstance(hints := data.get("hints"), list) else []), "", "", ""][:3],
    }
    return render(request, "lockviz/exercise_edit.html", context, status=status)
