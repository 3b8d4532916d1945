"""What a late moment did to a run's story: the details of a ``schedule_shifted`` event.

The engine (:mod:`lockviz.lab.engine`) hears of lateness three ways, and records each as a
``schedule_shifted`` with these functions' details: the machine fell behind and the schedule
shifted (:func:`late_crossing`, then :func:`shifted`), a server's reply came late with no fault in
the way (:func:`replied_late`), or a server ended a frozen holder's lease, or Sentinel promoted a
replica, only after the story needed it (:func:`outlived`). Whether the story survived is the
story's to say (:meth:`lockviz.lab.story.Story.crossing`): here it is asked the right question
and its answer put into the event's fields. Pure: the engine holds its lock and records.
"""

from __future__ import annotations

from lockviz.lab.moments import Crossing, Mark
from lockviz.lab.roundtrips import Slow
from lockviz.lab.scheduler import TOLERANCE_MS, Late
from lockviz.lab.story import Story
from lockviz.scenarios.schema import Scenario


def one_fate(scenario: Scenario) -> bool:
    """Whether the lock servers share one fate: a fault on one slows calls to the others (a
    ZooKeeper session moves between its servers, a group's servers talk to each other)."""
    return scenario.backend == "zookeeper" or scenario.lock_service.grouped(scenario.node_count)


def replied_late(
    story: Story, slow: Slow, index: int | None, shift_ms: float
) -> dict[str, object] | None:
    """Whether a reply that came late carried the command's effect across a point of the
    story (:mod:`lockviz.lab.roundtrips`): the ``schedule_shifted`` details that say so.
    ``index``: the step the client's command in hand comes from."""
    if slow.landed:  # the story had the call answered before the fault came
        mark = Mark("step", f"{slow.client}'s {slow.landed}", slow.replied_ms)
        crossing: Crossing | None = Crossing(mark, slow.what, slow.sent_ms, slow.replied_ms)
    elif slow.gave_up:  # the client counted the server as failed: a different story
        crossing = Crossing(
            Mark("timeout", slow.client, slow.replied_ms),
            slow.what,
            slow.sent_ms,
            slow.replied_ms,
        )
    else:
        late_client = (index, slow.client) if index is not None else None
        moment = [(slow.sent_ms, slow.what)]
        crossing = story.crossing(moment, slow.took_ms, TOLERANCE_MS, late_client)
    if crossing is None:
        return None
    details: dict[str, object] = {
        "what": slow.what,
        "due_ms": round(slow.sent_ms, 1),
        "late_ms": round(slow.took_ms, 1),
        "shift_ms": round(shift_ms, 1),
        "kept": False,
        "reply": True,
        **crossing.as_details(),
    }
    if index is not None:
        details["index"] = index
    return details


def late_crossing(story: Story, late: Late) -> Crossing | None:
    """Whether the story survived the machine falling behind: no moment moved across a timer
    running on a server or in a client, nor (a command its client took or ran late) across a
    later step already taken — nor, for a command still not done when a fault came to its
    client (``until_ms``), across anything before that moment."""
    late_client = (late.index, late.client) if late.client and late.index is not None else None
    moments = [(late.due_ms, late.what), *late.pending]
    own = late.index if late_client is None else None  # a step done already
    if late.began_ms is None:
        crossing = story.crossing(moments, late.late_ms, TOLERANCE_MS, late_client, own)
    else:  # the step itself as late as it began; what is pending as late as it is
        # done, less the step's own time (a server booting takes that on any machine)
        behind_ms = late.late_ms - late.own_ms
        crossing = story.crossing(
            moments[:1], late.began_ms, TOLERANCE_MS, late_client, own
        ) or story.crossing(moments[1:], behind_ms, TOLERANCE_MS, late_client, own)
    if crossing is None and late.until_ms is not None:  # not done yet when a fault came
        still = late.until_ms - late.due_ms
        crossing = story.crossing(moments[:1], still, 0.0, late_client)
    return crossing


def shifted(late: Late, crossing: Crossing | None) -> dict[str, object]:
    """The ``schedule_shifted`` details of the schedule's shift, and whether the story was kept."""
    details: dict[str, object] = {
        "what": late.what,
        "due_ms": round(late.due_ms, 1),
        "late_ms": round(late.late_ms, 1),
        "shift_ms": round(late.shift_ms, 1),
        "kept": crossing is None,
    }
    if late.index is not None:
        details["index"] = late.index
    if late.own_ms:
        details["own_ms"] = round(late.own_ms, 1)
    if crossing is not None:
        details.update(crossing.as_details())
    return details


def outlived(crossing: Crossing, shift_ms: float) -> dict[str, object]:
    """The ``schedule_shifted`` details of a server's answer that came after the moment the
    story needed it (:meth:`Story.outlived`, :func:`lockviz.lab.failovers.late_failover`)."""
    late = crossing.moved_to_ms - crossing.due_ms
    return {
        "what": f"{crossing.moved} (due by {crossing.due_ms:.0f} ms, "
        f"{late:.0f} ms late: after {crossing.fixed.who})",
        "due_ms": round(crossing.due_ms, 1),
        "late_ms": round(late, 1),
        "shift_ms": round(shift_ms, 1),
        "kept": False,
        "reply": True,  # a server's answer came late: nothing moves
        **crossing.as_details(),
    }
