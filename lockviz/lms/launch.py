"""A validated LTI launch, made lockviz's: who the person is here, their course's room, their
role in it, where the launch leads, and where their grades go back.

Called only with a launch pylti1p3 has validated (lockviz.views.lms): every fact read here is a
claim of its signed id token. The roles claim decides the role, and nothing else does:

* **Instructor** (or the platform's Administrator of the course): logged in to an account of
  their own (made at their first launch, with no password: the LMS vouches for them), and the
  presenter of the course's room (:class:`lockviz.models.CourseRoom`, made for the launch's
  context, again whenever it expired or was closed; the instructor who launched last presents).
  Their owner name is the account's, as any teacher's.
* **Learner**: not logged in; their browser's owner name becomes the LMS user's own
  (:class:`lockviz.models.LmsLearner`, random, the same at every launch), so their runs,
  attempts and progress follow them from device to device, and they are a member of the
  course's room without a code (an LMS course is its own class: no share of joins per address).

A launch whose line item (AGS) it names is kept as a :class:`GradeLink`, so a score on the item
the launch leads to (custom parameter ``item``: ``exercise:<slug>``, ``lesson:<slug>``) goes
back there (lockviz.lms.grades).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model, login, logout
from django.db import transaction
from django.http import HttpRequest
from django.urls import reverse
from lti_tool.models import LtiContext, LtiLaunch, LtiUser

from lockviz.errors import LaunchRefused
from lockviz.models import CourseRoom, GradeLink, LmsLearner, Plan, Room
from lockviz.teaching import control, members, rooms

INSTRUCTOR = {"Instructor", "Administrator", "ContentDeveloper"}  # roles that teach a course
ITEM_KINDS = ("exercise", "lesson", "plan")
BACKEND = "django.contrib.auth.backends.ModelBackend"


@dataclass(frozen=True)
class Arrival:
    """Where a launch leads, and as whom."""

    url: str
    teaches: bool
    room: Room


def roles(launch: LtiLaunch) -> set[str]:
    """The launch's roles, by their last word (``...membership#Instructor`` is Instructor)."""
    claimed = launch.roles_claim or []
    return {str(r).rsplit("#", 1)[-1].rsplit("/", 1)[-1] for r in claimed if isinstance(r, str)}


def item_of(launch: LtiLaunch) -> str:
    """The item the launch leads to (its custom ``item``), "" for none or one not understood."""
    custom = launch.get_claim("https://purl.imsglobal.org/spec/lti/claim/custom") or {}
    item = str(custom.get("item") or "")[:60] if isinstance(custom, dict) else ""
    kind, _, name = item.partition(":")
    return item if kind in ITEM_KINDS and name else ""


def learner_of(launch: LtiLaunch) -> LmsLearner:
    """The LMS user of the launch, with their owner name here (made at their first launch)."""
    user: LtiUser = launch.user
    found, _ = LmsLearner.objects.get_or_create(
        lti_user=user, defaults={"owner": secrets.token_urlsafe(16)}
    )
    return found


def course_room(context: LtiContext, presenter: str) -> Room:
    """The open room of the course ``context``; a new one when it has none (or it closed)."""
    with transaction.atomic():
        link, _ = CourseRoom.objects.select_for_update().get_or_create(context=context)
        room = link.room
        if room is None or room.closed is not None:
            room = rooms.open_room(presenter)
            link.room = room
            link.save(update_fields=["room"])
    return room


def arrive(request: HttpRequest, launch: LtiLaunch) -> Arrival:
    """Make this browser the launch's person, in their course's room; where to go now."""
    said = roles(launch)
    if not said:
        raise LaunchRefused("The launch names no role in the course: ask the LMS's administrator.")
    person = learner_of(launch)
    teaches = bool(said & INSTRUCTOR)
    if teaches:
        owner = _instructor(request, launch.user)
        room = course_room(launch.context, owner)
        if room.presenter != owner:
            Room.objects.filter(pk=room.pk).update(presenter=owner)
        control.seen(room)
        request.session["presenting"] = room.code
    else:
        if request.user.is_authenticated:
            logout(request)  # a learner's launch is the learner's, not a teacher's left logged in
        request.session["browser"] = person.owner
        room = course_room(launch.context, "")
        member = rooms.join(room, person.owner, launch.user.name or launch.user.given_name or "")
        tokens = dict(request.session.get(members.SESSION_KEY) or {})
        tokens[room.code] = members.token(member)
        request.session[members.SESSION_KEY] = tokens
    item = item_of(launch)
    if item and not teaches:
        _grade_link(launch, person.owner, item)
    return Arrival(_where(item, teaches, room), teaches, room)


def _instructor(request: HttpRequest, user: LtiUser) -> str:
    """Log the instructor in to their account (made at the first launch); their owner name."""
    account = user.auth_user
    if account is None:
        model = get_user_model()
        account = model.objects.create_user(
            username=f"lms-{user.registration_id}-{secrets.token_hex(6)}",
            first_name=(user.given_name or "")[:150],
            last_name=(user.family_name or "")[:150],
            email=user.email or "",
        )
        account.set_unusable_password()
        account.save()
        LtiUser.objects.filter(pk=user.pk).update(auth_user=account)
    login(request, account, backend=BACKEND)
    return f"account:{account.pk}"


def _grade_link(launch: LtiLaunch, owner: str, item: str) -> None:
    """Where a score on ``item`` goes: the launch's line item, when it grants posting scores."""
    claim = launch.ags_claim or {}
    lineitem = claim.get("lineitem") if isinstance(claim, dict) else None
    scopes = [str(s) for s in claim.get("scope") or []] if isinstance(claim, dict) else []
    if not isinstance(lineitem, str) or not lineitem.startswith(("http://", "https://")):
        return
    GradeLink.objects.update_or_create(
        learner=owner, item=item, lineitem=lineitem[:500],
        defaults={"registration": launch.registration, "sub": str(launch.get_claim("sub"))[:255],
                  "scopes": scopes[:10]},
    )  # fmt: skip


def _where(item: str, teaches: bool, room: Room) -> str:
    kind, _, name = item.partition(":")
    if kind == "exercise":
        return reverse("exercise", args=[name])
    if kind == "lesson":
        return reverse("lesson", args=[name])
    if kind == "plan" and teaches and Plan.objects.filter(pk=name).exists():
        return reverse("plan", args=[name])
    return reverse("room" if teaches else "follow_room", args=[room.code])
