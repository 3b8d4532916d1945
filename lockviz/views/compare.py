"""Side by side: the comparison form, starting one live run per variant, and the lanes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from lockviz.models import Run
from lockviz.runs import recorder
from lockviz.runs.recorder import Refused
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, ScenarioError, parse
from lockviz.teaching.compare import SAME, CompareForm, describe, read_run_ids
from lockviz.views import HtmxHttpRequest, browser, busy

DEFAULT_SCENARIO = "gc-pause-fenced"


@require_http_methods(["GET", "POST"])
def compare(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _start(request)
    context: dict[str, Any] = {"form": _blank_form(request.GET.get("scenario", ""))}
    if "runs" in request.GET:
        ids, problems = read_run_ids(request.GET["runs"])
        found = {run.pk: run for run in Run.objects.filter(pk__in=ids)}
        problems += [f"There is no run {run_id!r}." for run_id in ids if run_id not in found]
        lanes = [_lane(found[run_id]) for run_id in ids if run_id in found]
        context.update(problems=problems, lanes=lanes, data=[lane.data() for lane in lanes])
        status = 200 if lanes or not problems else 404
        return render(request, "lockviz/compare.html", context, status=status)
    return render(request, "lockviz/compare.html", context)


@require_GET
def lane_verdict(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    lane = _lane(get_object_or_404(Run, pk=run_id))
    return render(request, "lockviz/_compare_verdict.html", {"lane": lane})


def _start(request: HtmxHttpRequest) -> HttpResponse:
    form = CompareForm(request.POST)
    if not form.is_valid():
        template = "lockviz/_compare_form.html" if request.htmx else "lockviz/compare.html"
        return render(request, template, {"form": form}, status=200 if request.htmx else 400)
    slug = form.cleaned_data["slug"]
    owner = browser(request)
    base = builtin()[slug]
    told = [_told(scenario, base) for scenario in form.variants]
    try:
        started = [run.pk for run in recorder.launch_many(told, slug, owner)]
    except Refused as refused:
        return busy(request, refused)
    url = f"{reverse('compare')}?runs={','.join(started)}"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _told(scenario: Scenario, base: Scenario) -> Scenario:
    """The variant with the scenario's narration only if it plays the scenario as written: the
    words were written for that lock service and that storage ("Alice asks Redis…", "her write
    is rejected"), so another variant's lane tells its steps by their clicks instead."""
    if (scenario.backend, scenario.fencing) == (base.backend, base.fencing):
        return scenario
    data = scenario.to_json()
    data["steps"] = [
        {k: v for k, v in step.items() if k not in ("say", "ask")} for step in data["steps"]
    ]
    data.pop("description", None)
    data.pop("takeaway", None)
    return parse(data)


def _blank_form(slug: str) -> CompareForm:
    slug = slug if slug in builtin() else DEFAULT_SCENARIO
    if slug not in builtin():
        slug = next(iter(builtin()), "")
    initial = {"scenario": slug, "backend_1": SAME, "fencing_1": "on"}
    initial.update({"backend_2": SAME, "fencing_2": "off"})
    return CompareForm(initial=initial)


@dataclass(frozen=True)
class Lane:
    run: Run
    label: str
    headline: str
    tone: str
    clients: list[str]
    nodes: list[str]
    duration_ms: int

    def data(self) -> dict[str, Any]:
        """What compare.js needs to draw and stream this lane."""
        return {
            "run": self.run.pk,
            "status": self.run.status,
            "clients": self.clients,
            "nodes": self.nodes,
            "duration_ms": self.duration_ms,
            "ws": f"/ws/runs/{self.run.pk}/",
        }


def _lane(run: Run) -> Lane:
    text, tone = run.headline
    try:
        s = parse(run.scenario)
    except ScenarioError:  # stored under an older schema: still shown, laid out from its events
        return Lane(run, run.title, text, tone, [], [], 0)
    return Lane(run, describe(s), text, tone, s.clients, s.nodes, s.duration_ms)
