"""How many runs one client may have live (queued or running) at once, and whose share a run
takes.

Not a rate either: a run holds its lab slot until it ends, so what counts is how many are live
now. The database knows that for every app process alike (each run's ``status``, its ``owner``
browser, its ``address`` and the room whose ``allowance`` it takes), so the count is a query,
made under the recorder's admission lock.

Whose share:

- the presenter of a room (:func:`presenting`: a room open, not idle, with members present,
  opened by a logged-in teacher, or by anyone where ``LOCKVIZ_ANYONE_PRESENTS`` says so): an
  allowance of their own, ``LOCKVIZ_PRESENTER_RUNS`` runs live at once (its runs are not the
  class's), and their runs go first (lockviz.runs.priority). Opening a room needs no account,
  so a room by itself lifts no share: a presenter without that standing is a visitor;
- a member of a room whose presenter lets students start runs: the room's allowance (so many
  each, so many for the class in all), whatever address the class comes from, for as long as
  they are a member (not removed) and the room is open;
- anyone else, a visitor in no room: the address's share (``LOCKVIZ_MAX_PER_ADDRESS`` runs, of
  them ``LOCKVIZ_PLAY_PER_ADDRESS`` free-play sessions) and the browser's cap
  (``LOCKVIZ_MAX_PER_BROWSER``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from lockviz import accounts
from lockviz.errors import TooMany
from lockviz.models import Member, Room, Run, rooms_idle_before

RETRY_S = 30  # a scripted run is over in well under a minute


@dataclass(frozen=True)
class Charge:
    """Whose share new runs take: their address, and the room whose allowance they count
    against (``""``: none, the address's share)."""

    address: str
    allowance: str = ""


def presenting(owner: str) -> Room | None:
    """The room ``owner`` presents with a presenter's standing, if any: open, not idle, with a
    member present (a page connected: models.Presence) that was not removed, and opened by a
    logged-in teacher (or by anyone, ``LOCKVIZ_ANYONE_PRESENTS``)."""
    if not owner or not (settings.LOCKVIZ_ANYONE_PRESENTS or accounts.account_id(owner)):
        return None
    rooms = Room.objects.filter(
        presenter=owner, closed__isnull=True, presenter_seen__gte=rooms_idle_before(),
        members__removed=False, members__presences__isnull=False,
    )  # fmt: skip
    return rooms.order_by("-created").first()


def allowance(owner: str) -> Room | None:
    """The room whose allowance ``owner``'s runs count against as a student, if any: the room
    it joined last, while it is a member and the room is open, if its presenter lets students
    start runs."""
    if not owner:
        return None
    member = Member.objects.filter(
        browser=owner, removed=False, room__closed__isnull=True,
        room__presenter_seen__gte=rooms_idle_before(),
    )  # fmt: skip
    joined = member.select_related("room").order_by("-joined").first()
    return joined.room if joined is not None and joined.room.student_runs else None


def charge(owner: str, address: str, count: int = 1, open_ended: bool = False) -> Charge:
    """Whose share ``count`` new runs of ``owner`` at ``address`` take; :class:`TooMany`, with a
    sentence naming the share, when they would take more than it."""
    live = Run.objects.filter(status__in=Run.LIVE)
    mine = live.filter(owner=owner).count() if owner else 0
    most = settings.LOCKVIZ_MAX_PER_BROWSER
    if mine + count > most:
        _refuse(
            f"You already have {mine} run{'s' * (mine != 1)} queued or running, and one "
            f"browser may have {most} at a time: wait for one to end, or finish it."
        )
    presented = presenting(owner)
    if presented is not None:
        theirs = live.filter(owner=owner, allowance=presented.code).count()
        most_presenter = settings.LOCKVIZ_PRESENTER_RUNS
        if theirs + count > most_presenter:
            _refuse(
                f"You present room {presented.code}, and a presenter may have {most_presenter} "
                f"run{'s' * (most_presenter != 1)} going at a time (LOCKVIZ_PRESENTER_RUNS): "
                "finish one, or wait for one to end."
            )
        return Charge(address, presented.code)
    room = allowance(owner)
    if room is not None:
        if mine + count > room.runs_each:
            _refuse(
                f"In room {room.code} each student may have {room.runs_each} run"
                f"{'s' * (room.runs_each != 1)} going at a time (the presenter's choice): "
                "wait for yours to end, or finish it."
            )
        theirs = live.filter(allowance=room.code).exclude(owner=room.presenter).count()
        if theirs + count > room.runs_in_all:
            _refuse(
                f"Room {room.code} has {theirs} runs going, as many as its presenter lets the "
                "class have at once: try again when one ends."
            )
        return Charge(address, room.code)
    here = live.filter(address=address, allowance="")
    most_here = settings.LOCKVIZ_MAX_PER_ADDRESS
    if here.count() + count > most_here:
        _refuse(
            f"This address has {most_here} runs queued or running, as many as one address may "
            "(LOCKVIZ_MAX_PER_ADDRESS): try again when one ends. A class behind one address "
            "joins its presenter's room, where the presenter sets how many runs students start."
        )
    most_play = settings.LOCKVIZ_PLAY_PER_ADDRESS
    if open_ended and here.filter(open_ended=True).count() + count > most_play:
        _refuse(
            f"This address has {most_play} free-play sessions open, as many as one address "
            "may (LOCKVIZ_PLAY_PER_ADDRESS): finish one, or try again when one ends."
        )
    return Charge(address)


def _refuse(sentence: str) -> None:
    raise TooMany(sentence, retry_after_s=RETRY_S)
