"""What an LMS launch (LTI 1.3, lockviz.lms) keeps: its learners, each course's room, and
where each score goes back."""

from __future__ import annotations

from django.db import models

from lockviz.models.rooms import Room


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
