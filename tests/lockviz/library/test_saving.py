"""Save keeps a run for good (prune leaves it), and who may open a saved item is its visibility.

Runs here are the lab's recorded runs of built-ins, stored as an import stores them: what is
tested is what the library does with a run, not the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.db import connection
from django.test import Client

from lockviz import accounts
from lockviz.consumers.arrivals import read
from lockviz.library import saving
from lockviz.models import Plan, Run, RunEvent, SavedRun, SavedScenario, Visibility
from lockviz.runs import launcher, recovery
from lockviz.scenarios.schema import parse
from tests.conftest import ROOT, browser_of, builtin_json
from tests.lockviz.library.helpers import recorded_run, teacher, teachers_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_saved_run_survives_prune_days_0_and_an_unsaved_one_does_not() -> None:
    ada, _ = teacher("ada")
    kept, other = teachers_run(ada), teachers_run(ada, "gc-pause-unfenced")
    saving.save_run(ada, kept)
    env = {**os.environ, "LOCKVIZ_DB": str(connection.settings_dict["NAME"])}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "manage.py", "prune", "--days", "0"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip  # the command as an operator types it, on this test's database
    assert done.returncode == 0, done.stderr
    assert "Removed 1 run older than 0 days." in done.stdout
    assert list(Run.objects.values_list("pk", flat=True)) == [kept.pk]
    assert RunEvent.objects.filter(run=kept).count() > 10
    assert not RunEvent.objects.filter(run_id=other.pk).exists()
    saving.forget_run(ada, kept.pk)  # deleted from the library: gone with its events
    assert not Run.objects.exists() and not RunEvent.objects.exists()


def test_save_on_a_run_page_keeps_it_for_its_teacher_with_a_visibility() -> None:
    ada, client = teacher("ada")
    run = teachers_run(ada)
    page = client.get(f"/runs/{run.pk}/replay/").content.decode()
    assert 'id="save-run"' in page
    response = client.post(f"/runs/{run.pk}/save", {"visibility": "unlisted"})
    assert response.status_code == 302
    saved = SavedRun.objects.get(run=run)
    assert (saved.user, saved.visibility, saved.backend, saved.storage) == (
        ada,
        "unlisted",
        "redis",
        "fenced",
    )
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Saved in" in page and 'id="save-run"' not in page
    assert client.post(f"/runs/{run.pk}/save", {"visibility": "secret"}).status_code == 400


def test_an_anonymous_save_leads_to_log_in_and_back(client: Client) -> None:
    run = recorded_run(owner=browser_of(client))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="save-login"' in page and "/accounts/login/?next=" in page
    response = client.post(f"/runs/{run.pk}/save", {"visibility": "private", "back": "/x/"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert not SavedRun.objects.exists()


def test_a_teacher_may_not_save_a_run_another_browser_started() -> None:
    _, client = teacher("ada")
    run = recorded_run(owner="someone-else")
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Another browser started this run" in page
    response = client.post(f"/runs/{run.pk}/save", {"visibility": "private"})
    assert response.status_code == 400 and "Only who started this run" in response.content.decode()
    assert not SavedRun.objects.exists()


def test_visibility_private_unlisted_public_for_another_teacher_and_anyone() -> None:
    ada, ada_client = teacher("ada")
    _, bob = teacher("bob")
    anyone = Client()
    runs = {v: teachers_run(ada) for v in Visibility.values}
    for shown, run in runs.items():
        saving.save_run(ada, run, shown, f"{shown} replay")
    private, unlisted, public = (runs[v] for v in ("private", "unlisted", "public"))
    for path in ("/runs/{}/", "/runs/{}/replay/", "/runs/{}/export.json", "/runs/{}/export.mmd"):
        assert ada_client.get(path.format(private.pk)).status_code == 200, path
        assert bob.get(path.format(private.pk)).status_code == 404, path
        assert anyone.get(path.format(private.pk)).status_code == 404, path
        assert anyone.get(path.format(unlisted.pk)).status_code == 200, path
    gallery = anyone.get("/").content.decode()
    assert "public replay" in gallery
    assert "unlisted replay" not in gallery and "private replay" not in gallery
    assert anyone.get(f"/runs/{public.pk}/replay/").status_code == 200


def test_a_private_run_opens_for_the_class_its_teacher_presents_to() -> None:
    ada, ada_client = teacher("ada")
    run = teachers_run(ada)
    saving.save_run(ada, run, Visibility.PRIVATE)
    room = ada_client.post("/rooms/")
    code = room["Location"].rstrip("/").rsplit("/", 1)[-1]
    student = Client()
    assert student.get(f"/runs/{run.pk}/replay/").status_code == 404
    student.post(f"/r/{code}", {"name": "sam"})
    assert student.get(f"/runs/{run.pk}/replay/").status_code == 200


def test_the_index_lists_only_the_visitors_own_unsaved_runs(client: Client) -> None:
    mine = recorded_run(owner=browser_of(client))
    theirs = recorded_run("gc-pause-unfenced", owner="another-browser")
    page = client.get("/").content.decode()
    assert f"/runs/{mine.pk}/" in page and f"/runs/{theirs.pk}/" not in page
    ada, ada_client = teacher("ada")
    hers = teachers_run(ada)
    page = ada_client.get("/").content.decode()
    assert f"/runs/{hers.pk}/" in page and f"/runs/{mine.pk}/" not in page


def test_saved_scenarios_are_checked_by_the_schema_and_searched() -> None:
    ada, client = teacher("ada")
    broken = {**builtin_json("gc-pause-fenced"), "ttl_ms": -5}
    response = client.post("/library/scenarios/", {"scenario": json.dumps(broken)})
    assert response.status_code == 400 and "ttl_ms" in response.content.decode()
    good = builtin_json("gc-pause-fenced")
    response = client.post(
        "/library/scenarios/",
        {"scenario": json.dumps(good), "title": "My GC pause", "visibility": "unlisted"},
    )
    saved = SavedScenario.objects.get()
    assert response["Location"] == f"/scenarios/saved/{saved.pk}/"
    assert (saved.backend, saved.storage, saved.user) == ("redis", "fenced", ada)
    assert Client().get(f"/scenarios/saved/{saved.pk}/").status_code == 200  # unlisted
    saving.save_run(ada, teachers_run(ada, "etcd-happy"))
    page = client.get("/library/", {"q": "gc pause"}).content.decode()
    assert "My GC pause" in page and "etcd" not in page.split("Saved runs")[1].split("</table>")[0]
    page = client.get("/library/", {"backend": "etcd"}).content.decode()
    assert "My GC pause" not in page
    page = client.get("/library/", {"storage": "fenced", "q": "x" * 5000}).content.decode()
    assert "No saved run matches" in page  # a query past its bound is cut, not refused


def test_delete_asks_first_then_deletes() -> None:
    ada, client = teacher("ada")
    run = teachers_run(ada)
    saving.save_run(ada, run, name="To go")
    page = client.get(f"/library/runs/{run.pk}/delete").content.decode()
    assert "Delete “To go”?" in page and 'id="confirm-delete"' in page
    assert Run.objects.filter(pk=run.pk).exists()
    _, bob = teacher("bob")
    assert bob.post(f"/library/runs/{run.pk}/delete").status_code == 403
    response = client.post(f"/library/runs/{run.pk}/delete")
    assert response.status_code == 302 and not Run.objects.filter(pk=run.pk).exists()
    assert "Deleted" in client.get("/library/").content.decode()


def test_a_teachers_run_is_theirs_on_a_second_device() -> None:
    ada, _ = teacher("ada")
    run = teachers_run(ada)
    assert run.user == ada and run.owner == accounts.owner_of(ada)
    second = Client()
    second.force_login(ada)
    assert 'id="save-run"' in second.get(f"/runs/{run.pk}/").content.decode()
    assert 'id="save-run"' not in Client().get(f"/runs/{run.pk}/").content.decode()


def test_a_private_runs_stream_is_as_if_there_were_none_for_anyone_else() -> None:
    ada, _ = teacher("ada")
    run = teachers_run(ada)
    saving.save_run(ada, run, Visibility.PRIVATE)
    assert read(run.pk, [(0, "a-stranger"), (0, "")]) == [None, None]
    [found] = read(run.pk, [(0, accounts.owner_of(ada))])
    assert found is not None and len(found.told) > 10
    saving.save_run(ada, run, Visibility.UNLISTED)
    assert read(run.pk, [(0, "a-stranger")]) != [None]


def test_every_page_of_a_run_offers_save() -> None:
    ada, client = teacher("ada")
    run = teachers_run(ada)
    Run.objects.filter(pk=run.pk).update(open_ended=True, slug="free-play")
    for path in (f"/runs/{run.pk}/", f"/runs/{run.pk}/replay/", f"/play/{run.pk}/"):
        assert 'id="save-run"' in client.get(path).content.decode(), path


def test_back_after_a_save_never_leaves_the_site() -> None:
    ada, client = teacher("ada")
    run = teachers_run(ada)
    for back in ("https://evil.example/", "//evil.example/", "/\\evil.example/"):
        response = client.post(f"/runs/{run.pk}/save", {"visibility": "private", "back": back})
        assert response["Location"] == f"/runs/{run.pk}/", back
    response = client.post(f"/runs/{run.pk}/save", {"visibility": "public", "back": "/library/"})
    assert response["Location"] == "/library/"


def test_a_run_started_while_logged_in_records_the_teacher() -> None:
    ada, _ = teacher("ada")
    run = launcher.create_run(parse(builtin_json("gc-pause-fenced")), owner=accounts.owner_of(ada))
    assert (run.owner, run.user) == (f"account:{ada.pk}", ada)
    anonymous = launcher.create_run(parse(builtin_json("gc-pause-fenced")), owner="Zk3-_abc")
    assert anonymous.user is None
    Run.objects.filter(pk__in=[run.pk, anonymous.pk]).delete()  # queued, never started


def test_save_by_htmx_answers_with_the_box_for_the_page_it_is_on() -> None:
    ada, client = teacher("ada")
    run = teachers_run(ada)
    back = f"/runs/{run.pk}/replay/"
    box = client.post(
        f"/runs/{run.pk}/save", {"visibility": "public", "back": back}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Saved in" in box and f'name="back" value="{back}"' in box
    _, bob = teacher("bob")
    box = bob.post(f"/runs/{run.pk}/save", {"back": back}, HTTP_HX_REQUEST="true")
    assert "Another teacher keeps this run" in box.content.decode()


def test_a_run_a_lecture_plan_replays_is_kept_as_long_as_the_plan() -> None:
    """A plan's replay item keeps its run from pruning (it would open on nothing in the
    lecture); once the plan is gone, the run is pruned like any other."""
    ada, _ = teacher("ada")
    shown, _ = teachers_run(ada), teachers_run(ada, "gc-pause-unfenced")
    plan = Plan.objects.create(
        title="Fencing", owner="account:1", items=[{"kind": "replay", "run": shown.pk, "note": ""}]
    )
    assert recovery.prune(0) == 1
    assert list(Run.objects.values_list("pk", flat=True)) == [shown.pk]
    plan.delete()
    assert recovery.prune(0) == 1 and not Run.objects.exists()
