"""A room's class at a glance: each member's progress on the items being taught, and its CSV.

The columns are the lessons and exercises of the plan the presenter is presenting (in its
order), then any other lesson or exercise a member has touched; the rows are the room's
members, and, for a room made for an LMS course, the course's learners that the LMS lists
(Names and Role Provisioning: lockviz.lms gives them as a ``roster``), those who never came
marked "not started". A cell says who answered which checkpoint how (the lesson's), or who
solved which exercise in how many attempts; the CSV holds the same words. Only a room's
presenter is shown it (lockviz.views.progress); a learner sees only their own
(``/progress/``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lockviz.exercises import attempts as judging
from lockviz.exercises import progress
from lockviz.exercises.library import title_of
from lockviz.models import Attempt, CheckpointAnswer, LessonMark, Member, Room
from lockviz.teaching import lessons

MAX_COLUMNS = 40
LESSON, EXERCISE = "lesson:", "exercise:"


@dataclass(frozen=True)
class Column:
    key: str  # "lesson:<slug>" or "exercise:<ref>"
    title: str


@dataclass(frozen=True)
class Cell:
    state: str  # done, started, solved, tried, running, new
    text: str  # a few words for the table
    detail: str = ""  # each checkpoint's answer, for the cell's fold and the CSV


@dataclass(frozen=True)
class Line:
    name: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    lines: tuple[Line, ...]

    def csv(self) -> str:
        out = io.StringIO()
        write = csv.writer(out)
        write.writerow(["learner", *(c.title for c in self.columns)])
        for line in self.lines:
            texts = [f"{c.text} ({c.detail})" if c.detail else c.text for c in line.cells]
            write.writerow([line.name, *texts])
        return out.getvalue()


def table(
    room: Room, planned: Sequence[str] = (), roster: Iterable[tuple[str, str | None]] = ()
) -> Table:
    """``room``'s class on the ``planned`` items (keys, in order), with the LMS ``roster``
    ((name, owner or None) of each learner the course lists)."""
    people = _people(room, roster)
    owners = [owner for _, owner in people if owner]
    marks = {(m.learner, m.lesson): m.state for m in LessonMark.objects.filter(learner__in=owners)}
    answers: dict[tuple[str, str], list[CheckpointAnswer]] = {}
    for a in CheckpointAnswer.objects.filter(learner__in=owners).order_by("step"):
        answers.setdefault((a.learner, a.lesson), []).append(a)
    tries: dict[tuple[str, str], list[Attempt]] = {}
    for attempt in Attempt.objects.filter(learner__in=owners):
        tries.setdefault((attempt.learner, attempt.exercise), []).append(judging.judge(attempt))
    touched = {LESSON + slug for _, slug in [*marks, *answers]} | {
        EXERCISE + ref for _, ref in tries
    }
    others = sorted(touched - set(planned), key=lambda k: (not k.startswith(LESSON), k))
    keys = [*planned, *others][:MAX_COLUMNS]  # the plan's; then lessons, then exercises
    columns = tuple(Column(key, _title(key)) for key in keys)
    lines = []
    for name, owner in people:
        cells = []
        for key in keys:
            kind, _, item = key.partition(":")
            if owner is None:
                cells.append(Cell("new", "not started (never came)"))
            elif kind + ":" == LESSON:
                cells.append(
                    _lesson(item, marks.get((owner, item)), answers.get((owner, item), []))
                )
            else:
                cells.append(_exercise(progress.tried(tries.get((owner, item), []))))
        lines.append(Line(name, tuple(cells)))
    return Table(columns, tuple(lines))


def _people(room: Room, roster: Iterable[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """(name, owner) of each member, then each learner of the roster who is not a member."""
    listed = list(roster)
    named = {owner: name for name, owner in listed if owner}
    people: list[tuple[str, str | None]] = []
    members = Member.objects.filter(room=room, removed=False).order_by("joined")
    for number, member in enumerate(members, start=1):
        name = named.get(member.browser) or member.name or f"student {number}"
        people.append((name, member.browser))
    here = {owner for _, owner in people}
    people += [(name, owner) for name, owner in listed if owner is None or owner not in here]
    return people


def _title(key: str) -> str:
    kind, _, item = key.partition(":")
    if kind + ":" == LESSON:
        found = lessons.lesson(item)
        return f"Lesson {found.number}: {found.title}" if found else f"Lesson {item}"
    return f"Exercise: {title_of(item)}"


def _lesson(slug: str, mark: str | None, given: list[CheckpointAnswer]) -> Cell:
    found = lessons.lesson(slug)
    total = found.checkpoints if found else len(given)
    right = sum(1 for a in given if a.correct)
    detail = "; ".join(
        f"checkpoint at step {a.step + 1}: "
        + (f"{a.choice} {'✔' if a.correct else '✘'}" if a.correct is not None else "skipped")
        for a in given
    )
    if mark == LessonMark.State.DONE:
        score = f" · {right} of {total} right" if total else ""
        return Cell("done", f"done{score}", detail)
    if mark or given:
        return Cell("started", f"started · {len(given)} of {total} answered", detail)
    return Cell("new", "not started")


def _exercise(tried: progress.Tried) -> Cell:
    if tried.solved:
        return Cell("solved", f"✔ {tried.words}")
    if tried.attempts:
        return Cell("tried", tried.words)
    return Cell("running" if tried.pending else "new", tried.words)
