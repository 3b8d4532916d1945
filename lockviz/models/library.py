"""A teacher's things: lecture plans, and the library (runs, scenarios and exercises kept with
a title and a visibility; lockviz.library)."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from lockviz.models.runs import Run


def new_plan_id() -> str:
    return secrets.token_hex(6)  # 48 bits: its link is how it is shared (read-only)


class Plan(models.Model):
    """A teacher's lecture plan: a title and an ordered list of items (lockviz.teaching.plans
    reads and checks them: a lesson, a replay, a scenario to run live, a poll, each with the
    teacher's own note).

    Owned as runs and rooms are, by the browser that made it (``owner``: see views.browser);
    who may change it is decided in one place, lockviz.teaching.plans.may_edit. An account
    (a ``user`` foreign key) and a ``visibility`` can be added beside ``owner`` without
    changing ``items``.
    """

    id = models.CharField(primary_key=True, max_length=16, default=new_plan_id, editable=False)
    title = models.CharField(max_length=120)
    items = models.JSONField(default=list)  # lockviz.teaching.plans.Item.as_data, in order
    owner = models.CharField(max_length=64, blank=True, db_index=True)
    copied_from = models.CharField(max_length=16, blank=True)  # the plan it was copied from
    # Its notes are its owner's alone unless the owner shares them with whoever has the link
    # (lockviz.teaching.plans.readable: the page, export.json and a copy).
    share_notes = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated"]

    def __str__(self) -> str:
        return f"{self.title} ({self.id})"

    def replayed(self) -> list[str]:
        """The runs this plan's replay items show."""
        return [i["run"] for i in self.items if isinstance(i, dict) and i.get("kind") == "replay"]

    @classmethod
    def runs_replayed(cls) -> set[str]:
        """The runs some plan replays: kept as long as a plan uses them (recovery.prune). An
        anonymous browser's plan is itself pruned once untouched for the retention period
        (lockviz.teaching.plans.prune), so its runs are not kept for ever."""
        return {run for plan in cls.objects.only("items").iterator() for run in plan.replayed()}


def new_saved_id() -> str:
    return secrets.token_hex(6)


class Visibility(models.TextChoices):
    """Who may open a saved item by its link, and whether the index's gallery lists it."""

    PRIVATE = "private", "Private: only you (and a class you present it to)"
    UNLISTED = "unlisted", "Unlisted: anyone with the link"
    PUBLIC = "public", "Public: anyone, and listed in the gallery"


class Saved(models.Model):
    """What a teacher keeps in their library (lockviz.library): never pruned, until they delete
    it. ``backend`` and ``storage`` are its scenario's, kept for the library's search."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    title = models.CharField(max_length=200)
    visibility = models.CharField(
        max_length=8, choices=Visibility.choices, default=Visibility.PRIVATE, db_index=True
    )
    backend = models.CharField(max_length=20, blank=True)
    storage = models.CharField(max_length=20, blank=True)
    saved = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-saved"]

    def __str__(self) -> str:
        return f"{self.title} ({self.visibility})"


class SavedRun(Saved):
    """A run kept in a library: it, its events and its verdict stay until its teacher deletes
    it (lockviz.runs.recovery.prune leaves it)."""

    run = models.OneToOneField(
        Run, on_delete=models.CASCADE, primary_key=True, related_name="saved"
    )

    class Meta(Saved.Meta):
        default_related_name = "saved_runs"


class SavedScenario(Saved):
    """A scenario kept in a library: JSON that lockviz.scenarios.schema accepts."""

    id = models.CharField(primary_key=True, max_length=16, default=new_saved_id, editable=False)
    scenario = models.JSONField()
    updated = models.DateTimeField(auto_now=True)

    class Meta(Saved.Meta):
        default_related_name = "saved_scenarios"


class SavedExercise(Saved):
    """An exercise a teacher wrote, kept in their library: JSON lockviz.exercises.definition
    accepts (a scenario, a goal, what may change)."""

    id = models.CharField(primary_key=True, max_length=16, default=new_saved_id, editable=False)
    exercise = models.JSONField()
    kind = models.CharField(max_length=8)  # break, fix or predict: the library's filter
    updated = models.DateTimeField(auto_now=True)

    class Meta(Saved.Meta):
        default_related_name = "saved_exercises"
