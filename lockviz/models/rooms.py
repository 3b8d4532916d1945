"""Rooms: a class following one presenter, its members and their open pages, its polls and
votes, and the runs shared with it."""

from __future__ import annotations

import datetime as dt
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from lockviz.models.runs import Run


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
