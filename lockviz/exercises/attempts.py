"""An attempt at an exercise: its run started, and judged from that run's stored verdict.

:func:`start` turns the learner's answer into a scenario (lockviz.exercises.answers: refused by
name when the exercise does not allow it), starts its run as any run starts
(lockviz.runs.launcher.launch: fair shares, the queue) and records the :class:`Attempt`.

:func:`judge` decides it once its run has ended, from what the server stored: the run's verdict
(lockviz.exercises.goals). A run still live leaves it pending; an inconclusive verdict, or a
run that failed or was interrupted, makes it *inconclusive*: it counts neither as solved nor as
failed, and the learner runs again. Judging happens when the run's end is saved
(:func:`on_run_saved`, a ``post_save`` receiver, in whichever process records the run) and
again whenever an attempt is read (a page, the class view), so an attempt whose run ended while
nobody watched is judged all the same; one conditional update decides it once. Nothing the
client sends is read: the browser asks, the server looks at the run.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from lockviz.exercises import answers, goals, progress
from lockviz.exercises.answers import Answer
from lockviz.exercises.definition import Exercise
from lockviz.models import Attempt, Run
from lockviz.runs import launcher

Outcome = Attempt.Outcome


def start(ref: str, ex: Exercise, answer: Answer, learner: str, address: str) -> Attempt:
    """Start ``learner``'s attempt at ``ex`` with ``answer`` (ExerciseRefused when the exercise
    does not allow it; NotAdmitted when the lab will not take a run now)."""
    scenario, goal = answers.scenario_for(ex, answer)
    run = launcher.launch(scenario, owner=learner, address=address)
    attempt = Attempt.objects.create(
        exercise=ref, title=ex.title, learner=learner, run=run, answer=answer, goal=goal
    )
    return judge(attempt)  # a run that ended already (it cannot, but never left pending)


def judge(attempt: Attempt) -> Attempt:
    """``attempt`` decided from its run as stored now (pending while the run is live)."""
    if attempt.outcome != Outcome.PENDING:
        return attempt
    run = Run.objects.filter(pk=attempt.run_id).first() if attempt.run_id else None
    if run is not None and run.live:
        return attempt
    if run is None:
        judged = goals.Judged(None, "its run is gone: run it again")
    elif run.status != Run.Status.FINISHED:
        judged = goals.Judged(None, f"the run did not finish ({run.status}): run it again")
    else:
        judged = goals.judge(run.verdict, attempt.goal)
    outcome = {True: Outcome.SOLVED, False: Outcome.UNSOLVED, None: Outcome.INCONCLUSIVE}
    attempt.outcome, attempt.why = outcome[judged.met], judged.why[:300]
    attempt.judged = timezone.now()
    decided = Attempt.objects.filter(pk=attempt.pk, outcome=Outcome.PENDING).update(
        outcome=attempt.outcome, why=attempt.why, judged=attempt.judged
    )
    if decided:  # this call decided it: tell whoever follows the learner, once
        transaction.on_commit(lambda: progress.attempted(attempt))
    else:
        attempt.refresh_from_db()
    return attempt


def on_run_saved(sender: type[Run], instance: Run, **_: Any) -> None:
    """``post_save`` of a run: judge the attempts it plays once it has ended."""
    if instance.status in Run.LIVE:
        return
    for attempt in Attempt.objects.filter(run=instance, outcome=Outcome.PENDING):
        judge(attempt)


def of(learner: str, ref: str) -> list[Attempt]:
    """``learner``'s attempts at exercise ``ref``, oldest first, each judged as far as it can be."""
    return [judge(a) for a in Attempt.objects.filter(learner=learner, exercise=ref)]
