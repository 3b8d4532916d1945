"""Replays that leave the site: the embed a course page frames (/embed/runs/<id>/) and the
replay in one file (/runs/<id>/export.html, lockviz.runs.webpage).

Both show a run exactly when its replay page would (lockviz.views.replay: a lesson's run asks a
student of the class first, and answers not yet revealed stay out). The embed is the only page
another site may frame: its Content-Security-Policy's ``frame-ancestors`` is
``LOCKVIZ_EMBED_ANCESTORS`` (default ``*``), and X-Frame-Options is left off it; every other page
keeps Django's ``X-Frame-Options: DENY`` (XFrameOptionsMiddleware). A run the reader may not
see gets a page in the frame that says so (404, the same for none and for a private one, so an
id says nothing), with a link that opens the embed in a tab of its own (where the reader's own
login or class may let them see it). A lesson's run that asks a student first (before the
reveal) asks on a page that is never framed, since its link shows the outcome: framed (the
browser's ``Sec-Fetch-Dest`` says ``iframe``, or says nothing) the embed is a framable notice
whose link opens the question in a new tab; ``?outcome=ask`` (that link) or a top-level
visit is the question itself. A lecture plan embeds too
(/embed/plans/<id>/): its items in order for a course page to read and play, each replay as its
own embed, without the teacher's notes (those are for the lecture, not for the page).
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET

from lockviz import accounts
from lockviz.library import access
from lockviz.models import Plan, Run
from lockviz.runs import webpage
from lockviz.teaching import editor, plans, reveals
from lockviz.views import HtmxHttpRequest, absolute, ask_first, withheld
from lockviz.views.replay import ask_for_outcome, replay_context


@require_GET
@xframe_options_exempt
def embed_run(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """The replay and its controls, nothing else, framable by ``LOCKVIZ_EMBED_ANCESTORS``. A run
    this reader may not see (none, or a private one: its teacher and class only) is a page in the
    frame that says so, framable too: a frame left blank by the site's 404 says nothing."""
    try:
        run = access.run_or_404(request, run_id)
    except Http404:
        response = render(request, "lockviz/embed_refused.html", status=404)
        response["Content-Security-Policy"] = f"frame-ancestors {settings.LOCKVIZ_EMBED_ANCESTORS}"
        return response
    hidden = withheld(request, run)
    if ask_first(request, run, hidden):
        return _ask_first(request, run, hidden)
    context = replay_context(request, run, hidden)
    context["standalone"] = True
    context["full_page"] = absolute(request, reverse("replay", args=[run.pk]))
    response = render(request, "lockviz/embed.html", context)
    response["Content-Security-Policy"] = f"frame-ancestors {settings.LOCKVIZ_EMBED_ANCESTORS}"
    return response


# Where a browser loads a page (Fetch Metadata's Sec-Fetch-Dest) when it loads it in a frame.
FRAMED = frozenset({"iframe", "frame", "embed", "object"})


def _ask_first(request: HtmxHttpRequest, run: Run, hidden: frozenset[int]) -> HttpResponse:
    """The question before the reveal, standalone and never framed (its link shows the
    outcome: a page around it must not click it for the student); in a frame, a notice that
    is framable and opens the question in a new tab."""
    dest = request.headers.get("Sec-Fetch-Dest", "")
    if request.GET.get(reveals.OUTCOME) != "ask" and (dest in FRAMED or not dest):
        query = request.GET.copy()
        query[reveals.OUTCOME] = "ask"
        context = {"run": run, "withheld": sorted(hidden), "ask_query": query.urlencode()}
        response = render(request, "lockviz/embed_ask_elsewhere.html", context)
        response["Content-Security-Policy"] = f"frame-ancestors {settings.LOCKVIZ_EMBED_ANCESTORS}"
    else:
        response = ask_for_outcome(request, run, hidden, "replay", "lockviz/embed_outcome.html")
        response["X-Frame-Options"] = "DENY"
        response["Content-Security-Policy"] = "frame-ancestors 'none'"
    patch_vary_headers(response, ["Sec-Fetch-Dest"])
    return response


@require_GET
@xframe_options_exempt
def embed_plan(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    """A lecture plan, framable as a run's embed is: its lessons and scenarios as links, its
    replays played in place (each run shown only where its replay page would be), its polls'
    questions and choices; never the notes."""
    plan = get_object_or_404(Plan, pk=plan_id[:16])
    viewer = accounts.viewer(request)
    shown = []
    for item in plans.items_of(plan):
        run = Run.objects.filter(pk=item.run).first() if item.kind == "replay" else None
        link = ""
        if item.kind == "lesson":
            link = reverse("lesson", args=[item.lesson])
        elif item.kind == "exercise":
            link = reverse("exercise", args=[item.exercise])
        elif item.kind == "scenario":
            opened = (
                f"?from={item.slug}" if item.slug else f"?s={editor.encode(item.scenario or {})}"
            )
            link = reverse("new_scenario") + opened
        elif run is not None and access.may_see(viewer, run):
            at = f"#seq={item.seq_from}" if item.seq_from else ""
            link = (
                reverse("embed_run", args=[run.pk])
                + (f"?to={item.seq_to}" if item.seq_to else "")
                + at
            )
        shown.append({"item": item, "link": link})
    context = {
        "plan": plan,
        "items": shown,
        "full_page": absolute(request, reverse("plan", args=[plan.pk])),
    }
    response = render(request, "lockviz/embed_plan.html", context)
    response["Content-Security-Policy"] = f"frame-ancestors {settings.LOCKVIZ_EMBED_ANCESTORS}"
    return response


@require_GET
def export_html(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """The run's replay as one self-contained HTML file that plays from disk."""
    run = access.run_or_404(request, run_id)  # a private run: its teacher and class only
    hidden = withheld(request, run)
    if ask_first(request, run, hidden):
        return ask_for_outcome(request, run, hidden, "download")
    context = replay_context(request, run, hidden, chunked=False)
    context.update(
        standalone=True,
        full_page=absolute(request, reverse("replay", args=[run.pk])),
        styles=webpage.styles(),
        script=webpage.script(),
        events=webpage.packed(reveals.told(run, hidden)),
        csp=webpage.CSP,
    )
    response = render(request, "lockviz/offline.html", context)
    response["Content-Disposition"] = f'attachment; filename="lockviz-run-{run.pk}.html"'
    return response
