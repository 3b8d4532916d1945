"""Rooms: a class follows one presenter — what they show, live — and answers polls together.

A presenter opens a room and gets a short code; students join with it (never starting a server)
and follow. The presenter's pages report what they show (:class:`State`: a live run, a lesson at
its current step, a replay at its position); every follower's page shows the same, a late
joiner starts from it. A poll is a lesson's checkpoint or a question the presenter types; each
student answers once (changeable until the reveal); the presenter sees the live tally, the class
sees nothing of it until the reveal, and nobody ever sees who answered what. Messages go out on
two groups (lockviz.live.broadcast): ``room.<code>`` (everyone in the room) and
``room.<code>.presenter`` (the presenter's pages only: tallies, presence).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet

from lockviz import plaintext
from lockviz.errors import RoomRefused
from lockviz.jsontypes import JsonValue
from lockviz.library import access
from lockviz.live import broadcast
from lockviz.models import Member, Poll, Presence, Room, Run, Vote
from lockviz.runs import recovery
from lockviz.scenarios.library import builtin
from lockviz.teaching import choices, control, shown

VIEWS = ("idle", "run", "lesson", "replay")
RUN_ID = re.compile(r"^[A-Za-z0-9_-]{1,16}$")
MAX_CHOICES = 6


@dataclass(frozen=True)
class State:
    """What the presenter shows now; every field bounded (it comes from a browser)."""

    view: str = "idle"  # idle | run | lesson | replay
    run: str | None = None  # the run on screen
    lesson: str | None = None  # its lesson, when the presenter walks through one
    at: int | None = None  # the last event shown (a replay's or walkthrough's); None: live
    narration: str = ""  # the story line the presenter is at
    title: str = ""
    beside: str | None = None  # a run shown beside ``run`` (a fork's original), whole

    @classmethod
    def read(cls, data: JsonValue) -> State:
        if not isinstance(data, dict):
            raise RoomRefused("state: must be a JSON object")
        view = data.get("view", "idle")
        if not isinstance(view, str) or view not in VIEWS:
            raise RoomRefused(f"view: {str(view)[:20]!r} is not one of {', '.join(VIEWS)}")
        run, beside = data.get("run"), data.get("beside")
        if run is not None and (not isinstance(run, str) or not RUN_ID.match(run)):
            raise RoomRefused("run: not a run id")
        if beside is not None and (not isinstance(beside, str) or not RUN_ID.match(beside)):
            raise RoomRefused("beside: not a run id")
        lesson = data.get("lesson")
        if lesson is not None and (not isinstance(lesson, str) or lesson not in builtin()):
            raise RoomRefused("lesson: not a lesson of the course")
        at = data.get("at")
        if at is not None and (isinstance(at, bool) or not isinstance(at, int) or at < 0):
            raise RoomRefused("at: must be a whole number ≥ 0, or null for live")
        narration, title = data.get("narration") or "", data.get("title") or ""
        if not isinstance(narration, str) or not isinstance(title, str):
            raise RoomRefused("narration: must be text")
        return cls(view, run, lesson, at, narration[:1000], title[:120], beside)


def reach(state: object) -> tuple[str | None, int | None]:
    """How far into which run the class may see, by the presenter's state: a lesson or a replay
    up to the event the presenter shows (nothing while a lesson's run still plays live: the
    telling has not begun), a live run page all of it, as it plays (None)."""
    run = state.get("run") if isinstance(state, dict) else None
    if not isinstance(state, dict) or not isinstance(run, str):
        return None, None
    at = state.get("at")
    if state.get("view") in ("lesson", "replay"):
        return run, at if isinstance(at, int) and not isinstance(at, bool) else 0
    return run, None


def group(room: Room) -> str:
    return f"room.{room.code}"


def presenter_group(room: Room) -> str:
    return f"room.{room.code}.presenter"


def find(code: str, browser: str = "", admit: bool = True) -> Room | None:
    """The room of this code that ``browser`` may enter: None when it has expired, or, unless
    ``browser`` presents it (or not ``admit``: the presenter key admits), when it is closed, has
    removed ``browser``, or has stopped joins and ``browser`` never joined
    (lockviz.teaching.control). Each is the same answer as no room (lockviz.teaching.codes)."""
    code = code.strip().upper()
    room = control.live_rooms().filter(pk=code).first() if 3 <= len(code) <= 8 else None
    if room is None or not admit or (browser and browser == room.presenter):
        return room
    try:
        control.admit(room, Member.objects.filter(room=room, browser=browser).first())
    except RoomRefused:
        return None
    return room


def open_room(presenter: str) -> Room:
    """A new room, with a code no other room has."""
    for _ in range(20):
        try:
            with transaction.atomic():
                return Room.objects.create(presenter=presenter, state=asdict(State()))
        except IntegrityError:
            continue  # the code was taken: draw another
    raise RuntimeError("could not find a free room code")


def show(room: Room, state: State, order: int | None = None) -> shown.Shown:
    """The presenter shows ``state`` now, unless the room holds a newer report than ``order``
    (None: the server's own move: lockviz.teaching.shown); every follower's page follows. A run
    it names must be one the presenter may see (lockviz.library.access): private is as none."""
    for field, run_id in (("run", state.run), ("beside", state.beside)):
        run = Run.objects.filter(pk=run_id).first() if run_id else None
        if run_id and (run is None or not access.may_see(room.presenter, run)):
            raise RoomRefused(f"{field}: there is no run {run_id!r}")
    now = shown.save(room, asdict(state), order)
    if now.changed:  # with its order: a room's stream sends no state older than one it sent
        broadcast.publish_frame(group(room), dict(type="state", state=room.state, order=now.order))
    return now


def join(room: Room, browser: str, name: str = "") -> Member:
    """``browser`` follows ``room`` (as it allows: lockviz.teaching.control.admit)."""
    control.admit(room, Member.objects.filter(room=room, browser=browser).first())
    said = plaintext.problem(name)
    if said is not None:
        raise RoomRefused(f"name: {said}")
    member, _ = Member.objects.get_or_create(room=room, browser=browser)
    if not room.names:
        name = ""
    if name.strip() and member.name != name.strip()[:40]:
        member.name = name.strip()[:40]
        member.save(update_fields=["name"])
    return member


def arrived(room: Room, member: Member) -> str:
    """A member's page connected to the room's stream: the id of its :class:`Presence`, which
    :func:`left` ends (the presenter sees who is present)."""
    presence = Presence.objects.create(member=member, process=recovery.process_id())
    _tell_presence(room)
    return presence.pk


def left(room: Room, presence: str) -> None:
    """That connection ended (once: a presence already gone is not counted again)."""
    if Presence.objects.filter(pk=presence).delete()[0]:
        _tell_presence(room)


def _tell_presence(room: Room) -> None:
    broadcast.publish_frame(presenter_group(room), {"type": "present", "present": present(room)})
    poll = current(room)
    if poll is not None:  # who answered among those present changes with who is present
        broadcast.publish_frame(presenter_group(room), {"type": "tally", **tally(poll)})


def _here(room: Room) -> QuerySet[Member]:  # the members with a page connected now
    return Member.objects.filter(room=room, presences__isnull=False).distinct()


def present(room: Room) -> int:
    return _here(room).count()


# -- forks shared with the presenter -------------------------------------------------------


def followed_by(browser: str) -> Room | None:
    """The room this browser joined last (where its forks may be shared), if any."""
    member = Member.objects.filter(
        browser=browser, removed=False, room__in=control.live_rooms(), room__closed__isnull=True
    )  # a room that ended, or removed this browser, takes no share
    found = member.select_related("room").order_by("-joined").first() if browser else None
    return found.room if found is not None else None


# -- polls ---------------------------------------------------------------------------------


ENDED = control.ENDED


def current(room: Room) -> Poll | None:
    return room.polls.first()


def ask(
    room: Room,
    question: str,
    choices: list[str],
    answer: str = "",
    explain: str = "",
    origin: str = "",
    run: str = "",
    step: int | None = None,
) -> Poll:
    """Put a question to the room (the one before it is over)."""
    if room.closed:  # its class has ended: nobody would see the question
        raise RoomRefused(ENDED)
    question = question.strip()
    cleaned = [c.strip()[:200] for c in choices if isinstance(c, str) and c.strip()]
    if not question:
        raise RoomRefused("question: ask something")
    for field, text in [("question", question), *(("choices", c) for c in cleaned)]:
        said = plaintext.problem(text)
        if said is not None:
            raise RoomRefused(f"{field}: {said}")
    if len(question) > 300:
        raise RoomRefused(f"question: {len(question)} characters; the most is 300")
    if not 2 <= len(cleaned) <= MAX_CHOICES or len(set(cleaned)) != len(cleaned):
        raise RoomRefused(f"choices: give 2 to {MAX_CHOICES} different answers to choose from")
    poll = Poll.objects.create(
        room=room, question=question, choices=cleaned, answer=answer,
        explain=explain, origin=origin, run=run, step=step,
    )  # fmt: skip
    broadcast.publish_frame(group(room), {"type": "poll", "poll": public(poll)})
    broadcast.publish_frame(presenter_group(room), {"type": "tally", **tally(poll)})
    return poll


def ask_checkpoint(room: Room, run: Run, index: int) -> Poll:
    """The room's poll for checkpoint ``index`` of the lesson ``run`` plays."""
    scenario = builtin().get(run.slug)
    step = scenario.steps[index] if scenario and 0 <= index < len(scenario.steps) else None
    if step is None or step.ask is None:
        raise RoomRefused(f"step: step {index + 1} of this lesson asks nothing")
    a = step.ask
    origin = f"{run.slug}#{index}"
    shown = choices.order(a.choices, f"{run.owner}:{run.slug}:{index}")  # as the lesson shows it
    return ask(room, a.question, shown, a.answer, a.explain, origin, run.pk, index)


def vote(poll: Poll, member: Member, choice: str) -> None:
    """``member`` answers (lockviz.teaching.members: only a member who joined does), while its
    page follows the room: so the answers never outnumber the students present."""
    if poll.state != Poll.State.OPEN:
        raise RoomRefused("choice: this question has been answered already: see the reveal")
    if choice not in poll.choices:
        raise RoomRefused(f"choice: {choice[:60]!r} is not one of the choices")
    if not Presence.objects.filter(member=member).exists():
        raise RoomRefused("choice: open the class's page (it follows the presenter) to answer")
    Vote.objects.update_or_create(poll=poll, browser=member.browser, defaults={"choice": choice})
    broadcast.publish_frame(presenter_group(poll.room), {"type": "tally", **tally(poll)})


def reveal(poll: Poll) -> None:
    poll.state = Poll.State.REVEALED
    poll.save(update_fields=["state"])
    broadcast.publish_frame(group(poll.room), {"type": "poll", "poll": public(poll)})


def counts(poll: Poll) -> dict[str, int]:
    found = dict(
        poll.votes.values_list("choice").annotate(n=Count("id")).values_list("choice", "n")
    )
    return {choice: int(found.get(choice, 0)) for choice in poll.choices}


def tally(poll: Poll) -> dict[str, object]:
    """What the presenter sees while the class answers: counts only, never who. ``answered``
    counts the answers of members present now, so it never exceeds ``present``; answers of
    members who have left since are in the counts, and ``note`` says how many."""
    tallied = counts(poll)
    here = _here(poll.room).values("browser")
    answered = poll.votes.filter(browser__in=here).count()
    left = sum(tallied.values()) - answered
    note = f"{left} more answered and then left" if left else ""
    return {"poll": poll.pk, "counts": tallied, "answered": answered,
            "present": present(poll.room), "note": note}  # fmt: skip


def public(poll: Poll, browser: str = "") -> dict[str, object]:
    """The poll as a follower sees it: the answer and the class's counts after the reveal."""
    shown: dict[str, object] = {
        "id": poll.pk,
        "question": poll.question,
        "choices": poll.choices,
        "state": poll.state,
    }
    if browser:
        mine = poll.votes.filter(browser=browser).values_list("choice", flat=True).first()
        shown["mine"] = mine
    if poll.run and poll.step is not None:  # a lesson's checkpoint: which (not its answer)
        shown.update(run=poll.run, step=poll.step)
    if poll.state == Poll.State.REVEALED:
        shown.update(answer=poll.answer, explain=poll.explain, counts=counts(poll))
    return shown
