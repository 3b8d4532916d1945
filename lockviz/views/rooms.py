"""Rooms: a teacher presents, the class follows (lockviz.teaching.rooms has the rules).

The presenter opens a room (``POST /rooms/``) and lands on its page: the join code, a link and
its QR code, who is present, the polls. From then on the presenter's browser is *presenting*:
every run, lesson and replay page it opens shows a room bar, and reports what it shows, so the
class follows. Students open ``/r/<code>`` (or type the code at ``/join``), optionally give a
name, and follow at ``/rooms/<code>/follow/``; joining never starts a server.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import segno
from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from lockviz import jsontext
from lockviz.errors import JsonRefused, NoRoom, NotYours, Refusal, RoomRefused
from lockviz.jsontypes import JsonValue
from lockviz.library import access
from lockviz.models import Poll, Room, Run, Share
from lockviz.shares import address_of, rates
from lockviz.teaching import codes, control, following, members, rooms, sharing, shown
from lockviz.teaching.lessons import course
from lockviz.teaching.rooms import State
from lockviz.views import HtmxHttpRequest, absolute, browser, withheld
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import respond

MAX_STATE_BYTES = 16 * 1024  # a presenter's state: a narration of 1,000 characters, and ids


def _room(request: HtmxHttpRequest, code: str, admit: bool = True) -> Room:
    """The room of this code, looked up as every code is (lockviz.teaching.codes): 404 with the
    one sentence for every code that leads nowhere (or to a room this browser may not enter,
    unless not ``admit``: the presenter key admits), 429 past this address's misses (raised:
    lockviz.views.refusals.Refusals answers them)."""
    room = codes.find(code, address_of(request), browser(request), admit)
    if room is None:
        raise NoRoom(codes.no_room(code), code.strip().upper()[:8])  # see views.refusals
    return room


def _presenting(request: HtmxHttpRequest, room: Room) -> bool:
    return browser(request) == room.presenter


def _forbidden(request: HtmxHttpRequest, what: str) -> HttpResponse:
    return _refused(
        request, NotYours(f"Only the presenter of this room can {what}: you follow it.")
    )


def _refused(request: HtmxHttpRequest, refusal: Refusal) -> HttpResponse:
    """A room's refusals are read by its scripts: plain text (lockviz.views.refusals)."""
    return respond(request, refusal, plain=True)


View = Callable[..., HttpResponse]


