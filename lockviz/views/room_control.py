"""The presenter's controls of their room (lockviz.teaching.control has the rules): the room's
settings (new joins, names), closing it, removing a member (or every member from one address,
and how many may join from one), approving or hiding a shared fork, a new presenter key (shown
on a page of its own), and taking the room back with one. Each is a plain form POST that returns
to the room page, so it works from the keyboard and without the room's script."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from lockviz.errors import RoomRefused
from lockviz.models import Room
from lockviz.teaching import control
from lockviz.views import HtmxHttpRequest, absolute, browser
from lockviz.views.rooms import _by_the_presenter, _room


def _back(room: Room) -> HttpResponse:
    return redirect("room", code=room.code)


@require_POST
@_by_the_presenter("change the room's settings")
def configure(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    joins_open, names = "joins_open" in request.POST, "names" in request.POST
    control.configure(room, joins_open=joins_open, names=names)
    return _back(room)


@require_POST
@_by_the_presenter("close the room")
def close(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    control.close(room)
    return _back(room)


@require_POST
@_by_the_presenter("remove a member")
def remove(request: HtmxHttpRequest, room: Room, member_id: int) -> HttpResponse:
    control.remove(room, member_id)
    return _back(room)


@require_POST
@_by_the_presenter("remove members")
def remove_crowd(request: HtmxHttpRequest, room: Room, mark: str) -> HttpResponse:
    """Every member who joined from one address (the room page's "N members from one
    address — remove them")."""
    control.remove_crowd(room, mark[:20])
    return _back(room)


@require_POST
@_by_the_presenter("limit members per address")
def limit_members(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    given = str(request.POST.get("members_per_address", ""))[:6]
    if not given.isdigit():
        raise RoomRefused(f"members_per_address: {given!r} is not a whole number")
    control.limit_members(room, int(given))
    return _back(room)


@require_POST
@_by_the_presenter("approve or hide what students share")
def decide(request: HtmxHttpRequest, room: Room, run_id: str, state: str) -> HttpResponse:
    control.decide(room, run_id[:16], state)
    return _back(room)


@require_http_methods(["GET", "POST"])
@_by_the_presenter("see or make the presenter key")
def new_key(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    """POST: a new presenter key (the old one stops working). GET: the key just made, once, on
    a page of its own: the room page is on the projector, and the key takes the room."""
    if request.method == "POST":
        control.keep_key(request.session, room)
        return redirect("room_new_key", code=room.code)
    key = control.key_once(request.session, room)
    link = absolute(request, reverse("room_take", args=[room.code, key])) if key else ""
    return render(request, "lockviz/room_key.html", {"room": room, "key_link": link})


@require_http_methods(["GET", "POST"])
def take_back(request: HtmxHttpRequest, code: str, key: str) -> HttpResponse:
    """The presenter key's link: a page that asks, and a POST that makes this browser the
    room's presenter (a GET changes nothing: link previews open links)."""
    room = _room(request, code, admit=False)  # the key, not this browser, admits
    context: dict[str, object] = {"room": room}
    if request.method == "POST":
        try:
            control.take_back(room, key, browser(request))
        except RoomRefused as exc:
            context["problem"] = str(exc)
            return render(request, "lockviz/room_take.html", context, status=403)
        request.session["presenting"] = room.code
        return _back(room)
    return render(request, "lockviz/room_take.html", context)
