"""Side by side: the comparison form, starting one live run per variant, and the lanes."""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from lockviz import accounts, narrator
from lockviz.catalogue import STORAGE_KINDS
from lockviz.errors import NotAdmitted, ScenarioError
from lockviz.library import access
from lockviz.models import Run
from lockviz.routing import run_stream
from lockviz.runs import launcher
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Scenario, parse
from lockviz.shares import address_of
from lockviz.teaching import rooms
from lockviz.teaching.compare import MAX_LANES, SAME, CompareForm, describe, read_run_ids
from lockviz.views import HtmxHttpRequest, browser
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import respond

DEFAULT_SCENARIO = "gc-pause-fenced"


@require_http_methods(["GET", "POST"])
def compare(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _start(request)
    kinds = request.GET.get("lanes", "")
    context: dict[str, object] = {"form": _blank_form(request.GET.get("scenario", ""), kinds)}
    if "runs" in request.GET:
        ids, problems = read_run_ids(request.GET["runs"])
        viewer = accounts.viewer(request)  # a private saved run is as if there were none
        found = {r.pk: r for r in Run.objects.filter(pk__in=ids) if access.may_see(viewer, r)}
        problems += [f"There is no run {run_id!r}." for run_id in ids if run_id not in found]
        lanes = [_lane(found[run_id]) for run_id in ids if run_id in found]
        lanes = _forks_beside_originals(lanes, browser(request))
        context.update(
            problems=problems,
            lanes=lanes,
            parts=next((str(lane.marks[0]["label"]) for lane in lanes if lane.marks), ""),
            page=page_data(request, lanes=[lane.data() for lane in lanes]),
        )
        context["form"] = _again(lanes) or context["form"]
        status = 200 if lanes or not problems else 404
        return render(request, "lockviz/compare.html", context, status=status)
    return render(request, "lockviz/compare.html", context)


@require_GET
def lane_verdict(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    lane = _lane(access.run_or_404(request, run_id))
    return render(request, "lockviz/_compare_verdict.html", {"lane": lane})


def _start(request: HtmxHttpRequest) -> HttpResponse:
    form = CompareForm(request.POST)
    if not form.is_valid():
        template = "lockviz/_compare_form.html" if request.htmx else "lockviz/compare.html"
        return render(request, template, {"form": form}, status=200 if request.htmx else 400)
    slug = form.cleaned_data["slug"]
    owner = browser(request)
    try:
        slugs = [lane_slug or slug for lane_slug in form.slugs]
        told = [
            _told(scenario, builtin()[s]) for scenario, s in zip(form.variants, slugs, strict=True)
        ]
        started = [
            run.pk for run in launcher.launch_many(told, slugs, owner, address=address_of(request))
        ]
    except NotAdmitted as refused:
        return respond(request, refused)
    url = f"{reverse('compare')}?runs={','.join(started)}"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _told(scenario: Scenario, base: Scenario) -> Scenario:
    """The variant with the scenario's narration only if it plays the scenario as written: the
    words were written for that lock service and that storage ("Alice asks Redis…", "her write
    is rejected"), so another variant's lane tells its steps by their clicks instead."""
    if (scenario.backend, scenario.storage_kind) == (base.backend, base.storage_kind):
        return scenario
    data = scenario.to_json()
    data["steps"] = [
        {k: v for k, v in step.to_json().items() if k not in ("say", "ask")}
        for step in scenario.steps
    ]
    data.pop("description", None)
    data.pop("takeaway", None)
    return parse(data)


def _blank_form(slug: str, lanes: str = "") -> CompareForm:
    """The form for ``slug``, its rows as written with the storage kinds ``lanes`` names
    ("fenced,plain,sequencer,cas"; by default fenced against plain)."""
    slug = slug if slug in builtin() else DEFAULT_SCENARIO
    if slug not in builtin():
        slug = next(iter(builtin()), "")
    kinds = [k for k in lanes.split(",") if k in STORAGE_KINDS][:MAX_LANES] or ["fenced", "plain"]
    initial: dict[str, str] = {"scenario": slug}
    for n, kind in enumerate(kinds, start=1):
        initial.update({f"backend_{n}": SAME, f"storage_{n}": kind})
    return CompareForm(initial=initial)


def _again(lanes: list[Lane]) -> CompareForm | None:
    """The form as these lanes were asked for (their scenario, lock services and storage), to
    run them again or change one; None when no lane is a built-in's."""
    slug = next((lane.run.slug for lane in lanes if lane.run.slug in builtin()), "")
    if not slug:
        return None
    base = builtin()[slug]
    initial: dict[str, str] = {"scenario": slug}
    for n, lane in enumerate(lanes[:MAX_LANES], start=1):
        backend = str(lane.run.scenario.get("backend", base.backend))
        initial[f"backend_{n}"] = SAME if backend == base.backend else backend
        initial[f"storage_{n}"] = lane.run.storage_kind
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
    marks: tuple[dict[str, object], ...] = ()  # moments drawn across the lane (where a fork parts)
    costs: str = ""  # what its kind of storage costs, when the catalogue says
    share_room: str = ""  # a room whose presenter this browser may share this fork with

    def data(self) -> dict[str, object]:
        """What pages/compare.js needs to draw and stream this lane."""
        return {
            "run": self.run.pk,
            "status": self.run.status,
            "clients": self.clients,
            "nodes": self.nodes,
            "duration_ms": self.duration_ms,
            "ws": run_stream(self.run.pk),
            "marks": list(self.marks),
        }


def _forks_beside_originals(lanes: list[Lane], viewer: str) -> list[Lane]:
    """A fork shown with its original: both lanes marked where it parts, the fork labelled as
    one (and shareable with the presenter when it is this browser's and it follows a room)."""
    shown = {lane.run.pk for lane in lanes}
    marks: dict[str, list[dict[str, object]]] = {}
    for lane in lanes:
        fork = lane.run
        if fork.parent_id in shown and fork.diverged_ms is not None:
            mark = {"t_ms": fork.diverged_ms, "label": narrator.divergence(fork.diverged_ms)}
            for run_id in (fork.parent_id, fork.pk):
                marks.setdefault(str(run_id), []).append(mark)
    room = rooms.followed_by(viewer)
    changed = []
    for lane in lanes:
        run, label = lane.run, lane.label
        if run.diverged_ms is not None:
            label = f"{narrator.fork_label(run.diverged_ms)} · {label}"
        mine = run.parent_id is not None and run.owner == viewer
        share = room.code if room is not None and mine and run.shared_with != room.code else ""
        changed.append(
            replace(lane, label=label, marks=tuple(marks.get(run.pk, [])), share_room=share)
        )
    return changed


def _lane(run: Run) -> Lane:
    text, tone = run.headline
    try:
        s = run.parsed_scenario
    except ScenarioError:  # stored under an older schema: still shown, laid out from its events
        s = None
    if s is None or not s.steps:  # so is a free-play session, whose steps were clicks
        return Lane(run, run.title, text, tone, [], [], 0)
    costs = STORAGE_KINDS[s.storage_kind].cost
    return Lane(run, describe(s), text, tone, s.clients, s.nodes, s.duration_ms, costs=costs)
