"""Finding a room by its code, so that codes cannot be walked.

A code is six characters of 23 (``lockviz.models.new_room_code``): about 148 M codes. Every
look-up of a code (``/r/<CODE>``, ``POST /join``, ``/ws/rooms/<CODE>/``, any room's page) goes
through :func:`find`: one address may look up :data:`CODE_MISSES` codes of no open room an hour
(``LOCKVIZ_CODE_MISSES_PER_HOUR``); past that, every look-up from it is refused alike, the right
code too, until the hour is over, so a refusal says nothing about whether a room exists. The
arithmetic, in docs/reliability.md: at 100 misses an hour, finding one of 100 open rooms takes
about 14,700 hours of guessing on average, longer than a term.

"No such room" and "not allowed in" are one answer (:data:`NO_ROOM`), for every way in: a room
its presenter closed, one that removed this browser, or one that stopped joins to a browser
that never joined is not found, like a code of no room (lockviz.teaching.control).
"""

from __future__ import annotations

from lockviz.models import Room
from lockviz.shares import rates
from lockviz.shares.rates import CODE_MISSES
from lockviz.teaching import rooms

NO_ROOM = "There is no open room with the code {code} that you can join: check the code on the \
projector."


def no_room(code: str) -> str:
    """The one sentence for a code that leads nowhere, whatever the reason."""
    return NO_ROOM.format(code=code.strip().upper()[:8])


def find(code: str, address: str, browser: str = "", admit: bool = True) -> Room | None:
    """The open room with this code, for a look-up by ``browser`` from ``address``; None when
    there is none or it is not ``browser``'s to enter (closed, ``browser`` removed, joins
    stopped: :func:`lockviz.teaching.rooms.find`), :class:`lockviz.errors.TooMany` when this
    address has missed too often this hour."""
    rates.check(CODE_MISSES, address)
    room = rooms.find(code, browser, admit)
    if room is None:
        rates.take(CODE_MISSES, address)
    return room
