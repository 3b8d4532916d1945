"""Every refusal (lockviz.errors) as an HTTP response, decided here and nowhere else.

The status is the refusal's own (400, 403, 409, 429, 503); what carries it depends on who asked:

- a run the lab will not take (``NotAdmitted``: 503 busy, 429 too many): the "refused" page, or
  for htmx its partial swapped into ``#refused``, with ``Retry-After`` when trying later helps;
- anything else on a page's action (a click, Finish, Run again): the action's result partial,
  each problem a line;
- a room's script (``plain=True``): the sentence as plain text;
- a code that leads to no room (``NoRoom``, 404): the join page, saying so.

htmx swaps only a 2xx into the page, so an htmx request gets 200 and the header ``X-Fault:
refused`` says it was refused (lockviz's own words then win over the generic sentence of
static/lockviz/request-problems.js). Each refusal is counted by reason on /metrics. A refusal a
view does not catch itself is answered here too (:class:`Refusals`, a middleware).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from lockviz import plaintext
from lockviz.errors import (
    Busy,
    DatabaseBusy,
    Invalid,
    NoRoom,
    NotAdmitted,
    NotLive,
    NotYours,
    Refusal,
    TooMany,
)
from lockviz.ops import counters
from lockviz.ops.counters import Reason
from lockviz.views import HtmxHttpRequest

log = logging.getLogger(__name__)
RESULT = "lockviz/_play_result.html"
# What a request is told when the database would not take its connection (PostgreSQL's
# max_connections reached, the server restarting): a moment later it may.
DATABASE_BUSY = "the database is not taking connections right now: try again in a few seconds"
REASONS: dict[type[Refusal], Reason] = {
    Busy: "lab_busy",
    DatabaseBusy: "database_busy",
    TooMany: "over_share",
    NoRoom: "no_room",
    NotYours: "not_owner",
    NotLive: "not_live",
    Invalid: "invalid",
}


def respond(request: HtmxHttpRequest, refusal: Refusal, *, plain: bool = False) -> HttpResponse:
    """The response that says ``refusal`` to whoever asked."""
    for kind, reason in REASONS.items():
        if isinstance(refusal, kind):
            counters.refused(reason)
            break
    htmx = bool(getattr(request, "htmx", False))
    if plain:
        response = HttpResponse(
            refusal.message, status=refusal.status, content_type="text/plain; charset=utf-8"
        )
    elif isinstance(refusal, NotAdmitted):
        template = "lockviz/_refused.html" if htmx else "lockviz/refused.html"
        response = render(request, template, {"refused": refusal}, status=refusal.status)
        if htmx:
            response["HX-Retarget"] = "#refused"
            response["HX-Reswap"] = "innerHTML"
    elif isinstance(refusal, NoRoom):  # the join page, saying so: try another code
        context = {"problem": refusal.message, "code": refusal.code}
        response = render(request, "lockviz/join.html", context, status=refusal.status)
    else:
        response = render(request, RESULT, {"problems": refusal.problems}, status=refusal.status)
    if isinstance(refusal, NotAdmitted) and refusal.retry_after_s is not None:
        response["Retry-After"] = str(refusal.retry_after_s)
    response["X-Fault"] = "refused"
    if htmx:
        response.status_code = 200  # htmx swaps only a 2xx in; X-Fault says it was refused
    return response


def not_yours(request: HtmxHttpRequest, run_id: str, what: str) -> HttpResponse:
    """403: only the browser that started the run may do ``what``; what to do instead."""
    return respond(
        request,
        NotYours(
            f"Only the browser that started run {run_id} can {what}: you are watching it. "
            "Start a run of your own to try things yourself."
        ),
    )


class Refusals:
    """Middleware: a refusal a view lets out (a share spent while it looked up a room code,
    lockviz.teaching.codes) is answered as :func:`respond` answers any other; and an address
    whose path or query holds a control character (an id with a NUL: lockviz.plaintext) is
    refused before any view reads it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        parts = [("the address", request.path)]
        parts += [(f"?{key}", v) for key, values in request.GET.lists() for v in [key, *values]]
        for where, text in parts:
            said = plaintext.problem(text)
            if said is not None:
                return respond(request, Invalid(f"{where[:40]}: {said}"))  # type: ignore[arg-type]
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, Refusal):
            return respond(request, exception)  # type: ignore[arg-type]  # htmx or not: both
        if isinstance(exception, OperationalError):  # a 503 that says so, not a server error
            log.warning("%s %s: the database refused: %s", request.method, request.path, exception)
            return respond(request, DatabaseBusy(DATABASE_BUSY))  # type: ignore[arg-type]
        return None


def csrf_failure(request: HtmxHttpRequest, reason: str = "") -> HttpResponse:
    """Django's CSRF_FAILURE_VIEW: a page that says what happened and what to do, instead of a
    bare 403 (a form left open too long, cookies blocked, or a proxy that changes the origin)."""
    origin = request.META.get("HTTP_ORIGIN", "")
    context = {
        "reason": reason or "no reason given",
        "origin": origin,
        "behind_proxy": "origin" in reason.lower(),
    }
    response = render(request, "lockviz/csrf_failure.html", context, status=403)
    response["X-Fault"] = "refused"
    return response
