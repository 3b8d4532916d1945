"""A presenter's run comes first: while it is queued or plays, the class's runs yield the CPU."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from lockviz import accounts
from lockviz.lab import capacity, procs
from lockviz.models import Room, Run
from lockviz.runs import admission, launcher, recorder
from lockviz.scenarios.schema import Scenario, parse
from lockviz.teaching import rooms

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def wait(ready: Callable[[], bool], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture(autouse=True)
def room_for_three(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine that takes the test's three runs at once, whatever else the machine runs.

    What is tested here is who yields the CPU, not how many runs the machine takes: the app's
    machine adapts to the whole machine's load (tests/lockviz/lab/test_capacity.py tests that),
    and under a loaded suite it kept the third run waiting in line past the test's wait."""
    roomy = capacity.Machine(ceiling=3, start_limit=3, sample=False)
    monkeypatch.setattr(roomy, "_adapt", lambda: None)  # no fewer for runs late under load
    monkeypatch.setattr(admission, "machine", lambda: roomy)


def free_play() -> Scenario:
    return parse(
        {"format": 1, "title": "Free play", "backend": "redis", "fencing": True,
         "ttl_ms": 800, "clients": ["alice", "bob"], "steps": []},
        allow_empty=True,
    )  # fmt: skip


def playing(run: Run) -> list[int]:
    """The run's processes, once it plays."""
    wait(lambda: recorder.is_live(run.pk) and recorder._engines[run.pk].started.is_set())
    pids = recorder._engines[run.pk].pids()
    assert len(pids) >= 4  # redis, storage, the proxy, two clients
    return pids


def test_a_students_run_yields_to_the_presenters_and_the_presenters_does_not() -> None:
    teacher = accounts.owner_of(User.objects.create_user("teacher"))
    room = Room.objects.create(presenter=teacher)  # a teacher's room, its class there
    rooms.arrived(room, rooms.join(room, "a student"))
    base = os.getpriority(os.PRIO_PROCESS, 0)
    [student] = launcher.launch_many([free_play()], owner="student", open_ended=True)
    before = playing(student)
    assert {procs.niceness(pid) for pid in before} == {base}  # no presenter's run: no yielding
    [presenter] = launcher.launch_many([free_play()], owner=teacher, open_ended=True)
    theirs = playing(presenter)
    assert {procs.niceness(pid) for pid in before} == {max(base, procs.LOW_NICENESS)}
    assert {procs.niceness(pid) for pid in theirs} == {base}
    [later] = launcher.launch_many([free_play()], owner="another student", open_ended=True)
    assert {procs.niceness(pid) for pid in playing(later)} == {max(base, procs.LOW_NICENESS)}
    for run in (student, presenter, later):
        launcher.finish(run.pk)
    for run in (student, presenter, later):
        wait(lambda r=run: not recorder.is_live(r.pk))
