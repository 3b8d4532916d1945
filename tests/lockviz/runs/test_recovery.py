"""Nothing lingers: a dead app's live runs are interrupted, a live app's are not, old runs go."""

from __future__ import annotations

import datetime as dt
import subprocess

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from lockviz.lab import events, procs
from lockviz.models import Run, RunEvent
from lockviz.runs import recovery, store
from tests.conftest import builtin_json

pytestmark = pytest.mark.django_db


def live_run(host: str, alive_at: dt.datetime | None = None, **fields: object) -> Run:
    fields = {"status": Run.Status.RUNNING, **fields}
    run = Run.objects.create(
        title="t", scenario=builtin_json("gc-pause-fenced"), slug="gc-pause-fenced",
        host=host, alive_at=alive_at or timezone.now(), **fields,
    )  # fmt: skip
    RunEvent.objects.create(run=run, seq=1, t_ms=0, actor="lab", kind="run_started", data={})
    return run


def dead_process() -> str:
    """A process id in recovery's format, of a process that has exited."""
    child = subprocess.Popen(["true"])
    stat = procs.stat(child.pid)
    child.wait()
    host = recovery.process_id().rsplit(":", 2)[0]
    return f"{host}:{child.pid}:{stat.start_ticks if stat else 1}"


def test_a_dead_apps_runs_are_interrupted_with_an_event_saying_so() -> None:
    dead = live_run(dead_process())
    reused = live_run(recovery.process_id().rsplit(":", 1)[0] + ":1")  # our pid, not our start
    assert recovery.recover() == 2
    for run in (dead, reused):
        run.refresh_from_db()
        assert run.status == Run.Status.INTERRUPTED and "stopped before it ended" in run.error
        last = run.events.order_by("-seq").first()
        assert last is not None and last.seq == 2 and last.kind == "run_interrupted"


def test_runs_of_a_live_app_are_left_alone_and_stale_remote_ones_are_not() -> None:
    sibling = subprocess.Popen(["sleep", "30"])
    try:
        stat = procs.stat(sibling.pid)
        host = recovery.process_id().rsplit(":", 2)[0]
        alive = live_run(f"{host}:{sibling.pid}:{stat.start_ticks if stat else 0}")
        old = timezone.now() - dt.timedelta(seconds=recovery.STALE_S + 5)
        remote_fresh = live_run("elsewhere:1:1")
        remote_stale = live_run("elsewhere:2:2", alive_at=old)
        mine = live_run(recovery.process_id(), alive_at=old)
        assert recovery.recover() == 1
        states = {r.pk: Run.objects.get(pk=r.pk).status for r in (alive, remote_fresh, mine)}
        assert set(states.values()) == {Run.Status.RUNNING}
        assert Run.objects.get(pk=remote_stale.pk).status == Run.Status.INTERRUPTED
    finally:
        sibling.kill()
        sibling.wait()


def test_a_lesson_never_sends_anyone_to_a_dead_run(client: Client) -> None:
    run = live_run(dead_process())
    client.cookies["lockviz-lesson-gc-pause-fenced"] = run.pk
    response = client.get("/lessons/gc-pause-fenced/")
    assert response.status_code == 200 and 'id="start-lesson"' in response.content.decode()
    recovery.recover()
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "The run was interrupted" in page


def test_prune_removes_old_runs_but_never_live_ones() -> None:
    old = timezone.now() - dt.timedelta(days=40)
    done = live_run(recovery.process_id(), status=Run.Status.FINISHED)
    still = live_run(recovery.process_id())
    Run.objects.filter(pk__in=[done.pk, still.pk]).update(created=old)
    fresh = live_run(recovery.process_id(), status=Run.Status.FINISHED)
    call_command("prune", days=30, verbosity=0)
    assert set(Run.objects.values_list("pk", flat=True)) == {still.pk, fresh.pk}
    assert not RunEvent.objects.filter(run_id=done.pk).exists()


def test_an_interruption_told_as_the_runs_host_still_writes_takes_the_next_seq_loses_none() -> None:
    """A host thought gone (its heartbeat lapsed on a busy machine) may still be storing its
    run's events as another process tells of the interruption: each takes the next number from
    one place (lockviz.runs.store.append), so neither clashes with the other and none is lost.
    The host's own numbering had 2 and 3 after run_started; it had given 2 to the interruption
    too (UNIQUE constraint failed: lockviz_runevent.run_id, lockviz_runevent.seq)."""
    run = live_run("elsewhere:1:1")  # seq 1: run_started
    mine = [events.parse({"seq": seq, "t_ms": 10.0 * seq, "actor": "lab", "kind": "ending",
                          "why": f"event {seq}"}) for seq in (2, 3)]  # fmt: skip
    recovery.interrupt(run, "the lab host stopped answering")  # took 2 while the host had it
    for event in mine:  # the host's writer goes on with what its engine numbered 2 and 3
        stored = store.append(run.pk, event, events.as_json(event), {})
        assert stored is not None and stored["seq"] == event.seq + 1
    rows = list(run.events.order_by("seq").values_list("seq", "kind", "data"))
    assert [(seq, kind) for seq, kind, _ in rows] == [
        (1, "run_started"),
        (2, "run_interrupted"),
        (3, "ending"),
        (4, "ending"),
    ]
    assert [data.get("seq") for _, kind, data in rows if kind != "run_started"] == [2, 3, 4]
