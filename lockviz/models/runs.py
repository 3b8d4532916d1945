"""Runs: a run with its scenario, status and verdict, and every event it recorded (with its
words, made once), so it can be replayed later; what a row says of itself reads the narrator."""

from __future__ import annotations

import secrets
from functools import cached_property

from django.conf import settings
from django.db import models
from django.db.models.functions import Cast

from lockviz import narrator
from lockviz.scenarios.schema import Scenario, parse


def new_run_id() -> str:
    return secrets.token_hex(5)


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        FAILED = "failed"
        INTERRUPTED = "interrupted"  # the app running it stopped (killed, restarted)
        CANCELLED = "cancelled"  # it waited for a slot with nobody watching

    LIVE = (Status.QUEUED, Status.RUNNING)
    GIVEN_UP = (Status.INTERRUPTED, Status.CANCELLED)  # ended without a verdict, for good

    id = models.CharField(primary_key=True, max_length=16, default=new_run_id, editable=False)
    slug = models.CharField(max_length=100, blank=True)  # the built-in scenario it came from
    title = models.CharField(max_length=200)
    scenario = models.JSONField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    verdict = models.JSONField(null=True, blank=True)
    expect_met = models.BooleanField(null=True)
    mismatches = models.JSONField(default=list, blank=True)
    error = models.TextField(blank=True)
    created = models.DateTimeField(auto_now_add=True)
    # When it left the queue for the lab (null: it has not, or it ran before this was kept):
    # how long it waited, and behind which runs (lockviz.runs.waits).
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    # Who may change it while it is live: the browser (session) that started it, or the teacher
    # account logged in there ("account:<id>", the same on every device: lockviz.accounts), who
    # is then its ``user`` too.
    owner = models.CharField(max_length=64, blank=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="runs",
    )
    # The app process that runs it ("host:pid:start ticks"), and when that process last said
    # it still does: a live run whose process is gone is interrupted (lockviz.runs.recovery).
    host = models.CharField(max_length=100, blank=True)
    alive_at = models.DateTimeField(null=True, blank=True)
    watchers = models.IntegerField(default=0)  # viewers connected now (a queued run needs one)
    # A "What if…?" fork: the run it was forked from, and the moment it parts from it (an event
    # of the parent, and that event's time on the run's axis). Steps up to there are the same.
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="forks"
    )
    diverged_seq = models.PositiveIntegerField(null=True, blank=True)
    diverged_ms = models.FloatField(null=True, blank=True)
    # The room whose presenter its owner shared it with ("" when it is private).
    shared_with = models.CharField(max_length=8, blank=True, db_index=True)
    # Whose share of the lab it takes while live (lockviz.shares.runs): the address it came
    # from, or the room whose allowance it counts against ("" when none: the address's share).
    address = models.CharField(max_length=45, blank=True, db_index=True)
    allowance = models.CharField(max_length=8, blank=True, db_index=True)
    open_ended = models.BooleanField(default=False)  # a free-play session

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.title} ({self.id})"

    @property
    def live(self) -> bool:
        return self.status in self.LIVE

    @cached_property
    def parsed_scenario(self) -> Scenario:
        """Its scenario, checked once (the one place a run's scenario is parsed), or
        :class:`~lockviz.scenarios.schema.ScenarioError` for one an older schema wrote. It may
        have no steps: a free-play session's are the learner's clicks (only such a session may
        start without any: :func:`~lockviz.scenarios.schema.startable`)."""
        return parse(self.scenario, allow_empty=True)

    @property
    def fencing(self) -> bool:
        return bool(self.scenario.get("fencing", True))

    @property
    def storage_kind(self) -> str:
        """What its storage checked (runs stored before storage kinds say it with fencing)."""
        kind = self.scenario.get("storage")
        return kind if isinstance(kind, str) else ("fenced" if self.fencing else "plain")

    def as_export(self, events: bool = True) -> dict[str, object]:
        """The run as ``/runs/<id>/export.json`` has it (and as the import reads it back);
        without ``events``, all of it but them (:meth:`event_texts` holds them)."""
        exported: dict[str, object] = {
            "run_id": self.pk,
            "scenario": self.scenario,
            "status": self.status,
            "verdict": self.verdict,
            "expect_met": self.expect_met,
            # An inconclusive run's expect was not judged: neither met nor contradicted.
            "inconclusive": (self.verdict or {}).get("inconclusive") or "",
            "events": self.events_after(0) if events else [],
        }
        if self.parent_id is not None or self.diverged_ms is not None:
            exported["fork"] = {
                "parent": self.parent_id,
                "diverged_seq": self.diverged_seq,
                "diverged_ms": self.diverged_ms,
            }
        return exported

    def event_texts(self) -> list[str]:
        """Its events as the database keeps them, JSON text, in order: read without decoding
        (a worker process decodes them: lockviz.edge.workers)."""
        rows = self.events.order_by("seq").annotate(text=Cast("data", models.TextField()))
        return [str(text) for text in rows.values_list("text", flat=True)]

    def events_after(self, seq: int) -> list[dict[str, object]]:
        return [e.data for e in self.events.filter(seq__gt=seq).order_by("seq")]

    def said_after(self, seq: int, limit: int | None = None) -> list[narrator.Told]:
        """The events after ``seq`` as viewers get them, each with its words (``said``): at
        most ``limit`` of them.

        Words may depend on earlier events (a write's reply names its request's value), so they
        are made once, in order, and stored with each event: as a run is recorded, or imported.
        Reading them costs what reading the rows costs, wherever the reader starts. A run stored
        before words were kept is narrated once, the first time it is read (:meth:`narrate`).
        """
        rows = self.events.filter(seq__gt=seq).order_by("seq").values_list("data", "said")
        found = list(rows if limit is None else rows[:limit])
        if any(said is None for _, said in found):
            self.narrate()
            found = list(rows if limit is None else rows[:limit])
        return [{**data, "said": said or {}} for data, said in found]

    def narrate(self) -> None:
        """Store the words of each of its events, from its first (see :meth:`said_after`)."""
        told = narrator.Narrator(self.scenario.get("backend"))
        stored = list(self.events.order_by("seq").only("pk", "data"))
        for event in stored:
            event.said = told.said(event.data if isinstance(event.data, dict) else {}).as_data()
        RunEvent.objects.bulk_update(stored, ["said"], batch_size=500)

    @property
    def headline(self) -> tuple[str, str]:
        """The outcome in one line and its tone, as every page says it."""
        election = narrator.electing(self.scenario)
        return narrator.headline(
            self.verdict, self.error, self.status, self.storage_kind, election=election
        )

    @property
    def expectation(self) -> tuple[str, str] | None:
        """What became of the scenario's prediction (met, missed, not judged), and its tone."""
        if not self.scenario.get("expect"):
            return None
        return narrator.expectation(self.verdict, self.expect_met, self.mismatches)

    @property
    def facts(self) -> list[tuple[str, str]]:
        return narrator.facts(self.verdict or {}, self.storage_kind)


class RunEvent(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    t_ms = models.FloatField()
    actor = models.CharField(max_length=40)
    kind = models.CharField(max_length=40)
    data = models.JSONField()  # the whole event (lockviz.lab.events)
    # Its words (lockviz.narrator.Said.as_data), made once, from the events before it; null
    # only for events stored before words were (Run.said_after makes them on first reading).
    said = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="one_event_per_seq")]

    def __str__(self) -> str:
        return f"{self.run_id}#{self.seq} {self.actor} {self.kind}"
