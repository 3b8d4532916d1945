"""Admission: a bounded queue (503), a cap per browser (429), unwatched queued runs cancelled."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.test.utils import override_settings

from lockviz.lab.capacity import Machine
from lockviz.models import Run
from lockviz.runs import admission, launcher, recorder
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
