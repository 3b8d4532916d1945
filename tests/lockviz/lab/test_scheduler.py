"""The schedule: actions in time order on the run's clock, one at a time, never early; a
machine that falls behind shifts what is pending, keeping its intervals."""

from __future__ import annotations

import threading
import time

from lockviz.lab.procs import wait_until
from lockviz.lab.scheduler import TOLERANCE_MS, Late, Scheduler, Timeline


def clock() -> tuple[Scheduler, list[tuple[str, float]]]:
    start = time.monotonic()
    schedule = Scheduler(lambda: (time.monotonic() - start) * 1000)
    done: list[tuple[str, float]] = []
    return schedule, done


def test_actions_run_in_time_order_and_never_before_their_time() -> None:
    schedule, done = clock()
    for name, at in (("c", 60), ("a", 0), ("b", 30)):
        schedule.at(at, lambda n=name: done.append((n, schedule.now_ms())))
    schedule.run()
    assert [n for n, _ in done] == ["a", "b", "c"]
    assert done[1][1] >= 30 and done[2][1] >= 60


def test_equal_times_keep_the_order_they_were_added_in() -> None:
    schedule, done = clock()
    for name in "xyz":
        schedule.at(5, lambda n=name: done.append((n, 0)))
    schedule.run()
    assert [n for n, _ in done] == ["x", "y", "z"]


def test_an_action_can_schedule_a_follow_up() -> None:
    schedule, done = clock()

    def pause() -> None:
        done.append(("paused", schedule.now_ms()))
        schedule.at(schedule.now_ms() + 40, lambda: done.append(("thawed", schedule.now_ms())))

    schedule.at(0, pause)
    schedule.run()
    assert [n for n, _ in done] == ["paused", "thawed"]
    assert done[1][1] - done[0][1] >= 40


def test_an_open_ended_schedule_waits_for_clicks_until_closed() -> None:
    schedule, done = clock()
    runner = threading.Thread(target=schedule.run, kwargs={"open_ended": True})
    runner.start()
    schedule.soon(lambda: done.append(("click", 0)))
    wait_until(lambda: bool(done), 5, "the click")
    assert runner.is_alive() and done == [("click", 0)]
    schedule.close()
    runner.join(5)
    assert not runner.is_alive()


def test_cancel_drops_what_is_pending_and_returns_at_once() -> None:
    schedule, done = clock()
    schedule.at(10_000, lambda: done.append(("late", 0)))
    runner = threading.Thread(target=schedule.run)
    runner.start()
    time.sleep(0.05)
    schedule.cancel()
    runner.join(2)
    assert not runner.is_alive() and done == [] and schedule.pending == 0


def test_ending_keeps_what_is_due_now_and_drops_what_is_due_later() -> None:
    schedule, done = clock()
    schedule.soon(lambda: done.append(("click", 0)))
    schedule.at(10_000, lambda: done.append(("later", 0)))
    schedule.drop_later()
    schedule.run(open_ended=True)
    assert done == [("click", 0)] and schedule.pending == 0


def test_a_deadline_ends_an_open_run_that_nobody_closes() -> None:
    schedule, _ = clock()
    started = time.monotonic()
    schedule.run(open_ended=True, deadline_s=time.monotonic() + 0.2)
    assert time.monotonic() - started < 2


# -- lateness and shifts: a clock the test moves, as a stalled machine would -----------------


