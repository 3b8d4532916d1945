"""The admin site (/admin/): teacher accounts (Django's own), and what they keep.

Make a teacher here (Users → Add) or with ``manage.py createteacher NAME``; an admin is a
teacher with "staff status". Runs are listed to find and delete one; they are not edited here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib import admin

from lockviz.models import Room, Run, SavedRun, SavedScenario

if TYPE_CHECKING:  # generic in django-stubs only: Django's own classes take no [Model]
    RunAdminBase = admin.ModelAdmin[Run]
    RoomAdminBase = admin.ModelAdmin[Room]
    SavedRunAdminBase = admin.ModelAdmin[SavedRun]
    SavedScenarioAdminBase = admin.ModelAdmin[SavedScenario]
else:
    RunAdminBase = RoomAdminBase = SavedRunAdminBase = SavedScenarioAdminBase = admin.ModelAdmin

admin.site.site_header = "lockviz administration"
admin.site.site_title = "lockviz admin"


@admin.register(SavedRun)
class SavedRunAdmin(SavedRunAdminBase):
    list_display = ("title", "user", "visibility", "backend", "storage", "saved")
    list_filter = ("visibility", "backend", "storage")
    search_fields = ("title", "run__id", "user__username")
    raw_id_fields = ("run",)


@admin.register(SavedScenario)
class SavedScenarioAdmin(SavedScenarioAdminBase):
    list_display = ("title", "user", "visibility", "backend", "storage", "saved")
    list_filter = ("visibility", "backend", "storage")
    search_fields = ("title", "id", "user__username")


@admin.register(Run)
class RunAdmin(RunAdminBase):
    list_display = ("id", "title", "status", "user", "created")
    list_filter = ("status",)
    search_fields = ("id", "title", "user__username")
    readonly_fields = [f.name for f in Run._meta.fields]


@admin.register(Room)
class RoomAdmin(RoomAdminBase):
    list_display = ("code", "presenter", "created", "closed")
    readonly_fields = ("code", "presenter", "created", "state")
