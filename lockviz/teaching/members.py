"""Who is a member of a room, and so who may answer its polls and count as present.

Only a browser that joined through ``/r/<CODE>`` (or ``POST /join``, which leads there) is a
member: joining gives it a member token, the room's code and its member number signed with the
installation's key (``django.core.signing``), kept in its session. Answering, presence on the
room's stream and a member's runs all ask :func:`member` for it, so a fresh cookie jar that
never joined answers nothing and is present nowhere. Joins are limited per address
(``LOCKVIZ_JOINS_PER_MINUTE``) and members per address in one room
(``LOCKVIZ_MEMBERS_PER_ADDRESS``): enough for a class behind one NAT, not for a script's army.
"""

from __future__ import annotations

from collections.abc import MutableMapping

from django.core import signing

from lockviz.errors import TooMany
from lockviz.models import Member, Room
from lockviz.shares import rates
from lockviz.shares.rates import JOINS
from lockviz.teaching import control, rooms

SALT = "lockviz.teaching.members"
SESSION_KEY = "members"  # the session's {code: member token}

Session = MutableMapping[str, object]


def token(member: Member) -> str:
    return signing.dumps({"room": member.room_id, "member": member.pk}, salt=SALT)


def join(room: Room, browser: str, address: str, session: Session, name: str = "") -> Member:
    """``browser`` joins ``room`` from ``address`` (again: its name may change); its session
    keeps the member token. :class:`TooMany` past a share of joins or members."""
    rates.take(JOINS, address)
    known = Member.objects.filter(room=room, browser=browser).exists()
    most = control.members_per_address(room)
    if not known and Member.objects.filter(room=room, address=address).count() >= most:
        raise TooMany(
            f"Room {room.code} has {most} members from this address, as many as one address "
            "may have in this room (its presenter's choice, at most LOCKVIZ_MEMBERS_PER_ADDRESS).",
            retry_after_s=3600,
        )
    member = rooms.join(room, browser, name)
    if not member.address:
        member.address = address
        member.save(update_fields=["address"])
    kept = session.get(SESSION_KEY)
    tokens = dict(kept) if isinstance(kept, dict) else {}
    tokens[room.code] = token(member)
    session[SESSION_KEY] = tokens
    return member


def member(room: Room, session: Session | None) -> Member | None:
    """The member this session joined ``room`` as, if its token says so and still holds."""
    tokens = session.get(SESSION_KEY) if session is not None else None
    signed = tokens.get(room.code) if isinstance(tokens, dict) else None
    if not isinstance(signed, str):
        return None
    try:
        said = signing.loads(signed, salt=SALT)
    except signing.BadSignature:
        return None
    if not isinstance(said, dict) or said.get("room") != room.code:
        return None
    number = said.get("member")
    return Member.objects.filter(pk=number, room=room).first() if isinstance(number, int) else None
