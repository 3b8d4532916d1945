"""Recording a run: every event stored before anyone hears of it, and the outcome with it."""

from __future__ import annotations

from typing import Any

import pytest

from lockviz import broadcast
from lockviz.models import Run
from lockviz.runs import recorder
from lockviz.scenarios.library import builtin


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_is_finished_in_the_database_before_its_verdict_is_heard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The servers stop after the verdict is told; a page loaded in between must already show a
    finished run (no fault menus), so the status is stored with the run_finished event."""
    scenario = builtin()["contention"]
    run = recorder.create_run(scenario, "contention")
    heard: dict[str, Any] = {}
    publish = broadcast.publish

    def listen(run_id: str, message: dict[str, Any]) -> None:
        event = message.get("event") or {}
        if event.get("kind") in ("run_finished", "step"):
            stored = Run.objects.get(pk=run_id)
            heard.setdefault(event["kind"], (stored.status, stored.verdict))
        publish(run_id, message)

    monkeypatch.setattr(broadcast, "publish", listen)
    recorder.execute(run, scenario)
    assert heard["step"][0] == Run.Status.RUNNING  # still running while it plays
    status, verdict = heard["run_finished"]
    assert status == Run.Status.FINISHED and verdict["mutual_exclusion"] == "held"
    run.refresh_from_db()
    assert run.status == Run.Status.FINISHED and run.expect_met is True


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_deleted_while_it_ends_stays_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run deleted once its verdict is stored (pruned, or a test's database emptied while the
    servers stop) must not come back as a new row when the outcome is stored as a whole."""
    scenario = builtin()["contention"]
    run = recorder.create_run(scenario, "contention")
    publish = broadcast.publish

    def delete_on_verdict(run_id: str, message: dict[str, Any]) -> None:
        if (message.get("event") or {}).get("kind") == "run_finished":
            Run.objects.filter(pk=run_id).delete()
        publish(run_id, message)

    monkeypatch.setattr(broadcast, "publish", delete_on_verdict)
    result = recorder.execute(run, scenario)
    assert result.verdict["mutual_exclusion"] == "held"
    assert not Run.objects.filter(pk=run.pk).exists()
