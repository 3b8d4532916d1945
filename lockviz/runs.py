"""Starting runs and recording them: the glue between the run engine and Django.

Each event the engine records is stored (``RunEvent``) and then published to the run's group,
in that order, so a viewer that catches up from the database and then listens live misses
nothing. Runs execute in background threads; at most ``LOCKVIZ_MAX_RUNS`` at once, the others
wait in a queue whose position their viewers see.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from lockviz import broadcast
from lockviz.lab.engine import RunEngine, RunResult
from lockviz.lab.servers import ExternalLab, LocalLab, make_lab
from lockviz.models import Run, RunEvent
from lockviz.scenarios.schema import Scenario

log = logging.getLogger(__name__)

_lab: LocalLab | ExternalLab | None = None
_slots = threading.BoundedSemaphore(settings.LOCKVIZ_MAX_RUNS)
_waiting: list[str] = []
_waiting_lock = threading.Lock()


def lab() -> LocalLab | ExternalLab:
    global _lab
    if _lab is None:
        _lab = make_lab(settings.LOCKVIZ_SERVERS)
    return _lab


def create_run(scenario: Scenario, slug: str = "") -> Run:
    return Run.objects.create(slug=slug, title=scenario.title, scenario=scenario.to_json())


def start(run: Run, scenario: Scenario) -> threading.Thread:
    """Execute the run in a background thread; returns at once."""
    thread = threading.Thread(
        target=_queued, args=(run, scenario), name=f"run-{run.pk}", daemon=True
    )
    thread.start()
    return thread


def execute(run: Run, scenario: Scenario) -> RunResult:
    """Execute the run in this thread (the CLI, tests): record, then store the verdict."""
    run.status = Run.Status.RUNNING
    run.save(update_fields=["status"])
    _status(run)

    def sink(event: dict[str, Any]) -> None:
        RunEvent.objects.create(
            run=run,
            seq=event["seq"],
            t_ms=event["t_ms"],
            actor=event["actor"],
            kind=event["kind"],
            data=event,
        )
        broadcast.publish(run.pk, {"type": "run.event", "event": event})

    try:
        result = RunEngine(scenario, lab(), sink).run()
    except Exception as exc:
        log.exception("run %s crashed", run.pk)
        _finish(run, error=f"the lab failed: {exc}")
        raise
    _finish(run, result=result)
    return result


def queue_position(run_id: str) -> int | None:
    with _waiting_lock:
        return _waiting.index(run_id) + 1 if run_id in _waiting else None


def _queued(run: Run, scenario: Scenario) -> None:
    with _waiting_lock:
        _waiting.append(run.pk)
    try:
        while not _slots.acquire(timeout=0.5):
            _status(run)
    finally:
        with _waiting_lock:
            _waiting.remove(run.pk)
    try:
        execute(run, scenario)
    except Exception:  # logged by execute; the thread must not die noisily
        pass
    finally:
        _slots.release()
        close_old_connections()


def _finish(run: Run, *, result: RunResult | None = None, error: str = "") -> None:
    if result is not None:
        run.verdict = result.verdict
        run.mismatches = result.mismatches
        run.expect_met = result.expect_met if run.scenario.get("expect") else None
        error = result.error or ""
    run.error = error
    run.status = Run.Status.FAILED if error else Run.Status.FINISHED
    run.finished = timezone.now()
    run.save()
    _status(run)


def _status(run: Run) -> None:
    broadcast.publish(
        run.pk,
        {"type": "run.status", "status": run.status, "position": queue_position(run.pk)},
    )
