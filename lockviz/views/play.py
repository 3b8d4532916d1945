"""Free play and clicks on live runs: start a session, do things to a running run, finish it,
save it as a scenario and run that again.

``POST /runs/<id>/do`` is the one door for every click, from the run page's menus and from the
free-play buttons alike. Its answer is a short partial: what was done, or each problem naming
its field. htmx gets it with status 200 (so it is swapped in) and an ``X-Fault`` header saying
``done`` or ``refused``; other callers get 400 or 409 for a refusal.
"""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from lockviz import narrator
from lockviz.errors import NotAdmitted, NotLive, ScenarioError
from lockviz.library import access
from lockviz.models import Run
from lockviz.runs import launcher, recovery
from lockviz.scenarios.schema import Scenario, parse
from lockviz.shares import address_of
from lockviz.teaching import play as free_play
from lockviz.teaching import reveals
from lockviz.views import HtmxHttpRequest, browser, owns, withheld
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import not_yours, respond

RESULT = "lockviz/_play_result.html"


@require_http_methods(["GET", "POST"])
def play(request: HtmxHttpRequest) -> HttpResponse:
    form = free_play.PlayForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        scenario = form.cleaned_data["built"]
        try:
            run = launcher.launch(
                scenario, "free-play", browser(request), True, address_of(request)
            )
        except NotAdmitted as refused:
            return respond(request, refused)
        return _go(request, reverse("play_session", args=[run.pk]))
    context = {
        "form": form,
        "backends": free_play.available_backends(),
        "no_fencing": free_play.NO_FENCING,
        "chosen": form["backend"].value() or "redis",
        "client_options": [
            (n, ", ".join(free_play.CLIENT_NAMES[:n]))
            for n in range(2, len(free_play.CLIENT_NAMES) + 1)
        ],
        "chosen_clients": str(form["clients"].value() or 2),
    }
    if request.htmx and request.method == "POST":
        return render(request, "lockviz/_play_setup.html", context)
    status = 400 if request.method == "POST" else 200
    return render(request, "lockviz/play.html", context, status=status)


@require_GET
def session(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = recovery.settle(access.run_or_404(request, run_id))
    return render(request, "lockviz/play.html", _session_context(request, run))


@require_POST
def do(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = access.run_or_404(request, run_id)
    if not owns(request, run):
        return not_yours(request, run.pk, "do things to it")
    try:
        _live(run)
        step = launcher.inject(run.pk, free_play.step_from_form(request.POST))
    except NotLive as exc:
        return respond(request, _said_not_live(run, exc))
    except ScenarioError as exc:
        return respond(request, exc)
    said = narrator.click(step.to_json(), narrator.electing(run.scenario))
    return _done(request, f"done: {said}")


@require_POST
def finish(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = access.run_or_404(request, run_id)
    if not owns(request, run):
        return not_yours(request, run.pk, "finish it")
    ended = launcher.finish(run.pk)
    if ended is None:
        return respond(request, _said_not_live(run, NotLive("this run is not live")))
    if ended == "cancelled":
        return _done(request, "cancelled: it had not started, and its place in line is free")
    return _done(
        request, "finishing: pauses end, what was still waiting is dropped, the verdict follows"
    )


@require_GET
def scenario_json(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = access.run_or_404(request, run_id)
    scenario = reveals.scenario(free_play.scenario_from_run(run), withheld(request, run))
    response = JsonResponse(scenario, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lockviz-play-{run.pk}.json"'
    return response


@require_POST
def again(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """Run what the session did as an ordinary scenario, live, from the start."""
    run = access.run_or_404(request, run_id)
    if not owns(request, run):
        return not_yours(request, run.pk, "run it again")
    saved = free_play.scenario_from_run(run)
    try:
        scenario = parse(
            {**saved, "title": str(saved.get("title", "Free play"))[:110] + " (again)"}
        )
    except ScenarioError as exc:
        problems = free_play.replay_problems(exc.problems)
        if request.htmx:
            return respond(request, ScenarioError(problems))
        context = {**_session_context(request, run), "problems": problems}
        return render(request, "lockviz/play.html", context, status=400)
    try:
        again_run = launcher.launch(
            scenario, "free-play", browser(request), address=address_of(request)
        )
    except NotAdmitted as refused:
        return respond(request, refused)
    return _go(request, reverse("run", args=[again_run.pk]))


def _session_context(request: HtmxHttpRequest, run: Run) -> dict[str, object]:
    scenario = _scenario(run)
    page = page_data(
        request,
        run=run,
        clients=list(scenario.clients) if scenario else [],
        nodes=list(scenario.nodes) if scenario else [],
        backend=run.scenario.get("backend"),
    )
    return {
        "run": run,
        "scenario": scenario,
        "live": run.live,
        "yours": owns(request, run),
        "page": page,
    }


def _scenario(run: Run) -> Scenario | None:
    try:
        return run.parsed_scenario
    except ScenarioError:
        return None


_ENDED: dict[str, str] = {
    Run.Status.FINISHED: "finished",
    Run.Status.FAILED: "failed",
    Run.Status.INTERRUPTED: "been interrupted",
    Run.Status.CANCELLED: "been cancelled",
}


def _live(run: Run) -> None:
    """NotLive, saying why, unless a click can be done on this run now."""
    why = _not_live(run)
    if why:
        raise NotLive(why)


def _said_not_live(run: Run, refusal: NotLive) -> NotLive:
    """``refusal`` in the words of what became of the run (it may have just ended)."""
    run.refresh_from_db()
    why = _not_live(run)
    return NotLive(why) if why else refusal


def _not_live(run: Run) -> str:
    """Why a click cannot be done on this run now ('' if it can)."""
    if not run.live:
        return (
            f"run {run.pk} has {_ENDED.get(run.status, run.status)}: "
            "clicks only work while a run is live. Start a new session to play again."
        )
    if run.status == Run.Status.QUEUED:
        return "the run is still waiting for the lab: try again once it is running"
    if not run.events.filter(kind="run_started").exists():
        return "the lab is still starting this run's servers: try again in a moment"
    return ""  # running: lockviz.runs.launcher.inject says so if the lab has let go of it


def _done(request: HtmxHttpRequest, done: str) -> HttpResponse:
    """What a click did, in words (a refusal: lockviz.views.refusals)."""
    response = render(request, RESULT, {"done": done, "problems": []})
    response["X-Fault"] = "done"
    return response


def _go(request: HtmxHttpRequest, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
