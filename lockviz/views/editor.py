"""New scenario: the editor page, its check as the learner types, and its JSON file.

``GET /scenarios/new/`` opens the editor, blank, or filled in from a link (``?s=<code>``,
lockviz.teaching.editor), a built-in (``?from=<slug>``) or the steps a run took (``?run=<id>``:
a free-play session's clicks become rows). ``POST /scenarios/new/check`` is the
check the page makes as the learner types (htmx, debounced): the problems by row, or the valid
scenario with its Run button, its link and its file; without htmx it returns the whole page.
``POST /scenarios/new/export.json`` (the valid scenario's JSON as ``scenario``) is the scenario
as a file to download. Running it live is the
import page's Run (``POST /import/run/`` with the scenario's JSON), as for any scenario.

"Save to my library" is the library's (``POST /library/scenarios/``, lockviz.views.library),
offered with a valid scenario to a teacher who is logged in; anyone else is offered the log-in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from lockviz import accounts
from lockviz.catalogue import BACKENDS, OPTIONS, STORAGE_KINDS
from lockviz.errors import ImportRefused, ScenarioError
from lockviz.jsontypes import JsonValue
from lockviz.library import access
from lockviz.models import Run
from lockviz.runs import imports
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import parse
from lockviz.scenarios.verbs import VERBS
from lockviz.teaching import editor, reveals, steprows
from lockviz.teaching import play as free_play
from lockviz.views import HtmxHttpRequest, withheld
from lockviz.views.pagedata import page_data

MAX_BODY = 64 * 1024  # a check's form: 60 rows of short fields fit many times over


@require_GET
def new_scenario(request: HtmxHttpRequest) -> HttpResponse:
    code, slug = str(request.GET.get("s") or ""), str(request.GET.get("from") or "")[:80]
    run_id = str(request.GET.get("run") or "")[:40]
    if not code and not slug and not run_id:
        return _page(request, editor.blank())
    try:
        data = _opened(request, code, slug, run_id)
    except ScenarioError as exc:
        return _page(request, editor.blank(), refused=exc.problems, status=400)
    form, left_out = editor.form_of(data)
    draft = editor.from_form(form)
    return _page(request, draft, left_out=left_out)


def _opened(request: HtmxHttpRequest, code: str, slug: str, run_id: str) -> Mapping[str, JsonValue]:
    """The scenario to fill the editor with: a built-in's, a run's steps as it took them (a
    free-play session's clicks; what the browser may not read yet left out, as its
    scenario.json does), or a link's."""
    if slug:
        if slug not in builtin():
            raise ScenarioError([f"from: there is no built-in scenario {slug!r}"])
        return builtin()[slug].to_json()
    if run_id:
        run = Run.objects.filter(pk=run_id[:16]).first()
        if run is None or not access.may_see(accounts.viewer(request), run):  # private: as none
            raise ScenarioError([f"run: there is no run {run_id!r}"])
        return reveals.scenario(free_play.scenario_from_run(run), withheld(request, run))
    return editor.decode(code)


@require_POST
def check(request: HtmxHttpRequest) -> HttpResponse:
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY:
        problem = f"form: more than {MAX_BODY // 1024} KB; a scenario the editor holds is far less"
        return _result(request, editor.blank(), status=413, refused=[problem])
    draft = editor.from_form(request.POST)
    if request.htmx:
        return _result(request, draft)
    if request.POST.get("add") and len(draft.rows) < editor.MAX_ROWS:
        draft.rows.append(steprows.blank())  # without the page's script: a row more, by post
    return _page(request, draft, checked=True, status=200 if draft.scenario else 400)


@require_POST
def export(request: HtmxHttpRequest) -> HttpResponse:
    """The valid scenario the page holds (its JSON as ``scenario``), as a file to download."""
    if int(request.META.get("CONTENT_LENGTH") or 0) > MAX_BODY:
        return JsonResponse(
            {"problems": [f"scenario: more than {MAX_BODY // 1024} KB"]}, status=413
        )
    try:
        scenario = parse(imports.decode(str(request.POST.get("scenario") or ""), "scenario"))
    except (ImportRefused, ScenarioError) as exc:
        return JsonResponse({"problems": exc.problems}, status=400)
    response = HttpResponse(
        json.dumps(editor.compact(scenario), indent=1, ensure_ascii=False) + "\n",
        content_type="application/json",
    )
    response["Content-Disposition"] = 'attachment; filename="lockviz-scenario.json"'
    return response


def _context(draft: editor.Draft, refused: list[str] | None = None) -> dict[str, object]:
    found = draft.compact()
    code = editor.encode(found) if found is not None else ""
    return {
        "draft": draft,
        "refused": refused or [],
        "scenario_json": json.dumps(found) if found is not None else "",
        "code": code,
        "too_long": len(code) > editor.MAX_LINK,
        "max_link": editor.MAX_LINK,
        "row_slots": [draft.row_problems.get(i, []) for i in range(len(draft.rows))],
        "actors": draft.actors,
    }


def _result(
    request: HtmxHttpRequest,
    draft: editor.Draft,
    status: int = 200,
    refused: list[str] | None = None,
) -> HttpResponse:
    """The check's answer for the page's script: the result, and each row's own problems."""
    context = _context(draft, refused) | {"oob": True}
    return render(request, "lockviz/_editor_result.html", context, status=status)


def _page(
    request: HtmxHttpRequest,
    draft: editor.Draft,
    *,
    refused: list[str] | None = None,
    left_out: list[str] | None = None,
    checked: bool = True,
    status: int = 200,
) -> HttpResponse:
    shown = bool(draft.problems or draft.scenario) and checked
    context = _context(draft, refused) | {
        "shown": shown,
        "left_out": left_out or [],
        "rows": [
            {"row": row, "problems": draft.row_problems.get(i, [])}
            for i, row in enumerate(draft.rows)
        ],
        "verbs": list(VERBS),
        "backends": [
            {
                "service": service,
                "variant": draft.settings[f"variant_{name}"],
                "count": draft.settings[f"count_{name}"],
                "options": [o for o in OPTIONS if name in OPTIONS[o]],
            }
            for name, service in BACKENDS.items()
        ],
        "storage_kinds": list(STORAGE_KINDS.values()),
        "blank": steprows.blank(),
        "max_rows": editor.MAX_ROWS,
        "page": page_data(request, verbs=steprows.verb_fields()),
    }
    return render(request, "lockviz/editor.html", context, status=status)
