"""Presenting a lecture plan to a room: where each item takes the presenter, and what it does.

"Present this plan" opens a room (or keeps the one this browser presents) and remembers, in the
presenter's session, a :class:`Presenting`: which plan, in which room, at which item (0: before
the first, on the room's page, while the class joins). Next and Previous (one key each: the plan
bar, static/lockviz/room/plan-bar.js) go to an item; arriving at it does what the item is:

* a lesson: its walkthrough page (``/lessons/<slug>/``), which tells the room it shows it;
* a replay: the replay page at its ``from`` moment (``#seq=``), playing stops at ``to``
  (``?to=``); the replay page tells the room its position, as it does today;
* a scenario: its run is started live, as Run does (lockviz.runs.launcher.launch), the first time
  the presenter reaches it (again only by "Start again"), and the run page tells the room;
* an exercise: its page, which each student opens and does on their own (the room page's class
  view follows them);
* a poll: the room is asked it (lockviz.teaching.rooms.ask), once per presentation, and the room
  shows no run while the class answers (only :data:`POLL_TITLE`: the poll says its question);
  the presenter lands on the room's page (the tally).

The teacher's note travels in none of these: only the plan bar, on the presenter's own pages.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import asdict, dataclass, field

from django.urls import reverse

from lockviz.models import Plan, Poll, Room
from lockviz.runs import launcher
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import parse
from lockviz.teaching import rooms
from lockviz.teaching.plans import Item, items_of

SESSION_KEY = "plan"
POLL_TITLE = "A question for the class"  # the room's title while a poll item is on


@dataclass
class Presenting:
    """What the presenter's session keeps while a plan is presented."""

    plan: str
    room: str
    item: int = 0  # 1-based; 0: before the first item
    runs: dict[str, str] = field(default_factory=dict)  # item number → the run it started
    polls: dict[str, int] = field(default_factory=dict)  # item number → the poll it asked

    @classmethod
    def of(cls, session: MutableMapping[str, object]) -> Presenting | None:
        found = session.get(SESSION_KEY)
        if not isinstance(found, dict):
            return None
        try:
            return cls(**found)
        except TypeError:
            return None

    def keep(self, session: MutableMapping[str, object]) -> None:
        session[SESSION_KEY] = asdict(self)


def arrive(
    now: Presenting, plan: Plan, room: Room, number: int, owner: str, address: str, again: bool
) -> str:
    """Go to item ``number`` (0: the room's page) and do what it does; the address to show.
    A scenario's run that the lab will not take now raises its refusal (NotAdmitted)."""
    items = items_of(plan)
    number = max(0, min(number, len(items)))
    now.item = number
    if number == 0:
        return reverse("room", args=[room.code])
    item = items[number - 1]
    if item.kind == "lesson":
        return reverse("lesson", args=[item.lesson])
    if item.kind == "exercise":
        return reverse("exercise", args=[item.exercise])
    if item.kind == "replay":
        url = reverse("replay", args=[item.run])
        url += f"?to={item.seq_to}" if item.seq_to else ""
        return url + (f"#seq={item.seq_from}" if item.seq_from else "")
    if item.kind == "scenario":
        run_id = now.runs.get(str(number))
        if run_id is None or again:
            run_id = _start(item, owner, address)
            now.runs[str(number)] = run_id
        return reverse("run", args=[run_id])
    poll_id = now.polls.get(str(number))
    if poll_id is None or not Poll.objects.filter(pk=poll_id, room=room).exists():
        now.polls[str(number)] = rooms.ask(room, item.question, list(item.choices)).pk
    rooms.show(room, rooms.State(view="idle", title=POLL_TITLE))
    return reverse("room", args=[room.code])


def _start(item: Item, owner: str, address: str) -> str:
    known = builtin().get(item.slug) if item.slug else None
    scenario = known if known is not None else parse(item.scenario)
    return launcher.launch(scenario, item.slug, owner, address=address).pk


def bar(now: Presenting, plan: Plan) -> dict[str, object]:
    """What the plan bar on the presenter's pages shows: where in the plan, and the note."""
    items = items_of(plan)
    item = items[now.item - 1] if 1 <= now.item <= len(items) else None
    following = items[now.item] if now.item < len(items) else None
    return {
        "plan": plan,
        "number": now.item,
        "total": len(items),
        "previous": max(0, now.item - 1),
        "next": min(len(items), now.item + 1),
        "item": item,
        "title": item.title if item else "",
        "following": following.title if following else "",
        "live": item is not None and item.kind == "scenario",
    }