class Stalls:
    """The run's clock, which a test can make jump forward (the machine stalled meanwhile)."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.stalled_ms = 0.0

    def __call__(self) -> float:
        return (time.monotonic() - self.start) * 1000 + self.stalled_ms

    def stall(self, ms: float) -> None:
        self.stalled_ms += ms


def shifting() -> tuple[Stalls, Timeline, list[Late], list[tuple[str, float, float]]]:
    now = Stalls()
    shifts: list[Late] = []
    timeline = Timeline(now, TOLERANCE_MS, shifts.append)
    done: list[tuple[str, float, float]] = []  # what, when (run clock), how late
    return now, timeline, shifts, done


def stalled_at_step_1() -> tuple[list[Late], list[tuple[str, float, float]]]:
    """Three steps, the first stalling the schedule 1 s: the shifts, and what each step saw."""
    now, timeline, shifts, done = shifting()
    steps = Scheduler(timeline)

    def act(name: str, stall_ms: float = 0) -> None:
        done.append((name, now(), steps.late_ms()))
        now.stall(stall_ms)

    steps.at(0, lambda: act("a", stall_ms=1000), "step 1", 0)
    steps.at(100, lambda: act("b"), "step 2", 1)
    steps.at(300, lambda: act("c"), "step 3", 2)
    steps.run()
    return shifts, done


def test_a_step_beyond_the_tolerance_shifts_the_rest_and_keeps_their_intervals() -> None:
    for _ in range(3):  # a loaded machine may make step 3 late for real: a second shift
        shifts, done = stalled_at_step_1()
        if len(shifts) == 1:
            break
    _, (_, at_b, late_b), (_, at_c, late_c) = done
    assert late_b >= 900  # the stall: step 2 began 900 ms after it was due
    # Step 3 came on the shifted schedule, not 900 ms late again. A loaded machine may make it
    # late by itself (three times in a row, 108 ms, in one run of the suite): a shift of its own.
    assert late_c < late_b / 2
    assert all(shift.index == 2 for shift in shifts[1:])
    # The interval the story scripted: step 3's moment, as shifted, 200 ms after step 2 began
    # (a moment is when a step began less how late it began; b's lateness is the shift).
    assert abs((at_c - late_c) - at_b - 200) < TOLERANCE_MS
    shift = shifts[0]
    assert shift.index == 1 and shift.late_ms == late_b and shift.shift_ms == late_b
    assert [what for _, what in shift.pending] == ["step 3"]
    assert shift.pending[0][0] == 300  # as it was due before the shift


def test_lateness_within_the_tolerance_is_recorded_but_shifts_nothing() -> None:
    now, timeline, shifts, done = shifting()
    steps = Scheduler(timeline)
    steps.at(0, lambda: (done.append(("a", now(), 0)), now.stall(TOLERANCE_MS / 2)), "a")
    steps.at(10, lambda: done.append(("b", now(), steps.late_ms())), "b")
    steps.run()
    assert shifts == [] and timeline.shift_ms == 0
    assert 0 < done[1][2] <= TOLERANCE_MS


def stalled_beside_a_thaw() -> tuple[list[Late], list[tuple[str, float, float]]]:
    """A step stalling the schedule 1 s, and a thaw on a timer schedule of the same run."""
    now, timeline, shifts, done = shifting()
    steps, timers = Scheduler(timeline), Scheduler(timeline)
    timers.at(400, lambda: done.append(("thaw", now(), timers.late_ms())), "alice's thaw")
    steps.at(0, lambda: now.stall(1000), "step 1", 0)
    steps.at(200, lambda: done.append(("step 2", now(), steps.late_ms())), "step 2", 1)
    thawing = threading.Thread(target=timers.run)
    thawing.start()
    steps.run()
    thawing.join(5)
    return shifts, done


def test_a_shift_moves_what_is_pending_on_every_schedule_of_the_run() -> None:
    for _ in range(3):  # a loaded machine may start step 1 late for real: a shift before
        shifts, done = stalled_beside_a_thaw()
        if shifts and shifts[0].index == 1:
            break
    # The stall's shift (a loaded machine may add small ones of its own, later):
    shift = shifts[0]
    assert shift.index == 1 and shift.late_ms >= 800  # step 2 was due at 200: 1000 - 200
    assert all(later.late_ms < shift.late_ms / 2 for later in shifts[1:])
    assert ("400", "alice's thaw") in [(f"{d:.0f}", w) for d, w in shift.pending]
    step2, thaw = sorted(done, key=lambda d: d[1])
    # The thaw moved too: left where it was, it would have been ~600 ms late.
    assert thaw[0] == "thaw" and thaw[2] < 300
    assert thaw[1] - step2[1] > 200 - TOLERANCE_MS  # its interval after step 2: never shorter


def test_a_free_play_timeline_records_lateness_and_never_shifts() -> None:
    now = Stalls()
    shifts: list[Late] = []
    steps = Scheduler(Timeline(now, None, shifts.append))
    late: list[float] = []
    steps.at(0, lambda: now.stall(1000))
    steps.at(10, lambda: late.append(steps.late_ms()))
    steps.run()
    assert shifts == [] and late[0] >= 900
