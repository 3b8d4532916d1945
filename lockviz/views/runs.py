"""Thin views: HTTP in, calls on lockviz.runs, HTML (or an htmx partial) out."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from lockviz import accounts
from lockviz.catalogue import BACKENDS, STORAGE_KINDS
from lockviz.edge import staticfiles
from lockviz.errors import NotAdmitted
from lockviz.library import access, listing
from lockviz.models import Run
from lockviz.runs import launcher, recovery
from lockviz.scenarios.library import builtin
from lockviz.shares import address_of
from lockviz.teaching import reveals
from lockviz.views import HtmxHttpRequest, ask_first, browser, owns, withheld
from lockviz.views.forms import RunForm
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import not_yours, respond
from lockviz.views.replay import ask_for_outcome


def run_page_assets() -> tuple[str, ...]:
    """What a run's page loads beyond every page's own: its style sheet and its entry module's
    imports (templates/lockviz/run.html). The index prefetches them, so that a click on Run waits
    for the run and not for its page's scripts."""
    every_page = set(staticfiles.modules("lockviz/pages/base.js"))
    scripts = [m for m in staticfiles.modules("lockviz/pages/run.js") if m not in every_page]
    return ("lockviz/play.css", *scripts)


@require_GET
def index(request: HtmxHttpRequest) -> HttpResponse:
    groups: dict[str, list[dict[str, object]]] = {name: [] for name in BACKENDS}
    for slug, s in builtin().items():
        form = RunForm(initial={"scenario": slug, "storage": s.storage_kind, "ttl_ms": s.ttl_ms})
        groups.setdefault(s.backend, []).append({"slug": slug, "scenario": s, "form": form})
    sections = [
        {"backend": b, "name": BACKENDS[b].title, "items": items}
        for b, items in groups.items()
        if items
    ]
    # Nobody's unsaved runs but the visitor's own (lockviz.library.listing), and the gallery.
    context = {
        "sections": sections,
        "recent": listing.own_runs(accounts.viewer(request)),
        "gallery": listing.gallery(),
        "run_page_assets": run_page_assets(),
    }
    return render(request, "lockviz/index.html", context)


@require_POST
def start_run(request: HtmxHttpRequest) -> HttpResponse:
    form = RunForm(request.POST)
    if not form.is_valid():
        context = {
            "form": form,
            "slug": request.POST.get("scenario", ""),
            "from_run": request.POST.get("from_run", ""),
        }
        return render(
            request, "lockviz/_run_form.html", context, status=200 if request.htmx else 400
        )
    source = form.cleaned_data.get("source")
    if source is not None and not owns(request, source):
        return not_yours(request, source.pk, "run it again with other settings")
    try:
        run = launcher.launch(
            form.cleaned_data["built"],
            form.cleaned_data["slug"],
            browser(request),
            address=address_of(request),
        )
    except NotAdmitted as refused:
        return respond(request, refused)
    url = reverse("run", args=[run.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


@require_GET
def run_page(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = recovery.settle(access.run_or_404(request, run_id))
    hidden = withheld(request, run)
    if ask_first(request, run, hidden):
        return ask_for_outcome(request, run, hidden, "run page")
    scenario = run.parsed_scenario  # a free-play session has no steps
    initial = {"from_run": run.pk, "storage": run.storage_kind, "ttl_ms": scenario.ttl_ms}
    form = RunForm(initial=initial)
    shown = reveals.scenario(scenario.to_json(), hidden)  # before the reveal: not its answers
    context = {
        "run": run,
        "scenario": scenario,
        "form": form,
        "from_run": run.pk,
        "shown": shown,
        "withheld": hidden,
        "changed": _changes(run),
        "yours": owns(request, run),
        "page": page_data(
            request,
            run=run,
            scenario=shown,
            nodes=scenario.nodes,
        ),
    }
    return render(request, "lockviz/run.html", context)


def _changes(run: Run) -> list[str]:
    """What the learner changed from the built-in scenario this run came from."""
    original = builtin().get(run.slug)
    if original is None:
        return []
    changes = []
    if run.storage_kind != original.storage_kind:
        changes.append(f"storage {STORAGE_KINDS[run.storage_kind].label}")
    if run.scenario.get("ttl_ms") != original.ttl_ms:
        changes.append(f"lease {run.scenario.get('ttl_ms')} ms")
    return changes


@require_GET
def verdict(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = access.run_or_404(request, run_id)
    return render(request, "lockviz/_verdict.html", {"run": run})


@require_GET
def export_json(request: HtmxHttpRequest, run_id: str) -> JsonResponse:
    run = access.run_or_404(request, run_id)
    exported = reveals.export(run, withheld(request, run))
    response = JsonResponse(exported, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lockviz-run-{run.pk}.json"'
    return response
