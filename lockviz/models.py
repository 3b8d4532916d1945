"""Every table of the app: runs with all their events and verdicts (so they can be replayed
later), rooms with their members, polls, votes and shares, lecture plans, and teachers'
libraries.

One module past the usual ~300 lines, on purpose: it is where Django and a reader look for the
app's tables, and each is a short declaration; the rules about them live in the features
(lockviz.runs, lockviz.teaching, lockviz.library).
"""

from __future__ import annotations

import datetime as dt
import secrets
from functools import cached_property

from django.conf import settings
from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone

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


def new_room_code() -> str:
    """Six characters a class can read off a projector: no 0/O, 1/I/L, 2/Z, 5/S, 8/B, 6/G.

    23⁶ ≈ 148 M codes: with look-ups throttled per address (lockviz.teaching.codes), finding
    one of 100 open rooms by guessing takes longer than a term (docs/reliability.md).
    """
    return "".join(secrets.choice(ROOM_ALPHABET) for _ in range(ROOM_CODE_LENGTH))


ROOM_CODE_LENGTH = 6


ROOM_ALPHABET = "ACDEFHJKMNPQRTUVWXY3479"


def rooms_idle_before() -> dt.datetime:
    """A room whose presenter was last there before this is gone (``LOCKVIZ_ROOM_IDLE_HOURS``:
    lockviz.teaching.control), and gives nobody a share (lockviz.shares.runs)."""
    return timezone.now() - dt.timedelta(hours=settings.LOCKVIZ_ROOM_IDLE_HOURS)


def default_runs_in_all() -> int:
    """A new room's allowance for its class: within what the lab runs at once."""
    return min(20, int(settings.LOCKVIZ_MAX_RUNS))


class Room(models.Model):
    """A class following one presenter: what the presenter shows, and who follows."""

    code = models.CharField(primary_key=True, max_length=8, default=new_room_code)
    presenter = models.CharField(max_length=64)  # the presenter's browser (see views.browser)
    created = models.DateTimeField(auto_now_add=True)
    # What the presenter shows now (lockviz.teaching.rooms.State as JSON): every follower's
    # page shows the same, and a late joiner starts from it. ``state_order`` is the order key
    # of the report it came from: an older report never replaces it (lockviz.teaching.shown).
    state = models.JSONField(default=dict)
    state_order = models.BigIntegerField(default=0)
    # The presenter's control (lockviz.teaching.control): whether new students may join,
    # whether they give a name, when the room was closed, when its presenter was last there
    # (a room idle for LOCKVIZ_ROOM_IDLE_HOURS is gone), and the presenter key's hash.
    joins_open = models.BooleanField(default=True)
    names = models.BooleanField(default=True)
    closed = models.DateTimeField(null=True, blank=True)
    presenter_seen = models.DateTimeField(default=timezone.now, db_index=True)
    key_hash = models.CharField(max_length=64, blank=True)
    # The room's allowance of the lab, set by its presenter: whether students may start runs of
    # their own, how many each may have live, and how many the class may in all. A member's
    # runs count against it instead of their address's share (a class behind one NAT).
    student_runs = models.BooleanField(default=False)
    runs_each = models.PositiveSmallIntegerField(default=1)
    runs_in_all = models.PositiveSmallIntegerField(default=default_runs_in_all)
    # How many members may join from one address (a class behind one NAT needs many; a script
    # stuffing the ballot needs them too): the presenter sees who shares an address, and may
    # lower this below LOCKVIZ_MEMBERS_PER_ADDRESS (lockviz.teaching.control).
    members_per_address = models.PositiveSmallIntegerField(null=True, blank=True)

    def __str__(self) -> str:
        return f"room {self.code}"


