"""Replaying a stored run in the browser, and exporting it as a Mermaid sequence diagram."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.views.decorators.http import require_GET

from lockviz import narrator
from lockviz.edge import workers
from lockviz.edge.once import single_flight
from lockviz.jsontypes import JsonObject
from lockviz.library import access
from lockviz.models import Run, SavedRun, Visibility
from lockviz.narrator.words import number
from lockviz.teaching import following, reveals
from lockviz.views import HtmxHttpRequest, absolute, ask_first, withheld
from lockviz.views.pagedata import page_data

CHUNK = 500  # events in the page, and in each chunk its script fetches after it


@require_GET
def replay(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """The replay page, with the run's first :data:`CHUNK` events; ``more`` names the rest's
    first chunk (static/lockviz/replay/event-chunks.js fetches them), so no request reads a
    whole long run."""
    run = access.run_or_404(request, run_id)
    hidden = withheld(request, run)
    if ask_first(request, run, hidden):
        return ask_for_outcome(request, run, hidden, "replay")
    context = replay_context(request, run, hidden)
    context["embed_snippet"] = embed_snippet(request, run)
    context["embed_private"] = private_embed(request, run)
    return render(request, "lockviz/replay.html", context)


def replay_context(
    request: HtmxHttpRequest, run: Run, hidden: frozenset[int], *, chunked: bool = True
) -> dict[str, object]:
    """What templates/lockviz/_replay.html and the page around it read, as a browser that may not
    read the ``hidden`` answers sees them: the page data has the run's first :data:`CHUNK`
    events and the path of the rest (``chunked``), or no events (the one-file replay carries
    them itself: lockviz.runs.webpage)."""
    scenario = reveals.scenario(run.scenario, hidden)
    nodes = following.lifelines(run)
    if chunked:
        events, more = _chunk(run, hidden, 0)
        page = page_data(request, run=run, scenario=scenario, nodes=nodes, events=events, more=more)
    else:
        page = page_data(request, run=run, scenario=scenario, nodes=nodes)
    return {
        "run": run,
        "scenario": scenario,
        "page": page,
        "story": _story(run, scenario),
        "count": run.events.count(),
        "stop_at": _stop_at(request),
    }


def embed_snippet(request: HtmxHttpRequest, run: Run) -> str:
    """The ``<iframe>`` a course page pastes to show this run's embed (lockviz.views.embeds)."""
    src = absolute(request, reverse("embed_run", args=[run.pk]))
    title = escape(f"lockviz replay: {run.title}")
    return (
        f'<iframe src="{escape(src)}" title="{title}" width="100%" height="760" '
        'style="border:1px solid #d0d7de;border-radius:8px" loading="lazy"></iframe>'
    )


def private_embed(request: HtmxHttpRequest, run: Run) -> dict[str, object] | None:
    """A private run's embed shows it to its teacher and their class only (every other reader
    gets templates/lockviz/embed_refused.html): the snippet says so, and offers its teacher to
    make it unlisted (the Save box's form, lockviz.views.library.save_run). None: not private."""
    saved = SavedRun.objects.filter(run=run).only("visibility", "user_id", "title").first()
    if saved is None or saved.visibility != Visibility.PRIVATE:
        return None
    mine = request.user.is_authenticated and saved.user_id == request.user.pk
    return {"mine": mine, "title": saved.title, "back": request.get_full_path()}


def _stop_at(request: HtmxHttpRequest) -> int | None:
    """``?to=<seq>``: where playing stops (a lecture plan's replay item: replay/view.js reads
    it too); anything but a whole number ≥ 1 is no stop."""
    given = str(request.GET.get("to") or "")[:12]
    return int(given) if given.isdigit() and int(given) >= 1 else None


def ask_for_outcome(
    request: HtmxHttpRequest,
    run: Run,
    hidden: frozenset[int],
    what: str,
    template: str = "lockviz/outcome.html",
) -> HttpResponse:
    """A lesson's run before the reveal: the page says it shows the outcome and asks first."""
    query = request.GET.copy()
    query[reveals.OUTCOME] = "shown"
    # ?room=<code>: the way back to the class is the room bar's ``rejoin`` (lockviz.views.rooms)
    context = {"run": run, "withheld": sorted(hidden), "what": what,
               "shown_query": query.urlencode()}  # fmt: skip
    return render(request, template, context)


@require_GET
def replay_events(request: HtmxHttpRequest, run_id: str) -> JsonResponse:
    """``{"events": [...], "more": <the next chunk's path> | null}``: the run's events after
    ``?after=N``, at most :data:`CHUNK`, each with its words, without the answers this browser
    may not read yet (lockviz.teaching.reveals)."""
    run = access.run_or_404(request, run_id)
    try:
        after = max(0, int(str(request.GET.get("after") or 0)[:12]))
    except ValueError:
        return JsonResponse({"problems": ["after: a whole number ≥ 0"]}, status=400)
    events, more = _chunk(run, withheld(request, run), after)
    return JsonResponse({"events": events, "more": more})


def _chunk(run: Run, hidden: frozenset[int], after: int) -> tuple[list[narrator.Told], str | None]:
    """At most :data:`CHUNK` events after ``after``, without the ``hidden`` answers, and the
    path of the chunk after them."""
    events = reveals.told(run, hidden, after, CHUNK + 1)
    if len(events) <= CHUNK:
        return events, None
    events = events[:CHUNK]
    return events, f"{reverse('replay_events', args=[run.pk])}?after={events[-1]['seq']}"


def _story(run: Run, scenario: JsonObject) -> list[dict[str, object]]:
    """Every step of the ``scenario`` (the run's, as this browser may read it), numbered once,
    with the seq of the moment it was taken (None for a step the run never reached)."""
    steps_taken = run.events.filter(kind="step").values_list("data__index", "seq", "t_ms")
    taken = {index: (seq, t_ms) for index, seq, t_ms in steps_taken}
    found = scenario.get("steps")
    steps = found if isinstance(found, list) else []
    told = narrator.story((s for s in steps if isinstance(s, dict)), narrator.electing(scenario))
    for item in told:
        seq, t_ms = taken.get(item["index"], (None, None))
        item["seq"] = seq
        item["t_s"] = number(t_ms) / 1000 if seq is not None else item["t_s"]
        t_s = item["t_s"]  # formatted here: the template's floatformat costs 0.1 ms a step
        item["when"] = f"{t_s:.2f} s" if isinstance(t_s, int | float) else ""
    return told


@require_GET
def export_mermaid(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    run = access.run_or_404(request, run_id)
    hidden = withheld(request, run)

    def draw() -> str:  # in a worker process: the web process reads the rows, no more
        head = reveals.export(run, hidden, events=False)
        return workers.run(reveals.mermaid, head, run.event_texts(), hidden, run.scenario)

    if run.status in Run.LIVE:  # still growing: drawn as it is now
        drawn = draw()
    else:  # made once per run (and per what is withheld), one request at a time (lockviz.edge.once)
        key = f"lockviz:mmd:{run.pk}:{run.status}:{','.join(map(str, sorted(hidden)))}"
        drawn = single_flight(key, draw, 86400)
    response = HttpResponse(drawn, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="lockviz-run-{run.pk}.mmd"'
    return response
