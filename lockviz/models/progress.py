"""A learner's progress, kept on the server: attempts at exercises (judged from a run's
verdict), answers to a lesson's checkpoints, and where each lesson stands."""

from __future__ import annotations

from django.db import models

from lockviz.models.runs import Run


class Attempt(models.Model):
    """One try at an exercise (lockviz.exercises): the learner's answer, the run that plays it,
    and what that run's stored verdict made of it. Judged on the server only
    (lockviz.exercises.attempts), from the run's verdict: no client says it solved anything."""

    class Outcome(models.TextChoices):
        PENDING = "pending"  # its run has not ended
        SOLVED = "solved"
        UNSOLVED = "unsolved"
        INCONCLUSIVE = "inconclusive"  # counts neither way: the learner runs again

    exercise = models.CharField(max_length=40, db_index=True)  # a slug, or "saved:<id>"
    title = models.CharField(max_length=120)
    learner = models.CharField(max_length=64, db_index=True)  # an owner name (lockviz.accounts)
    run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="attempts"
    )
    answer = models.JSONField()  # lockviz.exercises.answers: steps, changes or a prediction
    goal = models.CharField(max_length=40)  # lockviz.exercises.goals: a goal or predict:<outcome>
    outcome = models.CharField(
        max_length=12, choices=Outcome.choices, default=Outcome.PENDING, db_index=True
    )
    why = models.CharField(max_length=300, blank=True)  # what the run showed, in a sentence
    created = models.DateTimeField(auto_now_add=True)
    judged = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created"]

    def __str__(self) -> str:
        return f"{self.learner} {self.exercise} {self.outcome}"


class CheckpointAnswer(models.Model):
    """A learner's answer to a lesson's checkpoint (the latest, per run of the lesson they
    answer it in): kept on the server, so a teacher sees it and the learner keeps it."""

    learner = models.CharField(max_length=64, db_index=True)
    lesson = models.CharField(max_length=100)
    step = models.PositiveIntegerField()
    choice = models.CharField(max_length=200, blank=True)  # "" when skipped
    correct = models.BooleanField(null=True)  # None when skipped
    answered = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "lesson", "step"], name="one_answer")
        ]


class LessonMark(models.Model):
    """How far a learner has come through a lesson: started, or done (done stays done)."""

    class State(models.TextChoices):
        STARTED = "started"
        DONE = "done"

    learner = models.CharField(max_length=64, db_index=True)
    lesson = models.CharField(max_length=100)
    state = models.CharField(max_length=8, choices=State.choices)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["learner", "lesson"], name="one_mark")]
