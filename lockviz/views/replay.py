"""Replaying a stored run in the browser, and exporting it as a Mermaid sequence diagram."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from lockviz.models import Run
from lockviz.runs import exports
from lockviz.views import HtmxHttpRequest


@require_GET
def replay(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    events = run.said_after(0)
    data = {"run": run.pk, "scenario": run.scenario, "events": events}
    story = [
        {"seq": e["seq"], "t_s": e["t_ms"] / 1000, "say": e["say"]}
        for e in events
        if e["kind"] == "step" and e.get("say")
    ]
    context = {"run": run, "scenario": run.scenario, "data": data, "story": story}
    return render(request, "lockviz/replay.html", context)


@require_GET
def export_mermaid(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    response = HttpResponse(
        exports.mermaid(run.as_export()), content_type="text/plain; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="lockviz-run-{run.pk}.mmd"'
    return response
