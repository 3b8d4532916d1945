"""The admin site (/admin/): teacher accounts (Django's own), and what they keep.

Make a teacher here (Users → Add) or with ``manage.py createteacher NAME``; an admin is a
teacher with "staff status". Runs are listed to find and delete one; they are not edited here.

LTI (lockviz.lms): django-lti registers its own pages for platform registrations (with their
deployments inline: a deployment must be active to launch), keys, users, contexts and
memberships; ``manage.py lti`` makes the same. Here: the scores sent back to each LMS
(``GradeLink``: the last one, and why it failed if it did), and the exercises teachers keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin
from django.forms import BaseForm
from django.http import HttpRequest

from lockviz.models import GradeLink, Room, Run, Saved, SavedExercise, SavedRun, SavedScenario

if TYPE_CHECKING:  # generic in django-stubs only: Django's own classes take no [Model]
    RunAdminBase = admin.ModelAdmin[Run]
    RoomAdminBase = admin.ModelAdmin[Room]
    SavedAdminBase = admin.ModelAdmin[Saved]
    GradeLinkAdminBase = admin.ModelAdmin[GradeLink]
else:
    RunAdminBase = RoomAdminBase = SavedAdminBase = admin.ModelAdmin
    GradeLinkAdminBase = admin.ModelAdmin

admin.site.site_header = "lockviz administration"
admin.site.site_title = "lockviz admin"


class SavedAdmin(SavedAdminBase):
    """A teacher's kept item (lockviz.models.Saved): found by its title, owner or id, filtered
    by who may see it and by its scenario's lock service and storage."""

    list_display = ("title", "user", "visibility", "backend", "storage", "saved")
    list_filter = ("visibility", "backend", "storage")
    search_fields = ("title", "id", "user__username")


@admin.register(SavedRun)
class SavedRunAdmin(SavedAdmin):
    search_fields = ("title", "run__id", "user__username")
    raw_id_fields = ("run",)


admin.site.register(SavedScenario, SavedAdmin)


@admin.register(Run)
class RunAdmin(RunAdminBase):
    list_display = ("id", "title", "status", "user", "created")
    list_filter = ("status",)
    search_fields = ("id", "title", "user__username")
    readonly_fields = [f.name for f in Run._meta.fields]


@admin.register(Room)
class RoomAdmin(RoomAdminBase):
    list_display = ("code", "presenter", "created", "closed")
    readonly_fields = ("code", "presenter", "created", "state", "state_order")

    def save_model(self, request: HttpRequest, obj: Room, form: BaseForm, change: bool) -> None:
        """Only the fields changed here: what the room shows is the presenter's, kept in order
        (lockviz.teaching.shown); a whole save would write back the state the form was read with."""
        obj.save(update_fields=form.changed_data if change else None)


@admin.register(SavedExercise)
class SavedExerciseAdmin(SavedAdmin):
    list_display = ("title", "kind", "user", "visibility", "backend", "saved")
    list_filter = ("kind", "visibility", "backend")


@admin.register(GradeLink)
class GradeLinkAdmin(GradeLinkAdminBase):
    list_display = ("item", "sub", "registration", "score", "sent", "problem")
    list_filter = ("registration",)
    search_fields = ("item", "sub", "lineitem")
    readonly_fields = [f.name for f in GradeLink._meta.fields]
