"""Free play and clicks on live runs: start a session, do things to a running run, finish it,
save it as a scenario and run that again.

``POST /runs/<id>/do`` is the one door for every click, from the run page's menus and from the
free-play buttons alike. Its answer is a short partial: what was done, or each problem naming
its field. htmx gets it with status 200 (so it is swapped in) and an ``X-Fault`` header saying
``done`` or ``refused``; other callers get 400 or 409 for a refusal.
"""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from lockviz.models import Run
from lockviz.ops import metrics
from lockviz.runs import narrator, recorder, recovery
from lockviz.runs.recorder import Refused
from lockviz.scenarios.schema import Scenario, ScenarioError, parse
from lockviz.teaching import play as free_play
from lockviz.views import HtmxHttpRequest, browser, busy, not_yours, owns

RESULT = "lockviz/_play_result.html"


@require_http_methods(["GET", "POST"])
def play(request: HtmxHttpRequest) -> HttpResponse:
    form = free_play.PlayForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        scenario = form.cleaned_data["built"]
        try:
            run = recorder.launch(scenario, "free-play", browser(request), open_ended=True)
        except Refused as refused:
            return busy(request, refused)
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
    run = recovery.settle(get_object_or_404(Run, pk=run_id))
    return render(request, "lockviz/play.html", _session_context(request, run))


@require_POST
def do(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    if not owns(request, run):
        return not_yours(request, run, "do things to it")
    refusal = _not_live(run)
    if refusal:
        metrics.refused("not_live")
        return _result(request, problems=[refusal], status=409)
    try:
        step = recorder.inject(run.pk, free_play.step_from_form(request.POST))
    except ScenarioError as exc:
        return _result(request, problems=exc.problems, status=400)
    said = narrator.click(step.to_json())
    return _result(request, done=f"done: {said}")


@require_POST
def finish(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    if not owns(request, run):
        return not_yours(request, run, "finish it")
    if not recorder.finish(run.pk):
        metrics.refused("not_live")
        return _result(request, problems=[_not_live(run) or "this run is not live"], status=409)
    return _result(
        request,
        done="finishing: pauses end, what was still waiting is dropped, the verdict follows",
    )


@require_GET
def scenario_json(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = get_object_or_404(Run, pk=run_id)
    response = JsonResponse(recorder.scenario_from_run(run), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lockviz-play-{run.pk}.json"'
    return response


@require_POST
def again(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """Run what the session did as an ordinary scenario, live, from the start."""
    run = get_object_or_404(Run, pk=run_id)
    if not owns(request, run):
        return not_yours(request, run, "run it again")
    saved = recorder.scenario_from_run(run)
    try:
        scenario = parse(
            {**saved, "title": str(saved.get("title", "Free play"))[:110] + " (again)"}
        )
    except ScenarioError as exc:
        problems = free_play.replay_problems(exc.problems)
        if request.htmx:
            return _result(request, problems=problems)
        context = {**_session_context(request, run), "problems": problems}
        return render(request, "lockviz/play.html", context, status=400)
    try:
        again_run = recorder.launch(scenario, "free-play", browser(request))
    except Refused as refused:
        return busy(request, refused)
    return _go(request, reverse("run", args=[again_run.pk]))


def _session_context(request: HtmxHttpRequest, run: Run) -> dict[str, object]:
    scenario = _scenario(run)
    data = {
        "run": run.pk,
        "status": run.status,
        "ws": f"/ws/runs/{run.pk}/",
        "clients": list(scenario.clients) if scenario else [],
        "nodes": list(scenario.nodes) if scenario else [],
        "backend": run.scenario.get("backend"),
    }
    return {
        "run": run,
        "scenario": scenario,
        "live": run.live,
        "yours": owns(request, run),
        "data": data,
    }


def _scenario(run: Run) -> Scenario | None:
    try:
        return parse(run.scenario, allow_empty=True)
    except ScenarioError:
        return None


_ENDED: dict[str, str] = {
    Run.Status.FINISHED: "finished",
    Run.Status.FAILED: "failed",
    Run.Status.INTERRUPTED: "been interrupted",
    Run.Status.CANCELLED: "been cancelled",
}


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
    return ""  # running: lockviz.runs.inject says so if the lab has let go of it


def _result(
    request: HtmxHttpRequest,
    *,
    done: str = "",
    problems: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    response = render(request, RESULT, {"done": done, "problems": problems or []})
    response["X-Fault"] = "refused" if problems else "done"
    if problems and not request.htmx:
        response.status_code = status
    return response


def _go(request: HtmxHttpRequest, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
