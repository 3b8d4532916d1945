"""Replaying a stored run in the browser, and exporting it as a Mermaid sequence diagram."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from lockviz import narrator
from lockviz.catalogue import BACKENDS
from lockviz.models import Run
from lockviz.narrator.words import number
from lockviz.runs import exports
from lockviz.views import HtmxHttpRequest
from lockviz.views.pagedata import page_data


@require_GET
def replay(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    events = run.said_after(0)
    page = page_data(request, run=run, scenario=run.scenario, nodes=_nodes(run), events=events)
    context = {"run": run, "scenario": run.scenario, "page": page, "story": _story(run, events)}
    return render(request, "lockviz/replay.html", context)


def _story(run: Run, events: list[dict[str, object]]) -> list[dict[str, object]]:
    """Every step of the script, numbered once, with the seq of the moment it was taken (None
    for a step the run never reached)."""
    taken = {e.get("index"): e for e in events if e["kind"] == "step"}
    steps = run.scenario.get("steps") if isinstance(run.scenario.get("steps"), list) else []
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
    response = HttpResponse(
        exports.mermaid(run.as_export()), content_type="text/plain; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="lockviz-run-{run.pk}.mmd"'
    return response