def _by_the_presenter(what: str) -> Callable[[View], View]:
    """A view only the room's presenter may call (to ``what``): it receives the room, not its
    code, and a :class:`RoomRefused` it raises is answered as a refusal."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        def checked(request: HtmxHttpRequest, code: str, **kwargs: object) -> HttpResponse:
            room = _room(request, code)
            if not _presenting(request, room):
                return _forbidden(request, what)
            try:
                return view(request, room, **kwargs)
            except RoomRefused as exc:
                return _refused(request, exc)

        return checked

    return decorate


@require_POST
def open_room(request: HtmxHttpRequest) -> HttpResponse:
    rates.take(rates.ROOMS, address_of(request))
    room = rooms.open_room(browser(request))
    request.session["presenting"] = room.code
    # Its presenter key, shown once on a page of its own (lockviz.views.room_control.new_key).
    control.keep_key(request.session, room)
    return redirect("room", code=room.code)


@require_GET
def room_page(request: HtmxHttpRequest, code: str) -> HttpResponse:
    room = _room(request, code)
    if not _presenting(request, room):
        return redirect("join_room", code=room.code)
    request.session["presenting"] = room.code
    control.seen(room)
    link = absolute(request, reverse("join_room", args=[room.code]))
    qr = segno.make(link, error="m").svg_inline(scale=10, border=2, dark="#111", light="#fff")
    poll = rooms.current(room)
    counts = rooms.counts(poll) if poll and poll.state == Poll.State.REVEALED else {}
    context = {
        "room": room,
        "link": link,
        "qr": qr,
        "present": rooms.present(room),
        "poll": poll,
        "tally": rooms.tally(poll) if poll else None,
        "counts": counts,
        "most": max([1, *counts.values()]),
        "lessons": course(),
        "recent": Run.objects.filter(owner=room.presenter)[:8],
        "shared": sharing.shared(room),
        "waiting": sharing.shared(room, Share.State.WAITING),
        "members": control.members(room),
        "crowds": control.crowds(room),
        "members_per_address": control.members_per_address(room),
        "members_ceiling": settings.LOCKVIZ_MEMBERS_PER_ADDRESS,
        "idle_hours": control.idle_limit().total_seconds() / 3600,
        "key_waiting": control.key_waiting(request.session, room),
    }
    return render(request, "lockviz/room.html", context)


@require_POST
def stop_presenting(request: HtmxHttpRequest, code: str) -> HttpResponse:
    request.session.pop("presenting", None)
    return redirect("index")


@require_http_methods(["GET", "POST"])
def join_by_code(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        code = str(request.POST.get("code", "")).strip().upper()[:8]
        if code and codes.find(code, address_of(request), browser(request)) is not None:
            return redirect("join_room", code=code)
        problem = codes.no_room(code) if code else ""
        return render(request, "lockviz/join.html", {"problem": problem, "code": code}, status=404)
    return render(request, "lockviz/join.html", {"code": ""})


@require_http_methods(["GET", "POST"])
def join_room(request: HtmxHttpRequest, code: str) -> HttpResponse:
    room = _room(request, code)
    if _presenting(request, room):
        return redirect("room", code=room.code)
    if request.method == "POST":
        name = str(request.POST.get("name", ""))
        try:
            members.join(room, browser(request), address_of(request), request.session, name)
        except RoomRefused as exc:
            context = {"room": room, "code": room.code, "problem": exc.message}
            return render(request, "lockviz/join.html", context, status=400)
        return redirect("follow_room", code=room.code)
    return render(request, "lockviz/join.html", {"room": room, "code": room.code})


@require_GET
def follow(request: HtmxHttpRequest, code: str) -> HttpResponse:
    room = _room(request, code)
    if _presenting(request, room):
        return redirect("room", code=room.code)
    member = members.member(room, request.session)
    if member is None:  # only a browser that joined follows: the join page, with its name
        return redirect("join_room", code=room.code)
    page = page_data(request, room=room, state=room.state)
    return render(request, "lockviz/follow.html", {"room": room, "member": member, "page": page})


@require_POST
@_by_the_presenter("say what the class sees")
def show(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    """The presenter's page says what it shows now (room.js, a few times a second at most),
    and the report's ``order``: an older report than the room's is answered, not saved
    (lockviz.teaching.shown)."""
    control.seen(room)
    data = _json(request)
    return JsonResponse(rooms.show(room, State.read(data), shown.order_of(data)).answer())


@require_POST
@_by_the_presenter("ask the class")
def ask(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    """A poll: a lesson's checkpoint (``run`` and ``step``) or the presenter's own question."""
    if request.POST.get("step"):
        run = access.run_or_404(request, str(request.POST.get("run", "")))
        poll = rooms.ask_checkpoint(room, run, _whole(request.POST.get("step")))
    else:
        given = request.POST.getlist("choices")
        choices = [line for item in given for line in item.splitlines()]
        poll = rooms.ask(room, str(request.POST.get("question", "")), choices)
    return JsonResponse({"poll": rooms.public(poll), "tally": rooms.tally(poll)})


@require_POST
@_by_the_presenter("set what students may run")
def allowance(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    """The switch on the room page: students may start runs of their own, and how many."""
    control.allow(
        room,
        request.POST.get("student_runs") == "on",
        _whole(request.POST.get("runs_each"), "runs_each"),
        _whole(request.POST.get("runs_in_all"), "runs_in_all"),
    )
    return redirect("room", code=room.code)


@require_POST
@_by_the_presenter("reveal the answer")
def reveal(request: HtmxHttpRequest, room: Room, poll_id: int) -> HttpResponse:
    poll = get_object_or_404(Poll, pk=poll_id, room=room)
    rooms.reveal(poll)
    return JsonResponse({"poll": rooms.public(poll)})


@require_POST
def vote(request: HtmxHttpRequest, code: str, poll_id: int) -> HttpResponse:
    room = _room(request, code)
    poll = get_object_or_404(Poll, pk=poll_id, room=room)
    if _presenting(request, room):
        return _forbidden(request, "answer: the presenter asks")
    member = members.member(room, request.session)
    if member is None:
        return _refused(
            request, NotYours(f"room: join room {room.code} (its link or code) to answer")
        )
    try:
        rates.take(rates.VOTES, address_of(request), room.code)
        rooms.vote(poll, member, str(request.POST.get("choice", ""))[:200])
    except Refusal as exc:
        return _refused(request, exc)
    return JsonResponse({"poll": rooms.public(poll, member.browser)})


@require_POST
def share(request: HtmxHttpRequest, code: str) -> HttpResponse:
    """A student shares a fork of theirs with the presenter (who alone sees the list)."""
    room = _room(request, code)
    run = access.run_or_404(request, str(request.POST.get("run", "")))
    try:
        shown = sharing.share(room, run, browser(request))
    except Refusal as exc:
        return _refused(request, exc)
    if request.htmx:
        text = f"Shared with the presenter of room {room.code}."
        return HttpResponse(text, content_type="text/plain; charset=utf-8")
    return JsonResponse({"shared": shown})


@require_GET
def run_for_followers(request: HtmxHttpRequest, run_id: str) -> JsonResponse:
    """What a follower's page needs to show a run: a checkpoint's question, never its answer,
    and how the presenter's page draws it (lockviz.teaching.following)."""
    run = access.run_or_404(request, run_id)
    return JsonResponse(
        page_data(
            request,
            run=run,
            title=run.title,
            scenario=following.scenario(run, withheld(request, run)),
            replay=reverse("replay", args=[run.pk]),
            verdict=reverse("verdict", args=[run.pk]),
            lane_verdict=reverse("compare_verdict", args=[run.pk]),  # in short, as a lane's
            drawn=following.drawn(run),
        )
    )


def _json(request: HtmxHttpRequest) -> JsonValue:
    try:
        return jsontext.loads(request.body or b"{}", max_bytes=MAX_STATE_BYTES, where="state")
    except JsonRefused as exc:
        raise RoomRefused(exc.problems) from None


def _whole(value: str | None, field: str = "step") -> int:
    try:
        return int(str(value))
    except ValueError:
        raise RoomRefused(f"{field}: {str(value)[:20]!r} is not a whole number") from None
