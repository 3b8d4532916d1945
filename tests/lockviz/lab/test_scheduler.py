"""The schedule: actions in time order on the run's clock, one at a time, never early."""

from __future__ import annotations

import threading
import time

from lockviz.lab.scheduler import Scheduler


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
    time.sleep(0.1)
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
