"""Forks a student shares with the presenter: waiting for approval, then listed or hidden
(:class:`~lockviz.models.Share`; the presenter approves in lockviz.teaching.control). Only the
presenter's page lists them; a listed one opens beside its original on the projector."""

from __future__ import annotations

from lockviz.errors import NotYours, RoomRefused
from lockviz.live import broadcast
from lockviz.models import Member, Room, Run, Share
from lockviz.teaching import control, rooms


def share(room: Room, run: Run, browser: str) -> dict[str, object]:
    """A student puts a fork of theirs on the presenter's list (nobody else sees it)."""
    member = Member.objects.filter(room=room, browser=browser).first()
    if member is None:
        raise NotYours("room: join this room before sharing with its presenter")
    control.admit(room, member)
    if not run.owner or run.owner != browser:
        raise NotYours("run: only the browser that started a run can share it")
    if run.parent_id is None:
        raise RoomRefused("run: only a What if…? fork is shared beside its original")
    run.shared_with = room.code
    run.save(update_fields=["shared_with"])
    Share.objects.get_or_create(room=room, run=run)  # waiting for the presenter's approval
    shown = shared_fork(run, member.name)
    broadcast.publish_frame(rooms.presenter_group(room), {"type": "shared", "fork": shown})
    return shown


def shared(room: Room, state: str = Share.State.LISTED) -> list[dict[str, object]]:
    """The forks shared with this room's presenter in ``state`` (listed: approved), newest
    first."""
    names = dict(room.members.values_list("browser", "name"))
    shares = room.shares.filter(state=state).select_related("run")[:20]
    return [shared_fork(s.run, names.get(s.run.owner, "")) for s in shares]


def shared_fork(run: Run, name: str) -> dict[str, object]:
    """A shared fork as the presenter's page lists it: who, what, and the comparison to open."""
    return {
        "run": run.pk,
        "title": run.title,
        "name": name or "a student",
        "parent": run.parent_id,
        "diverged_ms": run.diverged_ms,
        "compare": f"/compare/?runs={run.parent_id},{run.pk}",
    }
