"""What if…? forks: the editor for a run's future from a moment, and starting the fork live.

``GET /runs/<id>/fork/?at=<seq>`` shows the run's steps up to event ``seq`` as fixed and the rest
as editable rows; ``POST`` starts the fork as a new run of this browser's and opens it beside the
original (``/compare/?runs=<original>,<fork>``), where the moment they part is marked. The rules
are in :mod:`lockviz.teaching.forks`.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from lockviz import narrator
from lockviz.catalogue import STORAGE_KINDS
from lockviz.errors import NotAdmitted, ScenarioError
from lockviz.library import access
from lockviz.models import Run
from lockviz.runs import launcher
from lockviz.scenarios.schema import Scenario
from lockviz.scenarios.verbs import VERBS
from lockviz.shares import address_of
from lockviz.teaching import forks, steprows
from lockviz.views import HtmxHttpRequest, browser, withheld
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import respond


@require_http_methods(["GET", "POST"])
def fork(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = access.run_or_404(request, run_id)
    context: dict[str, object] = {"run": run}
    if run.live:
        context["problems"] = ["This run is still going: fork it once it has ended."]
        return render(request, "lockviz/fork.html", context, status=409)
    asked = str(request.POST.get("at") or request.GET.get("at") or "1")
    seq = _seq(asked)
    hidden = withheld(request, run)  # a lesson's answers not revealed: not in its rows either
    at = forks.split(run, seq, hidden) if seq is not None else None
    scenario = run.parsed_scenario
    if at is None:
        context["problems"] = [f"Run {run.pk} has no event {asked[:20]!r}."]
        return render(request, "lockviz/fork.html", context, status=404)
    context.update(_editor(request, run, scenario, at, hidden))
    if request.method == "GET":
        context["rows"] = forks.rows(at)
        return render(request, "lockviz/fork.html", context)
    storage = str(request.POST.get("storage") or run.storage_kind)
    try:
        rest = forks.rest_from_form(request.POST, at, scenario)
        built = forks.fork_scenario(run, at, rest, storage)
    except ScenarioError as exc:
        context.update(rows=forks.posted_rows(request.POST), problems=exc.problems, storage=storage)
        return render(request, "lockviz/fork.html", context, status=200 if request.htmx else 400)
    if not built.steps:
        context.update(rows=forks.posted_rows(request.POST), storage=storage)
        context["problems"] = ["Nothing to run: the fork has no steps."]
        return render(request, "lockviz/fork.html", context, status=200 if request.htmx else 400)
    moment = at.moment
    try:
        made = launcher.launch(
            built, run.slug, browser(request), address=address_of(request),
            parent=run, diverged_seq=moment.seq, diverged_ms=moment.t_ms,
        )  # fmt: skip
    except NotAdmitted as refused:
        return respond(request, refused)
    url = f"{reverse('compare')}?runs={run.pk},{made.pk}"
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _seq(text: str) -> int | None:
    try:
        return int(text[:12])
    except ValueError:
        return None


def _editor(
    request: HtmxHttpRequest, run: Run, scenario: Scenario, at: forks.Split, hidden: frozenset[int]
) -> dict[str, object]:
    near = forks.moments(run, at.moment.seq, hidden=hidden)
    return {
        "at": at,
        "moments": near,
        # a long run's other moments, a page away
        "earlier": near[0].seq - 1 if near and near[0].seq > 1 else None,
        "after": near[-1].seq + 1 if run.events.filter(seq__gt=near[-1].seq).exists() else None,
        "fixed": [
            {"step": step, "said": narrator.click(step, narrator.electing(scenario.to_json()))}
            for step in at.fixed
        ],
        "first": len(at.fixed),
        "verbs": list(VERBS),
        "page": page_data(request, run=run, verbs=steprows.verb_fields()),
        "actors": [*scenario.clients, *scenario.servers],
        "storage_kinds": list(STORAGE_KINDS.values()),
        "storage": run.storage_kind,
        "later": len(forks.later(at)),
    }
