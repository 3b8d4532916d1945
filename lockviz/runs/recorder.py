"""The lab side of a run: start it, execute it on this process's lab, and record every event.

A run's life in this process (started, clicked, relayed to, ended, stored) turns on one table
of live engines (``_engines``), and each function here reads or writes it. The web side (admit,
create, launch, relay a click) is :mod:`lockviz.runs.launcher`, which calls this module and is
never called back; the lab host's loop (:mod:`lockviz.runs.host`) starts runs here too.

Each event the engine records is stored (``RunEvent``) and then published to the run's group,
in that order, so a viewer that catches up from the database and then listens live misses
nothing. Runs execute in background threads, as many at once as the machine can take
(:mod:`lockviz.lab.capacity`: measured, with ``LOCKVIZ_MAX_RUNS`` as the ceiling); the others
wait in a queue whose position their viewers see (:mod:`lockviz.runs.admission`). A keeper
thread tells the database which runs this process runs (lockviz.runs.recovery), and clicks
relayed from siblings are answered here (:func:`_answer_inject`, :func:`_answer_finish`).
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection, transaction
from django.utils import timezone

from lockviz.errors import NotLive, ScenarioError
from lockviz.jsontypes import JsonObject
from lockviz.lab import capacity, events
from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import Lab
from lockviz.lab.making import make_lab
from lockviz.lab.recording import RunResult
from lockviz.live import broadcast
from lockviz.models import Run
from lockviz.narrator import Narrator
from lockviz.runs import admission, labhosts, recovery, relay
from lockviz.runs.priority import Priorities
from lockviz.runs.store import Writer
from lockviz.runs.store import append as store_event
from lockviz.scenarios.schema import MAX_STEPS, Scenario, Step, check_step

log = logging.getLogger(__name__)

_lab: Lab | None = None
_engines: dict[str, RunEngine] = {}  # live runs, by id: where clicks are sent
_writers: dict[str, Writer] = {}  # and what stores their events (drained before they end)
_priorities = Priorities(lambda run_id: _engines[run_id].pids() if run_id in _engines else [])
NOT_LIVE = "this run is not live any more: start a new one"
NOT_LIVE_ANSWER: JsonObject = {"problems": [NOT_LIVE], "live": False}  # a relayed answer
MAX_CLICKS = MAX_STEPS  # a live run takes at most as many clicks as a scenario has steps


def lab() -> Lab:
    global _lab
    if _lab is None:
        _lab = make_lab(settings.LOCKVIZ_SERVERS)
    return _lab


def start(
    run: Run, scenario: Scenario, open_ended: bool = False, first: bool = False
) -> threading.Thread:
    """Execute the run in a background thread; returns at once.

    An open-ended run (the free-play lab) keeps its servers and clients until :func:`finish`,
    taking steps from :func:`inject` as the learner clicks. A run ``first`` (a presenter's)
    goes ahead of the queue, and the other runs yield the CPU to it while it is queued or plays
    (:mod:`lockviz.runs.priority`).
    """
    _keep()
    if first:
        _priorities.first(run.pk)
    admission.machine().join(run.pk, first=first)  # waiting from now on: the next admit counts it
    thread = threading.Thread(
        target=_queued, args=(run, scenario, open_ended), name=f"run-{run.pk}", daemon=True
    )
    thread.start()
    return thread


def inject_here(run_id: str, data: JsonObject) -> Step:
    engine = _engines.get(run_id)
    if engine is None or not engine.started.is_set():
        raise NotLive(NOT_LIVE)
    if engine.ending or engine.failure:
        raise NotLive("this run is ending: start a new one")
    step = check_step(engine.scenario, data, at_ms=int(engine.now_ms))
    longest = engine.clicked_pause_ms()
    if step.do == "pause" and (step.ms or 0) > longest:
        raise ScenarioError(
            [f"ms: a click may pause a client for at most {longest / 1000:g} s now (at most a "
             "minute, and never past the end of the session)"]
        )  # fmt: skip
    if len(engine.steps) - len(engine.scenario.steps) >= MAX_CLICKS:
        raise ScenarioError([f"this run has taken its {MAX_CLICKS} clicks: start a new one"])
    engine.inject(step)
    return step


def finish_here(run_id: str, why: str) -> bool:
    engine = _engines.get(run_id)
    if engine is None:
        return False
    engine.end(why)
    return True


def interrupt_all(why: str) -> None:
    """Every run of this process ends interrupted, saying ``why``, as the process stops (a lab
    host's Ctrl-C): each engine keeps no more events, every one it kept is stored, and then
    the interruption, its last."""
    for run_id in here():
        engine, writer = _engines.get(run_id), _writers.get(run_id)
        if engine is not None:
            engine.seal()
        if writer is not None:
            writer.drain()
        run = Run.objects.filter(pk=run_id).first()
        if run is not None:
            recovery.interrupt(run, why)


def is_live(run_id: str) -> bool:
    """Whether this process runs ``run_id`` now."""
    return run_id in _engines


def _speaks_for(run_id: str, owner: str) -> bool:
    """Whether a relayed request speaks for ``run_id``'s owner (lockviz.runs.relay)."""
    return Run.objects.filter(pk=run_id, owner=owner).exists()


def _answer_inject(run_id: str, owner: str, data: JsonObject) -> JsonObject:
    if not _speaks_for(run_id, owner):
        return {"problems": ["this request does not speak for the run's owner"]}
    try:
        return {"step": inject_here(run_id, data).to_json()}
    except NotLive:
        return NOT_LIVE_ANSWER
    except ScenarioError as exc:
        return {"problems": [p for p in exc.problems]}


def _answer_finish(run_id: str, owner: str, data: JsonObject) -> JsonObject:
    if not _speaks_for(run_id, owner):
        return {"problems": ["this request does not speak for the run's owner"]}
    if finish_here(run_id, str(data.get("why") or "Finish was pressed")):
        return {"done": True}
    return NOT_LIVE_ANSWER


def execute(
    run: Run, scenario: Scenario, open_ended: bool = False, meter: capacity.Meter | None = None
) -> RunResult:
    """Execute the run in this thread (the CLI, tests): record, then store the verdict;
    ``meter`` hears how late it is (a run the machine admitted)."""
    _keep()
    run.status = Run.Status.RUNNING
    run.save(update_fields=["status"])
    # when it left the queue, unless admission (or a lab host) said so already, as it did
    Run.objects.filter(pk=run.pk, started__isnull=True).update(started=timezone.now())
    _status(run)

    narrator = Narrator(scenario.backend)
    writer = Writer(run.pk)  # lockviz.runs.store

    def sink(event: events.Event) -> None:
        data = events.as_json(event)  # the store keeps, and viewers get, the event's JSON
        told = narrator.narrate(data, event)  # said once, from the model: stored and sent

        def store() -> None:
            with transaction.atomic():
                stored = store_event(run.pk, event, data, told["said"])
                if stored is None:
                    log.info("run %s was deleted: its %s not stored", run.pk, event.kind)
                    return
                if isinstance(event, events.RunFinished):
                    _judged(run, event)
            # Numbered by the store: another writer may have come between (lockviz.runs.store)
            sent = told if stored["seq"] == event.seq else {**told, "seq": stored["seq"]}
            broadcast.publish(run.pk, {"type": "run.event", "event": sent})  # once stored

        writer.put(store)  # in order, on the run's own thread: the engine goes on at once

    def waiting(position: int) -> None:  # shared (external) servers: runs take turns
        broadcast.publish(
            run.pk, {"type": "run.status", "status": "queued", "position": position + 1}
        )

    engine = RunEngine(scenario, lab(), sink, on_wait=waiting, open_ended=open_ended, meter=meter)
    _engines[run.pk], _writers[run.pk] = engine, writer
    if not connection.in_atomic_block:  # idle while the run plays: not held for all of it
        connection.close()
    try:
        try:
            result = engine.run()
        except Exception as exc:
            log.exception("run %s crashed", run.pk)
            writer.drain()
            _finish(run, error=f"the lab failed: {exc}")
            raise
        finally:
            _engines.pop(run.pk, None)  # no click reaches it any more
        writer.drain()  # every event stored before the run's end is
        _finish(run, result=result)
        return result
    finally:  # ours (here()) until its end is stored: a draining lab host waits for that
        _writers.pop(run.pk, None)


def queue_position(run_id: str) -> int | None:
    if labhosts.remote():
        return labhosts.position(run_id)
    return admission.machine().position(run_id)


def _queued(run: Run, scenario: Scenario, open_ended: bool = False) -> None:
    lab_now = admission.machine()
    _priorities.executing(run.pk)
    try:
        if admission.wait_for_lab(run, lab_now, _status):
            execute(run, scenario, open_ended, capacity.Ticket(lab_now, run.pk))
    except Exception:  # logged by execute; the thread must not die noisily
        pass
    finally:
        lab_now.leave(run.pk)
        _priorities.ended(run.pk)
        close_old_connections()


def _judged(run: Run, event: events.RunFinished) -> None:
    """The run is finished the moment its verdict is told, stored with it before anyone hears
    of it: a page loaded between the verdict and the end of the cleanup (servers stopping) shows
    a finished run, with no fault menus. :func:`_finish` then stores the outcome as a whole."""
    run.verdict = event.verdict
    run.mismatches = event.mismatches
    run.expect_met = event.expect_met if run.scenario.get("expect") else None
    run.status = Run.Status.FINISHED
    run.finished = timezone.now()
    run.save(update_fields=["verdict", "mismatches", "expect_met", "status", "finished"])


def _finish(run: Run, *, result: RunResult | None = None, error: str = "") -> None:
    if result is not None:
        run.verdict = result.verdict
        run.mismatches = result.mismatches
        run.expect_met = result.expect_met if run.scenario.get("expect") else None
        error = result.error or ""
    run.error = error
    run.status = Run.Status.FAILED if error else Run.Status.FINISHED
    run.finished = timezone.now()
    fields = ["verdict", "mismatches", "expect_met", "error", "status", "finished"]
    # An update only: a run deleted meanwhile (pruned, or a test's database emptied) must not
    # come back as a new row, and one a sibling marked interrupted (this process had stopped
    # answering) stays so.
    stored = Run.objects.filter(pk=run.pk).exclude(status__in=Run.GIVEN_UP)
    if not stored.update(**{field: getattr(run, field) for field in fields}):
        log.warning("run %s was deleted or given up before it finished", run.pk)
        return
    _status(run)


def _keep(forever: bool = False) -> None:
    """Tell the database, every few seconds, which runs are ours, and look out for a dead
    sibling's (lockviz.runs.recovery.keep); answer clicks relayed from siblings."""
    recovery.keep(_ours, _let_go, forever)
    if not labhosts.remote():  # a web process that leaves runs to lab hosts runs none itself
        relay.listen(recovery.process_id(), {"inject": _answer_inject, "finish": _answer_finish})


def keep_forever() -> None:
    """For a serving process: the heartbeat and the lookout run as long as it does."""
    _keep(forever=True)


def here() -> list[str]:
    """The runs this process executes or has queued for its lab now."""
    return _ours()


def _ours() -> list[str]:
    """Queued, playing, or still storing its last events and its end (its writer draining)."""
    return list(dict.fromkeys([*admission.machine().queued(), *list(_engines), *list(_writers)]))


def _let_go(run_id: str, why: str) -> None:
    """Another process marked our run ended (we had stopped answering): stop executing it."""
    engine = _engines.get(run_id)
    if engine is not None:
        engine.abort(why)


def _status(run: Run) -> None:
    broadcast.publish(
        run.pk,
        {"type": "run.status", "status": run.status, "position": queue_position(run.pk)},
    )
