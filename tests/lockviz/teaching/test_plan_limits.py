"""Plans within bounds: made at a rate per address, an anonymous browser's pruned once untouched
for the retention period (their replays then kept no more), and their notes the owner's alone
unless the owner shares them.

40 plans of 30 items came from 40 fresh cookie jars in 5.9 s, were never pruned, and a replay
item kept its run from the retention prune for ever; a plan's notes were readable by anyone
with its link although its page said only the presenter sees them.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.test.utils import override_settings
from django.utils import timezone

from lockviz.models import Plan, Run

pytestmark = pytest.mark.django_db
LESSON = "gc-pause-fenced"
FORM = {"title": "T", "items-0-kind": "lesson", "items-0-lesson": LESSON,
        "items-0-note": "the secret note"}  # fmt: skip


@override_settings(LOCKVIZ_PLANS_PER_HOUR=3)
def test_plans_are_made_at_a_rate_per_address() -> None:
    made = [Client(REMOTE_ADDR="10.47.0.1").post("/plans/new/", FORM) for _ in range(4)]
    assert [m.status_code for m in made] == [302, 302, 302, 429]
    assert "LOCKVIZ_PLANS_PER_HOUR" in made[3].text
    plan = Plan.objects.first()
    assert plan is not None
    copier = Client(REMOTE_ADDR="10.47.0.1")
    assert copier.post(f"/plans/{plan.pk}/copy").status_code == 429
    assert Client(REMOTE_ADDR="10.47.0.2").post("/plans/new/", FORM).status_code == 302


def test_an_anonymous_plan_untouched_for_the_retention_period_is_pruned_with_its_hold_on_runs(
    settings: object,
) -> None:
    old = timezone.now() - dt.timedelta(days=40)
    run = Run.objects.create(title="replayed", scenario={}, status=Run.Status.FINISHED)
    items = [{"kind": "replay", "run": run.pk, "note": ""}]
    anonymous = Plan.objects.create(title="a", owner="a browser", items=items)
    teachers = Plan.objects.create(title="t", owner="account:7", items=items)
    fresh = Plan.objects.create(title="f", owner="another browser", items=[])
    Plan.objects.filter(pk__in=[anonymous.pk, teachers.pk]).update(updated=old)
    Run.objects.filter(pk=run.pk).update(created=old)
    call_command("prune", verbosity=0)
    assert set(Plan.objects.values_list("pk", flat=True)) == {teachers.pk, fresh.pk}
    assert Run.objects.filter(pk=run.pk).exists()  # a teacher's plan replays it
    teachers.delete()
    call_command("prune", verbosity=0)
    assert not Run.objects.filter(pk=run.pk).exists()


def test_a_plans_notes_are_its_owners_unless_shared() -> None:
    owner = Client()
    plan_path = owner.post("/plans/new/", FORM)["Location"]
    plan = Plan.objects.get()
    assert "the secret note" in owner.get(plan_path).text
    stranger = Client()
    assert "the secret note" not in stranger.get(plan_path).text
    exported = stranger.get(f"/plans/{plan.pk}/export.json").json()
    assert "the secret note" not in json.dumps(exported)
    copy = stranger.post(f"/plans/{plan.pk}/copy")["Location"]
    assert "the secret note" not in stranger.get(copy).text
    assert "the secret note" in json.dumps(owner.get(f"/plans/{plan.pk}/export.json").json())
    assert stranger.post(f"/plans/{plan.pk}/notes", {"share_notes": "on"}).status_code == 403
    assert owner.post(f"/plans/{plan.pk}/notes", {"share_notes": "on"}).status_code == 302
    assert "the secret note" in stranger.get(plan_path).text
