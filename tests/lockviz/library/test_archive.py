"""A library's archive: exported from one account, imported into a fresh one, the same runs
(events and verdicts) and scenarios; a bad archive adds nothing and names each problem."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from lockviz import accounts
from lockviz.errors import ImportRefused
from lockviz.exercises.builtin import builtin
from lockviz.library import archive, saving
from lockviz.models import Plan, Run, SavedExercise, SavedRun, SavedScenario
from tests.conftest import builtin_json
from tests.lockviz.library.helpers import teacher, teachers_run

pytestmark = pytest.mark.django_db(transaction=True)


def _library(user: object) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """A library as values that do not depend on the installation (no ids, no times)."""
    runs = [
        (
            s.title, s.visibility, s.run.title, s.run.status, s.run.verdict, s.run.expect_met,
            [(e.seq, e.kind, e.data, e.said) for e in s.run.events.order_by("seq")],
        )
        for s in SavedRun.objects.filter(user=user).select_related("run").order_by("title")
    ]  # fmt: skip
    scenarios = [
        (s.title, s.visibility, s.scenario, s.backend, s.storage)
        for s in SavedScenario.objects.filter(user=user).order_by("title")
    ]
    return runs, scenarios


def _exercises(user: object) -> list[tuple[object, ...]]:
    return [
        (s.title, s.visibility, s.kind, s.backend, s.exercise)
        for s in SavedExercise.objects.filter(user=user).order_by("title")
    ]


def test_a_library_exported_and_imported_into_a_fresh_account_is_the_same() -> None:
    ada, client = teacher("ada")
    saving.save_run(ada, teachers_run(ada, "gc-pause-fenced"), "public", "A fenced pause")
    saving.save_run(ada, teachers_run(ada, "gc-pause-unfenced"), "private", "Unfenced")
    saving.save_run(ada, teachers_run(ada, "etcd-happy"), "unlisted", "etcd, happy")
    saving.save_scenario(ada, builtin_json("contention"), "unlisted", "Contention")
    saving.save_exercise(ada, builtin()["break-sentinel-wait"], "public", "Break WAIT")
    response = client.get("/library/export.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    data = response.content
    assert len(zipfile.ZipFile(io.BytesIO(data)).namelist()) == 4  # the manifest, three runs

    bob, bob_client = teacher("bob")
    upload = SimpleUploadedFile("lib.zip", data, content_type="application/zip")
    response = bob_client.post("/library/import/", {"archive": upload})
    assert response.status_code == 302
    assert (
        "Imported 3 runs, 1 scenario, 1 exercise and 0 lecture plans"
        in bob_client.get("/library/").content.decode()
    )
    assert _library(bob) == _library(ada)
    assert (
        _exercises(bob)
        == _exercises(ada)
        == [
            (
                "Break WAIT",
                "public",
                "break",
                "redis-sentinel",
                builtin()["break-sentinel-wait"].to_json(),
            )
        ]
    )
    assert Run.objects.filter(user=bob).count() == 3
    verdicts = {r.title: r.verdict for r in Run.objects.filter(user=bob)}
    assert verdicts["GC pause outlives the lease"]["mutual_exclusion"] in ("held", "violated")


def test_a_teachers_lecture_plans_travel_with_the_runs_they_replay() -> None:
    """A plan in the archive replays a saved run and a run nobody saved: both travel, and on
    the other installation the plan's replays open the runs as stored there."""
    ada, client = teacher("ada")
    saved, unsaved = teachers_run(ada), teachers_run(ada, "etcd-happy")
    saving.save_run(ada, saved, "private", "Fenced")
    items = [
        {"kind": "replay", "run": saved.pk, "from": 3, "to": 9, "note": "pause at 9"},
        {"kind": "replay", "run": unsaved.pk, "from": None, "to": None, "note": ""},
        {"kind": "poll", "question": "Who writes?", "choices": ["Alice", "Bob"], "note": "n"},
    ]
    Plan.objects.create(title="Fencing, then etcd", owner=accounts.owner_of(ada), items=items)
    data = client.get("/library/export.zip").content
    counts = [saved.events.count(), unsaved.events.count()]
    Run.objects.all().delete()  # another installation: none of these runs is there

    bob, _ = teacher("bob")
    added = archive.load(bob, data)
    assert (added.runs, added.plans) == (1, 1)
    plan = Plan.objects.get(owner=accounts.owner_of(bob))
    assert plan.title == "Fencing, then etcd" and plan.items[2] == items[2]
    shown = [Run.objects.get(pk=run) for run in plan.replayed()]
    assert [r.title for r in shown] == [saved.title, unsaved.title]
    assert [r.events.count() for r in shown] == counts and counts[0] > 10
    assert (plan.items[0]["from"], plan.items[0]["to"], plan.items[0]["note"]) == (
        3,
        9,
        "pause at 9",
    )


