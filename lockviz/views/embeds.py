"""Replays that leave the site: the embed a course page frames (/embed/runs/<id>/) and the
replay in one file (/runs/<id>/export.html, lockviz.runs.webpage).

Both show a run exactly when its replay page would (lockviz.views.replay: a lesson's run asks a
student of the class first, and answers not yet revealed stay out). The embed is the only page
another site may frame: its Content-Security-Policy's ``frame-ancestors`` is
``LOCKVIZ_EMBED_ANCESTORS`` (default ``*``), and X-Frame-Options is left off it; every other page
keeps Django's ``X-Frame-Options: DENY`` (XFrameOptionsMiddleware). Plans (issue 22's
/embed/plans/<id>/) come with the plans themselves.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.http import require_GET

from lockviz.library import access
from lockviz.runs import webpage
from lockviz.teaching import reveals
from lockviz.views import HtmxHttpRequest, absolute, ask_first, withheld
from lockviz.views.replay import ask_for_outcome, replay_context


@require_GET
@xframe_options_exempt
def embed_run(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """The replay and its controls, nothing else, framable by ``LOCKVIZ_EMBED_ANCESTORS``."""
    run = access.run_or_404(request, run_id)  # a private run: its teacher and class only
    hidden = withheld(request, run)
    if ask_first(request, run, hidden):
        response = ask_for_outcome(request, run, hidden, "replay")
    else:
        context = replay_context(request, run, hidden)
        context["standalone"] = True
        context["full_page"] = absolute(request, reverse("replay", args=[run.pk]))
        response = render(request, "lockviz/embed.html", context)
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
