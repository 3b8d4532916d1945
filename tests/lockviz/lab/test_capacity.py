"""How many runs the machine takes at once: in turn, fewer when late or saturated, more when
comfortable. (The machine's own CPU is not sampled here: each test says how busy it is.)"""

from __future__ import annotations

import threading

import pytest

from lockviz.lab import capacity
from lockviz.lab.capacity import Machine
from lockviz.lab.procs import wait_until


@pytest.fixture(autouse=True)
def adapt_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every look at the machine adapts (in the app: at most every 0.5 s, cuts 2 s apart)."""
    monkeypatch.setattr(capacity, "ADAPT_EVERY_S", 0.0)
    monkeypatch.setattr(capacity, "COOL_DOWN_S", 0.0)


def quiet(ceiling: int = 8, limit: int = 2) -> Machine:
    machine = Machine(ceiling, start_limit=limit, sample=False)
    machine.busy = 0.1
    return machine


def test_runs_start_in_the_order_they_asked_one_start_at_a_time() -> None:
    machine = quiet()
    machine.busy = 0.8  # busy enough that the limit stays as it is, not saturated
    assert machine.enter("a", 0.1)
    assert not machine.enter("b", 0.1)  # "a" is still starting: starts are the bursts
    assert machine.position("b") == 1
    machine.started("a")
    assert not machine.enter("c", 0.1)  # "b" asked first
    assert machine.enter("b", 0.1) and machine.position("c") == 1
    machine.started("b")
    assert not machine.enter("c", 0.1)  # two runs play: the limit is 2
    machine.leave("a")
    assert machine.enter("c", 0.1)


def test_a_waiting_run_is_let_in_as_soon_as_there_is_room() -> None:
    machine = quiet(limit=1)
    machine.busy = 0.8
    machine.enter("a", 0.1)
    machine.started("a")
    let_in: list[float] = []
    waiter = threading.Thread(target=lambda: let_in.append(machine.enter("b", 5) and 1))
    waiter.start()
    wait_until(lambda: machine.waiting == 1, 5, "b in the queue")
    machine.leave("a")
    waiter.join(5)
    assert let_in == [1]


def test_late_steps_take_fewer_runs_and_a_comfortable_machine_gets_one_more() -> None:
    machine = quiet(limit=4)
    for run in "abcd":
        assert machine.enter(run, 0.1)
        machine.started(run)
    machine.late(capacity.LATE_MS + 10)  # a little late: one fewer than are playing
    machine._adapt()
    assert machine.limit == 3
    machine.late(capacity.BEHIND_MS + 10)  # a schedule shifted: half as many
    machine._adapt()
    assert machine.limit == 2
    machine.late(capacity.LATE_MS - 10)  # within the target: nothing to say
    machine._lateness.clear()
    for run in "abc":
        machine.leave(run)
    machine._queue.extend(["e", "f"])  # runs wait, the cores are idle: one more, each time
    machine._adapt()
    assert machine.limit == 2  # one plays, two may: no more needed yet
    machine.running.update({"x", "y"})
    machine._adapt()
    assert machine.limit == 3


def test_saturated_cores_take_fewer_and_start_nothing_more_but_two_runs_always_may() -> None:
    machine = quiet(limit=4)
    machine.busy = 0.97
    for run in "ab":  # fewer than two play: a busy machine does not keep a lone user waiting
        assert machine.enter(run, 0.1)
        machine.started(run)
    assert not machine.enter("c", 0.1)
    assert machine.limit == 2  # halved, and never below two


def test_the_limit_never_passes_the_ceiling() -> None:
    machine = quiet(ceiling=2, limit=2)
    machine.running.update({"a", "b"})
    machine._queue.append("c")
    for _ in range(3):
        machine._adapt()
    assert machine.limit == 2


def test_a_presenters_run_goes_first_into_the_reserved_slot_on_saturated_cores() -> None:
    machine = quiet(limit=2)
    for ticket in ("a", "b"):
        assert machine.enter(ticket, 0.1)
        machine.started(ticket)
    machine.busy = 0.99  # saturated: a run waits, and the limit is not raised
    machine.join("student")
    machine.join("presenter", first=True)
    machine.join("later")
    assert machine.queued() == ["presenter", "student", "later"]
    assert not machine.enter("student", 0.1)  # the lab is full for it
    assert machine.enter("presenter", 0.1)  # past the limit, by the slot kept for it
    assert not machine.enter("student", 0.1)
    machine.join("second presenter's", first=True)
    assert machine.queued()[0] == "second presenter's"  # ahead of those not first
    assert not machine.enter("second presenter's", 0.1)  # one slot is kept, not unlimited


def hosted(machine: Machine, in_stream: int, steps: int = 50) -> int:
    """A lab host's loop (lockviz.runs.host.LabHost.room): take a request only while a slot
    is free and no run waits here to start, with ``in_stream`` more requests waiting in the
    stream; every run starts at once and plays on. The most runs it had at once."""
    taken = most = 0
    for _ in range(steps):
        machine.wanted(in_stream)
        if len(machine.running) + machine.waiting < machine.limit and not machine.waiting:
            machine.join(f"run {taken}")
            taken += 1
        for ticket in machine.queued():
            if machine.enter(ticket, 0.0):
                machine.started(ticket)
        most = max(most, len(machine.running))
    return most


def test_a_lab_host_takes_more_runs_up_to_its_ceiling_while_requests_wait_in_the_stream() -> None:
    # A host reads a request only when it has a free slot, so its own line is never longer
    # than the one run about to start: only the stream says that runs wait for it.
    assert hosted(quiet(ceiling=6), in_stream=0) == 2  # nobody waits: no need for more
    assert hosted(quiet(ceiling=6), in_stream=5) == 6  # a comfortable host grows to its ceiling
    assert hosted(quiet(ceiling=3), in_stream=5) == 3  # ...and a smaller one to its own
    saturated = quiet(ceiling=6)
    saturated.busy = 0.95
    assert hosted(saturated, in_stream=5) == 2  # saturated cores: no more than the floor


def test_a_lower_ceiling_holds_at_once_even_below_the_floor() -> None:
    machine = quiet(ceiling=24, limit=2)
    machine.ceiling = 1  # as lockviz.runs.admission sets LOCKVIZ_MAX_RUNS
    assert machine.limit == 1
    assert hosted(machine, in_stream=5) == 1
    machine.ceiling = 4  # a higher ceiling is room to grow into, not a jump
    assert machine.limit == 1
