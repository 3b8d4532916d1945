"""What a room shows, kept in the order the presenter showed it.

The presenter's page reports what it shows (lockviz.teaching.rooms.State) a few times a second,
each report a POST of its own, and the ASGI server runs each request in a thread of its own: two
reports may reach the database in either order (one held up by SQLite's lock around a reveal,
a second presenter tab, a request that hung and arrived late). So each report carries an
*order*, the room keeps the order of the report its ``state`` came from (``Room.state_order``),
and :func:`save` writes a report only when its order is greater, checked and written in one
transaction under the room's row lock (``select_for_update`` on PostgreSQL; on SQLite every
transaction takes the write lock as it begins, settings ``transaction_mode``): of two reports at
once only the newer can win. An older one is answered "older", not as an error (the page does
not send it again), with the room's order, which the page's clock takes in.

An order is a hybrid logical clock in milliseconds of the *server's* time:

* a presenter's page is handed :func:`first` when it is rendered (the server's clock, or one
  past the room's order if that is ahead) and counts on from it by its monotonic clock
  (``performance.now()``: the presenter's wall clock moving changes nothing), never below one
  past an order it was told of, and set forward by the server's clock in every answer
  (static/lockviz/room-reports.js);
* a move the server makes itself (a lecture plan's poll item: lockviz.teaching.presenting) takes
  ``max(now, room's order + 1)``: it wins over every report made before it, and a report made
  after it (on the page rendered after it, or any page whose clock has passed it) wins over it;
* two presenter tabs count on the same server time: the one moved last wins. A reload starts
  past everything the room has saved.

Every order is bounded: a whole number from 0 to :data:`MOST`, at most :data:`AHEAD_MS` past
the later of the server's clock and the room's order. A forged huge value is refused, and one
just under the bound cannot wedge the room: an honest page counts on from the room's order.
Each ``state`` frame carries its order too, and a room's stream never forwards a state older
than one it has sent (lockviz.consumers.rooms): two threads' broadcasts may cross.

What this cannot order: if the server's clock steps back between a page's report that is still
on its way and the rendering of the next page, that report may win over the next page's first.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import transaction

from lockviz.errors import RoomRefused
from lockviz.jsontypes import JsonValue
from lockviz.models import Room

AHEAD_MS = 3_600_000  # an hour: a page's clock is the server's, a little behind it
MOST = 2**53 - 1  # the largest whole number a page's script counts exactly


@dataclass(frozen=True)
class Shown:
    """What became of a report: ``saved``, or older than the room's (nothing written)."""

    saved: bool
    order: int  # the room's order now
    changed: bool = False  # saved, and the class sees something else: broadcast it
    now: int = 0  # the server's clock (ms) when it answered: the page's clock is set by it

    def answer(self) -> dict[str, object]:
        """The presenter page's answer (static/lockviz/room-reports.js reads it)."""
        said: dict[str, object] = {"saved": self.saved, "order": self.order, "now": self.now}
        if not self.saved:
            said["older"] = "the room shows a newer report: this one was not saved"
        return said


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def first(code: str) -> int:
    """The order a presenter's page rendered now counts on from: past all the room has."""
    stored = Room.objects.filter(pk=code).values_list("state_order", flat=True).first()
    return max(now_ms(), (stored or 0) + 1)


def order_of(data: JsonValue) -> int:
    """A report's ``order`` (its place among the presenter's reports), checked."""
    order = data.get("order") if isinstance(data, dict) else None
    if order is None:
        raise RoomRefused("order: missing: each report says its place in the presenter's order")
    if isinstance(order, bool) or not isinstance(order, int) or not 0 <= order <= MOST:
        raise RoomRefused(f"order: {str(order)[:24]!r} is not a whole number from 0 to {MOST}")
    return order


def save(room: Room, state: dict[str, object], order: int | None = None) -> Shown:
    """Show ``state`` in ``room`` if ``order`` is newer than the room's; None: a move the server
    makes now, after everything the room has. ``room`` is left holding what the room shows."""
    with transaction.atomic():
        held = Room.objects.select_for_update().only("state", "state_order").get(pk=room.pk)
        now = now_ms()
        if order is None:
            order = max(now, held.state_order + 1)
        elif order > max(now, held.state_order) + AHEAD_MS:
            raise RoomRefused(f"order: {order} is more than an hour ahead of the room's clock")
        if order <= held.state_order:
            room.state, room.state_order = held.state, held.state_order
            return Shown(saved=False, order=held.state_order, now=now)
        Room.objects.filter(pk=room.pk).update(state=state, state_order=order)
    room.state, room.state_order = state, order
    return Shown(saved=True, order=order, changed=held.state != state, now=now)
