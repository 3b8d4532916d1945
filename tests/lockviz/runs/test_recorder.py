"""Recording a run: every event stored before anyone hears of it, and the outcome with it."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db.models.signals import post_save

from lockviz.lab.engine import RunEngine
from lockviz.lab.procs import wait_until
from lockviz.live import broadcast
from lockviz.models import Run, RunEvent
from lockviz.runs import launcher, recorder
from lockviz.runs.host import STOPPED
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import parse


def busy(seconds: int) -> dict[str, object]:
    """Four clients taking and giving back one lock every 100 ms: events faster than a busy
    machine stores them, so some always wait in the run's writer."""
    clients = ["alice", "bob", "carol", "dave"]
    return {
        "format": 1, "title": "a busy run, stopped by Ctrl-C", "backend": "redis",
        "fencing": True, "ttl_ms": 3000, "clients": clients,
        "steps": [
            {"at_ms": 100 * i, "client": clients[i // 2 % 4], "do": ("acquire", "release")[i % 2]}
            for i in range(seconds * 10)
        ],
    }  # fmt: skip


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_is_finished_in_the_database_before_its_verdict_is_heard(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The servers stop after the verdict is told; a page loaded in between must already show a
    finished run (no fault menus), so the status is stored with the run_finished event."""
    scenario = builtin()["contention"]
    run = launcher.create_run(scenario, "contention")
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
    assert run.status == Run.Status.FINISHED
    # Its prediction judged, unless a loaded machine fell behind and the run says so (then
    # nothing is judged: seen once in a full run of the suite).
    assert run.expect_met is True or (run.expect_met is None and run.verdict["inconclusive"])


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_deleted_while_it_ends_stays_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run deleted once its verdict is stored (pruned, or a test's database emptied while the
    servers stop) must not come back as a new row when the outcome is stored as a whole."""
    scenario = builtin()["contention"]
    run = launcher.create_run(scenario, "contention")
    publish = broadcast.publish

    def delete_on_verdict(run_id: str, message: dict[str, Any]) -> None:
        if (message.get("event") or {}).get("kind") == "run_finished":
            Run.objects.filter(pk=run_id).delete()
        publish(run_id, message)

    monkeypatch.setattr(broadcast, "publish", delete_on_verdict)
    result = recorder.execute(run, scenario)
    assert result.verdict["mutual_exclusion"] == "held"
    assert not Run.objects.filter(pk=run.pk).exists()


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_events_recorded_from_every_thread_are_stored_by_one_thread_in_order() -> None:
    """A GC pause's run records from the engine, each client's reader, the watcher and the
    thaw's timer: each thread that touched the database held a connection of its own, and twenty
    runs took all of PostgreSQL's. Every event is now stored, then heard, by one thread of the
    run's own, in the order recorded."""
    recorded: set[str] = set()
    stored_by: list[tuple[str, int]] = []
    heard: list[int] = []
    scenario = builtin()["gc-pause-fenced"]
    run = launcher.create_run(scenario, "gc-pause-fenced")

    def seen(sender: Any, instance: RunEvent, created: bool, **_: Any) -> None:
        stored_by.append((threading.current_thread().name, instance.seq))

    engine_record = RunEngine.record

    def record(self: RunEngine, *args: Any, **kwargs: Any) -> None:
        recorded.add(threading.current_thread().name)
        engine_record(self, *args, **kwargs)

    publish = broadcast.publish

    def listen(run_id: str, message: dict[str, Any]) -> None:
        if "event" in message:
            seq = message["event"]["seq"]
            assert RunEvent.objects.filter(run_id=run_id, seq=seq).exists()  # stored first
            heard.append(seq)
        publish(run_id, message)

    post_save.connect(seen, sender=RunEvent)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(RunEngine, "record", record)
            patch.setattr(broadcast, "publish", listen)
            recorder.execute(run, scenario)
    finally:
        post_save.disconnect(seen, sender=RunEvent)
    assert len(recorded) >= 3, recorded  # the engine's, a client's reader, a timer...
    assert {name for name, _ in stored_by} == {f"store-{run.pk}"}
    seqs = [seq for _, seq in stored_by]
    assert seqs == sorted(seqs) == heard == list(range(1, len(seqs) + 1))
    run.refresh_from_db()  # the outcome, stored after the last event
    assert run.status == Run.Status.FINISHED and run.verdict and len(seqs) > 20


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_interrupted_as_its_lab_host_stops_keeps_every_event_then_the_interruption() -> None:
    """Ctrl-C of a lab host while a run plays (lockviz.runs.host): the interruption was told
    with the number the run's writer or its engine was about to store, and that event was lost
    ("UNIQUE constraint failed: lockviz_runevent.run_id, lockviz_runevent.seq"). Now every
    event the engine kept is stored, in order, then the interruption, and nothing after it,
    however long the engine plays on before the process is gone."""
    scenario = parse(busy(30))
    run = launcher.create_run(scenario)
    playing = threading.Thread(target=recorder.execute, args=(run, scenario), daemon=True)
    playing.start()
    wait_until(lambda: run.events.count() > 40, 60, "the run's first 40 events stored")
    engine = recorder._engines[run.pk]
    recorder.interrupt_all(STOPPED)
    time.sleep(1.0)  # the engine plays on for a while (its process is not gone yet)
    kept = [e.seq for e in engine.events]
    stored = list(run.events.order_by("seq").values_list("seq", "kind"))
    engine.abort("the test is over")
    playing.join(30)
    assert [seq for seq, _ in stored] == [*kept, len(kept) + 1]
    assert stored[-1][1] == "run_interrupted"
    run.refresh_from_db()
    assert run.status == Run.Status.INTERRUPTED and run.error == STOPPED


@pytest.mark.live
@pytest.mark.django_db(transaction=True)
def test_a_run_is_this_process_s_until_its_end_is_stored(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lab host told SIGTERM drains: it exits once ``recorder.here()`` names no run. A run
    whose engine had ended but whose writer was still storing its last events (a loaded
    machine) was no longer named, the host exited, and the run, never finished in the
    database, was marked interrupted by a sibling ("the app that ran it stopped before it
    ended": tests/deploy/test_labhosts.py, in a full run). It is named until its end is stored."""
    scenario = scenario_of_turns()
    run = launcher.create_run(scenario)
    store = recorder.store_event

    def slow_store(run_id: str, event: Any, *args: Any) -> Any:
        if event.kind == "run_finished":
            time.sleep(1.0)  # a busy database, as the engine's cleanup ends
        return store(run_id, event, *args)

    monkeypatch.setattr(recorder, "store_event", slow_store)
    playing = threading.Thread(target=recorder.execute, args=(run, scenario), daemon=True)
    playing.start()
    wait_until(lambda: run.pk in recorder.here(), 30, "the run named as this process's")
    wait_until(lambda: run.pk not in recorder.here(), 60, "the run ended here")
    run.refresh_from_db()  # what a draining host leaves behind as it exits now
    assert run.status == Run.Status.FINISHED and run.verdict, (run.status, run.error)
    playing.join(30)


def scenario_of_turns() -> Any:
    return parse(
        {
            "format": 1, "title": "two turns", "backend": "redis", "fencing": True,
            "ttl_ms": 2000, "clients": ["alice", "bob"],
            "steps": [
                {"at_ms": 0, "client": "alice", "do": "acquire"},
                {"at_ms": 200, "client": "alice", "do": "release"},
                {"at_ms": 300, "client": "bob", "do": "acquire"},
            ],
        }
    )  # fmt: skip
