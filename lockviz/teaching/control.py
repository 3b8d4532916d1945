"""The presenter in control of their room: who may come in, what is listed, when it ends.

- **Shares** a student makes (a What if…? fork) wait for the presenter's approval
  (:class:`~lockviz.models.Share`, ``waiting``); approved ones are listed, and may be hidden again.
- **Members** can be removed: told so on their page, refused from then on (``removed``).
- **Joins** can be stopped (``joins_open``); **names** are asked for only if the room says so.
- **Closing** the room ends the class: every follower's page says "this class has ended", and
  nobody joins, votes or shares any more.
- **Expiry**: a room whose presenter has not been there for ``LOCKVIZ_ROOM_IDLE_HOURS`` is gone
  (:func:`live_rooms` leaves it out at once; :func:`prune` deletes it with its polls, votes,
  members and shares, where the app prunes old runs: ``manage.py prune``, run at start-up).
- **The presenter key**: a secret shown once as a link (:func:`new_key`; only its hash is kept);
  opening it on another device, or after the cookie expired, takes the room back
  (:func:`take_back`). A new key replaces the old one.

Messages to the room (lockviz.live.broadcast): ``{"type": "closed"}`` to everyone, and ``{"type":
"removed", "member": id}``, which the room stream passes only to that member's pages.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count, QuerySet
from django.utils import timezone

from lockviz.errors import RoomRefused
from lockviz.live import broadcast
from lockviz.models import Member, Poll, Room, Share, Vote, rooms_idle_before

KEY = "room_key"  # the session's presenter key not yet shown
SEEN_EVERY = dt.timedelta(minutes=1)  # the presenter's presence is written at most this often
# What a closed room says to its presenter's asks: its students see "this class has ended".
ENDED = "room: this room is closed and its class has ended; Teach a class opens a new room"


# -- presence and expiry -------------------------------------------------------------------


def idle_limit() -> dt.timedelta:
    return dt.timedelta(hours=settings.LOCKVIZ_ROOM_IDLE_HOURS)


def live_rooms() -> QuerySet[Room]:
    """Rooms whose presenter was there within the idle limit (the others are gone)."""
    return Room.objects.filter(presenter_seen__gte=rooms_idle_before())


def seen(room: Room) -> None:
    """The presenter is here (their room page, a page they present, their room stream)."""
    now = timezone.now()
    if now - room.presenter_seen < SEEN_EVERY:
        return
    room.presenter_seen = now
    Room.objects.filter(pk=room.pk).update(presenter_seen=now)


def prune() -> int:
    """Delete the rooms idle for longer than the limit, with their polls, votes, members and
    shares; how many rooms."""
    old = Room.objects.filter(presenter_seen__lt=rooms_idle_before())
    count = old.count()
    old.delete()
    return count


# -- who may come in -----------------------------------------------------------------------


def admit(room: Room, member: Member | None) -> None:
    """Refuse ``member`` (None: a browser that never joined) what this room does not allow."""
    if room.closed is not None:
        raise RoomRefused("room: this class has ended")
    if member is not None and member.removed:
        raise RoomRefused("room: the presenter removed you from this class")
    if member is None and not room.joins_open:
        raise RoomRefused("room: the presenter has stopped new students joining")


def configure(room: Room, *, joins_open: bool, names: bool) -> None:
    room.joins_open, room.names = joins_open, names
    room.save(update_fields=["joins_open", "names"])
    if not names:
        room.members.update(name="")  # names the room no longer shows are not kept


def remove(room: Room, member_id: int) -> None:
    member = room.members.filter(pk=member_id, removed=False).first()
    if member is None:
        raise RoomRefused("member: not a member of this room")
    member.removed = True
    member.save(update_fields=["removed"])
    # Its answers to questions still open count no more (those revealed stay as the class saw).
    Vote.objects.filter(
        poll__room=room, poll__state=Poll.State.OPEN, browser=member.browser
    ).delete()
    frame = {"type": "removed", "member": member.pk}
    broadcast.publish_frame(f"room.{room.code}", frame)


def close(room: Room) -> None:
    if room.closed is None:
        room.closed = timezone.now()
        room.save(update_fields=["closed"])
    broadcast.publish_frame(f"room.{room.code}", {"type": "closed"})


def members(room: Room) -> QuerySet[Member]:
    return room.members.filter(removed=False).order_by("joined")


# -- many members from one address (a class's NAT, or a script stuffing the ballot) ---------


@dataclass(frozen=True)
class Crowd:
    """Members of a room who joined from one address: how many, and the address's mark (its
    hash: the presenter sees who shares an address, never the address)."""

    members: int
    mark: str


def members_per_address(room: Room) -> int:
    """How many members may join ``room`` from one address."""
    most = int(settings.LOCKVIZ_MEMBERS_PER_ADDRESS)
    return min(most, room.members_per_address) if room.members_per_address else most


def crowds(room: Room) -> list[Crowd]:
    """The addresses more than one member joined from, the largest first."""
    joined = members(room).exclude(address="").order_by()  # grouped by address alone
    counts = joined.values("address").annotate(n=Count("id"))
    found = [Crowd(int(c["n"]), _mark(room, str(c["address"]))) for c in counts if c["n"] > 1]
    return sorted(found, key=lambda c: -c.members)


def remove_crowd(room: Room, mark: str) -> int:
    """Remove every member who joined from the address ``mark`` names; how many."""
    crowd = [m for m in members(room) if m.address and _mark(room, m.address) == mark]
    for member in crowd:
        remove(room, member.pk)
    return len(crowd)


def limit_members(room: Room, most: int) -> None:
    """The presenter lowers (or raises, up to the installation's) the members per address."""
    ceiling = int(settings.LOCKVIZ_MEMBERS_PER_ADDRESS)
    if not 1 <= most <= ceiling:
        raise RoomRefused(f"members_per_address: from 1 to {ceiling} members from one address")
    room.members_per_address = most
    room.save(update_fields=["members_per_address"])


def _mark(room: Room, address: str) -> str:
    return hmac.new(settings.SECRET_KEY.encode(), f"{room.code}|{address}".encode(),
                    hashlib.sha256).hexdigest()[:12]  # fmt: skip


# -- the room's allowance of the lab (lockviz.shares.runs) --------------------------------

MOST_EACH, MOST_IN_ALL = 4, 200  # what a presenter may let the class run


def allow(room: Room, student_runs: bool, each: int, in_all: int) -> None:
    """The presenter sets the room's allowance of the lab (lockviz.shares.runs): whether its
    students may start runs of their own, how many each may have going, how many in all."""
    if room.closed:
        raise RoomRefused(ENDED)
    if not 1 <= each <= MOST_EACH:
        raise RoomRefused(f"runs_each: from 1 to {MOST_EACH} runs each")
    if not 1 <= in_all <= MOST_IN_ALL:
        raise RoomRefused(f"runs_in_all: from 1 to {MOST_IN_ALL} runs for the class at once")
    room.student_runs, room.runs_each, room.runs_in_all = student_runs, each, in_all
    room.save(update_fields=["student_runs", "runs_each", "runs_in_all"])


# -- shares --------------------------------------------------------------------------------


def decide(room: Room, run_id: str, state: str) -> Share:
    """The presenter approves (``listed``) or hides a share."""
    if state not in (Share.State.LISTED, Share.State.HIDDEN):
        raise RoomRefused(f"state: {state[:20]!r} is neither listed nor hidden")
    share = room.shares.filter(run_id=run_id).first()
    if share is None:
        raise RoomRefused("run: nothing of that id was shared with this room")
    share.state = state
    share.save(update_fields=["state"])
    return share


# -- the presenter key ---------------------------------------------------------------------


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def new_key(room: Room) -> str:
    """A new presenter key for ``room`` (the old one stops working); shown once, kept hashed."""
    key = secrets.token_urlsafe(24)
    room.key_hash = _hash(key)
    room.save(update_fields=["key_hash"])
    return key


def keep_key(session: MutableMapping[str, Any], room: Room) -> None:
    """A new key for ``room``, kept in its presenter's session until it is shown, once, on a
    page of its own (never on the room page, which is on the projector)."""
    session[KEY] = {"room": room.code, "key": new_key(room)}


def key_waiting(session: MutableMapping[str, Any], room: Room) -> bool:
    note = session.get(KEY)
    return isinstance(note, dict) and note.get("room") == room.code


def key_once(session: MutableMapping[str, Any], room: Room) -> str:
    """The key kept for ``room``, once: the session forgets it as it is shown."""
    return str(session.pop(KEY).get("key") or "") if key_waiting(session, room) else ""


def take_back(room: Room, key: str, browser: str) -> None:
    """``browser`` presents ``room`` from now on, if ``key`` is its presenter key."""
    if not room.key_hash or not hmac.compare_digest(_hash(key), room.key_hash):
        raise RoomRefused("key: this is not the room's presenter key (a newer one replaced it?)")
    room.presenter = browser
    room.presenter_seen = timezone.now()
    room.save(update_fields=["presenter", "presenter_seen"])