class Member(models.Model):
    """One student's browser in a room."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="members")
    browser = models.CharField(max_length=64)
    name = models.CharField(max_length=40, blank=True)
    address = models.CharField(max_length=45, blank=True)  # it joined from (lockviz.shares)
    joined = models.DateTimeField(auto_now_add=True)
    removed = models.BooleanField(default=False)  # by the presenter: it may not come back

    class Meta:
        constraints = [models.UniqueConstraint(fields=["room", "browser"], name="one_member")]


def new_presence_id() -> str:
    return secrets.token_hex(8)


class Presence(models.Model):
    """One live connection of a member's page to its room's stream: a member is present while
    it has one (lockviz.teaching.rooms.present). Not a counter: the stream deletes its own row
    however it ends (lockviz.consumers.stream), and the rows of an app process that died with
    streams open are removed by the keeper (lockviz.runs.recovery), by the ``process`` named."""

    id = models.CharField(primary_key=True, max_length=16, default=new_presence_id)
    member = models.ForeignKey(Member, on_delete=models.CASCADE, related_name="presences")
    process = models.CharField(max_length=100, db_index=True)  # recovery.process_id()
    opened = models.DateTimeField(auto_now_add=True)


class Poll(models.Model):
    """A question to the room: a lesson's checkpoint, or one the presenter typed."""

    class State(models.TextChoices):
        OPEN = "open"
        REVEALED = "revealed"

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="polls")
    question = models.CharField(max_length=300)
    choices = models.JSONField()  # 2 to 6 strings
    answer = models.CharField(max_length=200, blank=True)  # a checkpoint's: kept until revealed
    explain = models.TextField(blank=True)
    origin = models.CharField(max_length=120, blank=True)  # "<lesson slug>#<step index>"
    # A checkpoint's: the lesson run it asks about and the step (its answer, explanation and
    # narration are withheld from the class until this poll is revealed: teaching.reveals).
    run = models.CharField(max_length=16, blank=True, db_index=True)
    step = models.IntegerField(null=True, blank=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]


class Vote(models.Model):
    """One browser's answer to a poll: one each, changeable until the reveal."""

    poll = models.ForeignKey(Poll, on_delete=models.CASCADE, related_name="votes")
    browser = models.CharField(max_length=64)
    choice = models.CharField(max_length=200)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["poll", "browser"], name="one_vote")]


class Share(models.Model):
    """A student's What if…? fork shared with a room: listed for the presenter once approved."""

    class State(models.TextChoices):
        WAITING = "waiting"  # for the presenter's approval
        LISTED = "listed"
        HIDDEN = "hidden"

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="shares")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="shares")
    state = models.CharField(max_length=8, choices=State.choices, default=State.WAITING)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created"]
        constraints = [models.UniqueConstraint(fields=["room", "run"], name="one_share")]


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


class SavedExercise(Saved):
    """An exercise a teacher wrote, kept in their library: JSON lockviz.exercises.definition
    accepts (a scenario, a goal, what may change)."""

    id = models.CharField(primary_key=True, max_length=16, default=new_saved_id, editable=False)
    exercise = models.JSONField()
    kind = models.CharField(max_length=8)  # break, fix or predict: the library's filter
    updated = models.DateTimeField(auto_now=True)

    class Meta(Saved.Meta):
        default_related_name = "saved_exercises"


class LmsLearner(models.Model):
    """A person an LTI launch vouched for (django-lti's LtiUser, one per platform's ``sub``), and
    the owner name their browsers take here (lockviz.lms): the same at every launch, on every
    device, so their runs, rooms and progress follow them. An instructor has an account too
    (the LtiUser's ``auth_user``), logged in at each launch: their owner name is the account's."""

    lti_user = models.OneToOneField(
        "lti_tool.LtiUser", on_delete=models.CASCADE, related_name="lockviz"
    )
    owner = models.CharField(max_length=64, unique=True)

    def __str__(self) -> str:
        return f"{self.lti_user} as {self.owner}"


class CourseRoom(models.Model):
    """The room of an LMS course (an LTI context): its instructors present it, its learners are
    its members without a code. A room gone idle is made again at the next launch."""

    context = models.OneToOneField(
        "lti_tool.LtiContext", on_delete=models.CASCADE, related_name="lockviz_room"
    )
    room = models.ForeignKey(Room, null=True, blank=True, on_delete=models.SET_NULL)


class GradeLink(models.Model):
    """Where a learner's score on one item goes back to the LMS: the line item the launch named
    (LTI Assignment and Grade Services), and what was last sent there."""

    learner = models.CharField(max_length=64, db_index=True)
    item = models.CharField(max_length=60)  # "exercise:<ref>" or "lesson:<slug>"
    registration = models.ForeignKey("lti_tool.LtiRegistration", on_delete=models.CASCADE)
    sub = models.CharField(max_length=255)  # the LMS's id of the learner
    lineitem = models.URLField(max_length=500)
    scopes = models.JSONField(default=list)  # the AGS scopes the launch granted
    score = models.FloatField(null=True, blank=True)  # the last score sent, 0..1
    sent = models.DateTimeField(null=True, blank=True)
    problem = models.CharField(max_length=300, blank=True)  # why the last send failed

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "item", "lineitem"], name="one_grade_link")
        ]