def _zip(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as packed:
        for name, content in files.items():
            packed.writestr(name, content)
    return buffer.getvalue()


def _refused(data: bytes) -> list[str]:
    ada, _ = User.objects.get_or_create(username="ada")
    with pytest.raises(ImportRefused) as refused:
        archive.load(ada, data)
    assert not SavedRun.objects.exists() and not SavedScenario.objects.exists()
    return refused.value.problems


def test_a_bad_archive_adds_nothing_and_names_each_problem() -> None:
    assert _refused(b"hello") == ["archive: not a zip file (a lockviz library export is)"]
    assert "no library.json" in _refused(_zip({"x.json": "{}"}))[0]
    late = {**builtin_json("contention"), "ttl_ms": "soon"}
    fix = builtin()["fix-redis-fencing"].to_json()
    manifest = {
        "format": "lockviz-library",
        "version": 1,
        "runs": [
            {"file": "runs/a.json", "title": "A", "visibility": "private"},
            {"file": "runs/nope.json", "title": "B", "visibility": "private"},
        ],
        "scenarios": [
            {"title": "S", "visibility": "everyone", "scenario": builtin_json("contention")},
            {"title": "T", "visibility": "public", "scenario": late},
        ],
        "exercises": [
            {"title": "E", "visibility": "public", "exercise": {**fix, "concepts": ["fencing"]}},
            {"title": "F", "visibility": "public", "exercise": "not one"},
        ],
    }
    run = {"scenario": builtin_json("contention"), "events": []}
    problems = _refused(
        _zip({"library.json": json.dumps(manifest), "runs/a.json": json.dumps(run)})
    )
    assert problems[0] == "events: the run has no events"
    assert problems[1] == "library.json: runs[1].file: 'runs/nope.json' is not in it"
    assert problems[2].startswith("library.json: scenarios[0].visibility: 'everyone' is not one")
    assert problems[3].startswith("library.json: scenarios[1].ttl_ms")
    assert problems[4].startswith(
        "library.json: exercises[0].exercise.concepts[0]: 'fencing' is not a concept of the course"
    )
    assert problems[5] == "library.json: exercises[1].exercise: must be a JSON object"
    assert not SavedExercise.objects.exists()


def test_an_archive_member_is_read_no_further_than_the_import_limit() -> None:
    big = {"file": "runs/big.json", "title": "A", "visibility": "private"}
    manifest = {"format": "lockviz-library", "version": 1, "scenarios": [], "runs": [big]}
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("library.json", json.dumps(manifest))
        z.writestr("runs/big.json", b" " * (archive.imports.MAX_BYTES + 10))  # packs to KBs
    assert _refused(packed.getvalue()) == [
        f"runs/big.json: more than {archive.imports.MAX_BYTES} bytes unpacked"
    ]


def test_an_archive_past_the_upload_limit_is_refused_by_its_size(settings: Any) -> None:
    _, client = teacher("ada")
    settings.LOCKVIZ_MAX_UPLOAD = 2 * 1024 * 1024
    big = b"x" * (3 * 1024 * 1024)
    upload = SimpleUploadedFile("lib.zip", big, content_type="application/zip")
    response = client.post("/library/import/", {"archive": upload})
    assert response.status_code == 400
    assert "archive: more than 2 MB, the most an upload may be" in response.content.decode()
    assert not SavedRun.objects.exists()


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        for name, data in files.items():
            packed.writestr(name, data)
    return buffer.getvalue()


def _manifest(files: list[str], key: str = "runs") -> bytes:
    entries = [{"file": f, "title": "t", "visibility": "private"} for f in files]
    return json.dumps({"format": archive.FORMAT, "version": archive.VERSION, key: entries,
                       "scenarios": []}).encode()  # fmt: skip


def test_a_file_named_twice_is_refused_not_read_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 169 KB zip naming one 3.1 MB member 16 times was read 16 times (20.9 s, +200 MB)."""
    ada, _ = teacher("ada")
    one = json.dumps(teachers_run(ada).as_export()).encode()
    read: list[str] = []
    real = archive.imports.read

    def counted(data: bytes, name: str) -> object:
        read.append(name)
        return real(data, name)

    monkeypatch.setattr(archive.imports, "read", counted)
    data = _zip({"library.json": _manifest(["runs/a.json"] * 16), "runs/a.json": one})
    with pytest.raises(ImportRefused) as refused:
        archive.load(ada, data)
    assert (
        "runs/a.json: named twice in library.json; each run is one file" in refused.value.problems
    )
    assert len(read) <= 1
    plans_too = _zip({"library.json": json.dumps({
        "format": archive.FORMAT, "version": archive.VERSION, "scenarios": [],
        "runs": [{"file": "runs/a.json", "title": "t", "visibility": "private"}],
        "plan_runs": [{"file": "runs/a.json"}]}).encode(), "runs/a.json": one})  # fmt: skip
    with pytest.raises(ImportRefused, match="named twice"):
        archive.load(ada, plans_too)


def test_an_archive_is_bounded_in_all_it_unpacks(monkeypatch: pytest.MonkeyPatch) -> None:
    ada, _ = teacher("ada")
    one = json.dumps(teachers_run(ada).as_export()).encode()
    names = [f"runs/{i}.json" for i in range(6)]
    data = _zip({"library.json": _manifest(names), **{n: one for n in names}})
    monkeypatch.setattr(archive, "MAX_UNPACKED", 3 * len(one) + 10)
    with pytest.raises(ImportRefused, match="MB unpacked"):
        archive.load(ada, data)
    monkeypatch.setattr(archive, "MAX_UNPACKED", 100 * len(one))
    events = len(json.loads(one)["events"])
    monkeypatch.setattr(archive, "MAX_EVENTS", 4 * events)
    with pytest.raises(ImportRefused, match=f"more than {4 * events} events"):
        archive.load(ada, data)
    assert SavedRun.objects.filter(user=ada).count() == 0
