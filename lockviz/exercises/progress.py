"""A learner's progress, kept on the server: lessons started and done, checkpoint answers,
exercises tried and solved.

A learner is an owner name (lockviz.accounts): an anonymous browser's token, a teacher's
account, or an LMS user's own name (lockviz.lms). What changes here is told, live, to the
presenters of the rooms the learner follows (a ``{"type": "progress"}`` frame on each room's
presenter group; the class view fetches the table again), and a score worth sending to an LMS
is announced on :data:`scored` (lockviz.lms listens): 1 for a solved exercise, the share of
checkpoints answered right once a lesson's checkpoints are all answered.

A browser that logs in brings its progress to the account (:func:`adopt`), as it brings its
runs and rooms (lockviz.accounts.handover).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import django.dispatch
from django.db import IntegrityError, transaction
from django.http import HttpRequest

from lockviz import accounts
from lockviz.live import broadcast
from lockviz.models import Attempt, CheckpointAnswer, LessonMark, Member
from lockviz.teaching import rooms

# Sent with ``learner``, ``item`` ("exercise:<ref>", "lesson:<slug>") and ``score`` (0..1).
scored = django.dispatch.Signal()


@dataclass(frozen=True)
class Tried:
    """A learner's way with one exercise so far."""

    solved: bool
    attempts: int  # that counted (solved or not; never an inconclusive one)
    to_solve: int  # the attempts it took, the solving one included (0 while unsolved)
    pending: bool  # a run of it is still playing

    @property
    def words(self) -> str:
        if self.solved:
            return f"solved in {self.to_solve} attempt{'s' * (self.to_solve != 1)}"
        if self.attempts:
            return f"{self.attempts} attempt{'s' * (self.attempts != 1)}, not solved yet"
        return "running its first attempt" if self.pending else "not started"


def tried(attempts: list[Attempt]) -> Tried:
    """What ``attempts`` (one learner's at one exercise, oldest first) add up to."""
    counted, to_solve = 0, 0
    for a in attempts:
        if a.outcome in (Attempt.Outcome.SOLVED, Attempt.Outcome.UNSOLVED):
            counted += 1
            if a.outcome == Attempt.Outcome.SOLVED and not to_solve:
                to_solve = counted
    pending = any(a.outcome == Attempt.Outcome.PENDING for a in attempts)
    return Tried(bool(to_solve), counted, to_solve, pending)


def learner(request: HttpRequest) -> str:
    """Who this request's progress belongs to (making a browser token if it has none)."""
    return accounts.owner(request)


def lessons(who: str) -> dict[str, str]:
    """Each lesson ``who`` has started or done: {slug: "started" | "done"}."""
    if not who:
        return {}
    return dict(LessonMark.objects.filter(learner=who).values_list("lesson", "state"))


def mark(who: str, lesson: str, state: str) -> None:
    """``who`` started or finished ``lesson`` (done stays done)."""
    if state not in LessonMark.State.values:
        return
    found = LessonMark.objects.filter(learner=who, lesson=lesson).first()
    if found is not None and (found.state == state or found.state == LessonMark.State.DONE):
        return
    try:
        with transaction.atomic():
            LessonMark.objects.update_or_create(
                learner=who, lesson=lesson, defaults={"state": state}
            )
    except IntegrityError:  # the same browser marked it twice at once: one row is enough
        return
    changed(who)


def answered(
    who: str, lesson: str, step: int, choice: str, correct: bool | None, checkpoints: list[int]
) -> None:
    """``who`` answered (or skipped: ``correct`` None) checkpoint ``step`` of ``lesson``, whose
    checkpoints are the steps ``checkpoints``: once all are answered, their score is sent."""
    try:
        with transaction.atomic():
            CheckpointAnswer.objects.update_or_create(
                learner=who, lesson=lesson, step=step,
                defaults={"choice": choice[:200], "correct": correct},
            )  # fmt: skip
    except IntegrityError:
        return
    changed(who)
    score = checkpoint_score(who, lesson, checkpoints)
    if score is not None:
        scored.send(CheckpointAnswer, learner=who, item=f"lesson:{lesson}", score=score)


def checkpoint_score(who: str, lesson: str, steps: list[int]) -> float | None:
    """The share of ``lesson``'s checkpoints (``steps``) ``who`` answered right, once every one
    is answered or skipped; None before."""
    given = dict(
        CheckpointAnswer.objects.filter(learner=who, lesson=lesson).values_list("step", "correct")
    )
    if not steps or any(step not in given for step in steps):
        return None
    return sum(1 for step in steps if given[step]) / len(steps)


def attempted(attempt: Attempt) -> None:
    """An attempt was judged: tell the class views, and score it when it solved."""
    changed(attempt.learner)
    if attempt.outcome == Attempt.Outcome.SOLVED:
        scored.send(
            Attempt, learner=attempt.learner, item=f"exercise:{attempt.exercise}", score=1.0
        )


def changed(who: str) -> None:
    """Tell the presenter of each room ``who`` follows that the class's progress moved."""
    codes = Member.objects.filter(browser=who, removed=False, room__closed__isnull=True)
    for member in codes.select_related("room"):
        broadcast.publish_frame(rooms.presenter_group(member.room), {"type": "progress"})


def adopt(request: HttpRequest | None, user: Any, **_: Any) -> None:
    """The ``user_logged_in`` receiver: this browser's progress is now the account's (what the
    account had already, for the same lesson or checkpoint, is kept)."""
    token = request.session.get("browser") if request is not None else None
    owner = accounts.owner_of(user)
    if not isinstance(token, str) or not token or not owner or token == owner:
        return
    with transaction.atomic():
        Attempt.objects.filter(learner=token).update(learner=owner)
        for model, keys in ((LessonMark, ("lesson",)), (CheckpointAnswer, ("lesson", "step"))):
            mine = set(model.objects.filter(learner=owner).values_list(*keys))
            for row in model.objects.filter(learner=token):
                if tuple(getattr(row, k) for k in keys) not in mine:
                    row.learner = owner
                    row.save(update_fields=["learner"])


def exercises(who: str) -> dict[str, Tried]:
    """Each exercise ``who`` has tried, with how it went (attempts as stored: a page that
    shows one exercise judges its attempts first)."""
    found: dict[str, list[Attempt]] = {}
    for attempt in Attempt.objects.filter(learner=who) if who else []:
        found.setdefault(attempt.exercise, []).append(attempt)
    return {ref: tried(made) for ref, made in found.items()}
