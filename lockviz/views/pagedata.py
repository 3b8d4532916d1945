"""What a page hands its script, built in one place.

Every page renders ``page_data(...)`` once, as ``{{ page|json_script:"page-data" }}`` in
templates/base.html; its entry module (static/lockviz/pages/) reads it with ``pageData()`` from
static/lockviz/page-data.js. The common keys are named here and nowhere else:

- ``run``, ``status``, ``ws``: the run the page shows, its status, its event stream's path;
- ``room``, ``room_ws``: the room the page follows and its stream's path;
- ``presenting``: ``{"room", "ws", "order"}`` for the room this browser presents (the room
  bar), or null; ``order``: where this page's reports count on from (lockviz.teaching.shown).

Anything else a page needs (its scenario, lifelines, events, lanes, verbs…) comes as extras.
Stream paths come from lockviz.routing, never written by hand.
"""

from __future__ import annotations

import re

from django.http import HttpRequest

from lockviz.models import Room, Run
from lockviz.routing import room_stream, run_stream
from lockviz.teaching import shown

COMMON = ("run", "status", "ws", "room", "room_ws", "presenting")
CODE_SHAPE = re.compile(r"[A-Z0-9]{3,8}")  # what a room code can look like, old or new


def page_data(
    request: HttpRequest, *, run: Run | None = None, room: Room | None = None, **extra: object
) -> dict[str, object]:
    """The page's data for its script: the common keys (null when the page has none) and
    ``extra``, which may not redefine them. What the extras are is the page's business: they
    are only passed on, to be written out by ``json_script``."""
    clash = set(extra) & set(COMMON)
    if clash:
        raise TypeError(f"page_data: {sorted(clash)} are common keys, pass run= or room=")
    data: dict[str, object] = dict.fromkeys(COMMON)
    if run is not None:
        data.update(run=run.pk, status=run.status, ws=run_stream(run.pk))
    if room is not None:
        data.update(room=room.code, room_ws=room_stream(room.code))
    code = presenting(request)
    if code is not None:
        data["presenting"] = {"room": code, "ws": room_stream(code), "order": shown.first(code)}
    return {**data, **extra}


def presenting(request: HttpRequest) -> str | None:
    """The code of the room this browser presents, if any."""
    code = request.session.get("presenting") if hasattr(request, "session") else None
    return code if isinstance(code, str) else None


def room_bar(request: HttpRequest) -> dict[str, object]:
    """Context for every page: the room this browser presents, the class a student exploring
    alone may rejoin (``?room=<code>``: only a code's shape, anything else is ignored), and the
    page data of a page whose view hands its script nothing more (a view's own ``page``
    replaces it)."""
    code = presenting(request)
    asked = str(request.GET.get("room", "")).strip().upper()
    context: dict[str, object] = {"page": page_data(request)}
    if code:
        context["presenting"] = code
        # A closed room's class has ended: the bar offers no question to ask it.
        context["presenting_closed"] = Room.objects.filter(code=code, closed__isnull=False).exists()
    elif CODE_SHAPE.fullmatch(asked):
        context["rejoin"] = asked
    return context
