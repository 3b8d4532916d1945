"""Replaying a stored run in the browser, and exporting it as a Mermaid sequence diagram."""

from __future__ import annotations

import re

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from lockviz import narrator
from lockviz.catalogue import BACKENDS
from lockviz.models import Run
from lockviz.narrator.words import number
from lockviz.runs import exports
from lockviz.teaching import reveals
from lockviz.views import HtmxHttpRequest, ask_first, withheld
from lockviz.views.pagedata import page_data

ROOM_CODE = re.compile(r"^[A-Za-z0-9]{3,8}$")


@require_GET
def replay(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    hidden = withheld(request, run)
    if ask_first(request, run, hidden):
        return ask_for_outcome(request, run, hidden, "replay")
    scenario = reveals.scenario(run.scenario, hidden)
    events = reveals.told(run, hidden)
    page = page_data(request, run=run, scenario=scenario, nodes=_nodes(run), events=events)
    story = _story(run, scenario, events)
    context = {"run": run, "scenario": scenario, "page": page, "story": story}
    return render(request, "lockviz/replay.html", context)


def ask_for_outcome(
    request: HtmxHttpRequest, run: Run, hidden: frozenset[int], what: str
) -> HttpResponse:
    """A lesson's run before the reveal: the page says it shows the outcome and asks first."""
    query = request.GET.copy()
    query[reveals.OUTCOME] = "shown"
    code = str(request.GET.get("room", ""))
    rejoin = reverse("follow_room", args=[code.upper()]) if ROOM_CODE.match(code) else ""
    context = {"run": run, "withheld": sorted(hidden), "what": what, "rejoin": rejoin,
               "shown_query": query.urlencode()}  # fmt: skip
    return render(request, "lockviz/outcome.html", context)


def _story(
    run: Run, scenario: dict[str, object], events: list[dict[str, object]]
) -> list[dict[str, object]]:
    """Every step of the script, numbered once, with the seq of the moment it was taken (None
    for a step the run never reached)."""
    taken = {e.get("index"): e for e in events if e["kind"] == "step"}
    found = scenario.get("steps")
    steps = found if isinstance(found, list) else []
    told = narrator.story(s for s in steps if isinstance(s, dict))
    for item in told:
        event = taken.get(item["index"])
        item["seq"] = event["seq"] if event else None
        item["t_s"] = number(event["t_ms"]) / 1000 if event else item["t_s"]
    return told


def _nodes(run: Run) -> list[str]:
    """The lock servers' lifelines, known before the first event (a replay draws them all)."""
    service = BACKENDS.get(str(run.scenario.get("backend")))
    if service is None:
        return []
    field = service.node_count_field
    count = run.scenario.get(field) if field else None
    return service.nodes(count if isinstance(count, int) else None)


@require_GET
def export_mermaid(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    exported = reveals.export(run, withheld(request, run))
    response = HttpResponse(exports.mermaid(exported), content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="lockviz-run-{run.pk}.mmd"'
    return response
