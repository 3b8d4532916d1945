"""Admission: a bounded queue (503), a cap per browser (429), unwatched queued runs cancelled."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.test.utils import override_settings
from django.utils import timezone

from lockviz.lab.capacity import Machine
from lockviz.models import Run
from lockviz.runs import admission, launcher, recorder, waits
from lockviz.scenarios.library import builtin
from tests.conftest import browser_of, builtin_json

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.mark.django_db
@override_settings(LOCKVIZ_MAX_PER_BROWSER=1)
def test_one_browser_cannot_start_more_than_its_share(client: Client) -> None:
    Run.objects.create(
        title="t", scenario=builtin_json("contention"), status=Run.Status.RUNNING,
        owner=browser_of(client),
    )  # fmt: skip
    response = client.post("/runs/", {"scenario": "contention"})
    assert response.status_code == 429
    page = response.content.decode()
    assert "You already have 1 run queued or running" in page and "may have 1 at a time" in page
    htmx = client.post("/runs/", {"scenario": "contention"}, **HTMX)
    assert htmx.status_code == 200 and htmx["HX-Retarget"] == "#refused"
    assert Run.objects.count() == 1  # nothing was started


@pytest.mark.django_db
@override_settings(LOCKVIZ_MAX_QUEUE=2)
def test_a_full_queue_says_when_to_retry(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    full = Machine(ceiling=1, sample=False)
    full.running.add("playing")  # the one run it takes
    full._queue.extend(["a", "b"])
    monkeypatch.setattr(admission, "machine", lambda: full)
    response = client.post("/play/", {"backend": "redis", "clients": "2", "ttl_ms": "800"})
    assert response.status_code == 503 and response["Retry-After"] == "60"
    assert "The lab is busy: 2 runs are waiting" in response.content.decode()
    assert not Run.objects.exists()


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_queued_run_that_nobody_watches_is_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(admission, "UNWATCHED_S", 1.0)
    full = Machine(ceiling=1, sample=False)
    full.running.add("playing")  # the one run it takes: the run must wait
    monkeypatch.setattr(admission, "machine", lambda: full)
    scenario = builtin()["contention"]
    run = launcher.create_run(scenario, "contention")
    recorder.start(run, scenario)
    deadline = time.monotonic() + 20
    while Run.objects.get(pk=run.pk).status == Run.Status.QUEUED:
        assert time.monotonic() < deadline, "never cancelled"
        time.sleep(0.1)
    run.refresh_from_db()
    assert run.status == Run.Status.CANCELLED
    assert run.events.get().kind == "run_cancelled"
    assert full.waiting == 0  # it gave its place up


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_says_how_long_it_waited_for_the_lab_and_behind_whose_run(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lab full with a room's run: this one waits its turn, and once it runs its page says
    how long it waited and whose share was ahead of it (lockviz.runs.waits)."""
    full = Machine(ceiling=1, sample=False)
    monkeypatch.setattr(admission, "machine", lambda: full)
    ahead = Run.objects.create(
        title="a class's run", scenario=builtin_json("contention"), status=Run.Status.RUNNING,
        allowance="ABCDE", owner="presenter",
    )  # fmt: skip
    full.join(ahead.pk)
    assert full.enter(ahead.pk, timeout_s=1)
    Run.objects.filter(pk=ahead.pk).update(started=ahead.created)
    scenario = builtin()["contention"]
    run = launcher.create_run(scenario, "contention")
    Run.objects.filter(pk=run.pk).update(watchers=1)  # someone watches it wait
    recorder.start(run, scenario)
    time.sleep(2.5)
    assert Run.objects.get(pk=run.pk).status == Run.Status.QUEUED  # the lab is full
    Run.objects.filter(pk=ahead.pk).update(status=Run.Status.FINISHED, finished=timezone.now())
    full.leave(ahead.pk)
    deadline = time.monotonic() + 60
    while Run.objects.get(pk=run.pk).status in Run.LIVE:
        assert time.monotonic() < deadline, "never ran"
        time.sleep(0.2)
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED and run.started is not None
    waited = waits.of(run)
    assert waited is not None and waited.seconds >= 2.0
    assert waited.behind == (("of the class in room ABCDE", 1),)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert (
        f"It waited {waited.seconds:.0f} s for the lab, behind 1 run: 1 of the class in room ABCDE."
        in page
    )
    quick = Run.objects.get(pk=ahead.pk)  # taken at once: nothing to tell
    assert waits.of(quick) is None
