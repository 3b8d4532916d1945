"""Whether a shifted schedule still tells the story: the timers a shift cannot move."""

from __future__ import annotations

from typing import Any

from lockviz.lab import events
from lockviz.lab.story import Mark, Story

# What each kind must carry besides what a test says (lockviz/lab/events.py), filled in.
FILLED: dict[str, dict[str, Any]] = {
    "granted": {"node": "redis-1", "token": None, "ttl_ms": None, "value": "v"},
    "extended": {"ttl_ms": None},
    "expired": {"key": "lockviz:lock", "holder": None},
    "step": {"index": 0},
}


def told(*seen: dict[str, Any]) -> Story:
    story = Story()
    for seq, event in enumerate(seen, 1):
        story.see(events.parse({"seq": seq, **FILLED.get(event["kind"], {}), **event}))
    return story


GRANTED = {"t_ms": 5, "actor": "alice", "kind": "granted", "node": "redis-1", "ttl_ms": 2000}
# The GC-pause story after alice's grant: her pause, bob's acquire after her lease ran out.
STEPS = [(300, "step 2 (pause)"), (2800, "step 3 (acquire)"), (3100, "step 4 (write)")]


def test_a_moment_moved_past_a_running_lease_loses_the_story() -> None:
    crossing = told(GRANTED).crossing(STEPS, late_ms=2200, margin_ms=50)
    assert crossing is not None
    assert crossing.fixed == Mark("lease", "alice", 2005)
    assert crossing.moved == "step 2 (pause)" and crossing.moved_to_ms == 2500


def test_moments_that_stay_on_their_side_of_every_timer_keep_the_story() -> None:
    story = told(GRANTED)
    assert story.crossing(STEPS, late_ms=600, margin_ms=50) is None
    assert story.crossing(STEPS[1:], late_ms=5000, margin_ms=50) is None  # all after its end


def test_coming_within_the_margin_of_a_timer_end_counts_as_crossing_it() -> None:
    assert told(GRANTED).crossing([(1900, "step 3")], late_ms=60, margin_ms=50) is not None


def test_a_lease_the_client_let_go_before_the_moment_no_longer_matters() -> None:
    for end in (
        {"t_ms": 100, "actor": "alice", "kind": "releasing"},
        {"t_ms": 100, "actor": "alice", "kind": "crashed"},
    ):
        assert told(GRANTED, end).crossing(STEPS, late_ms=2200, margin_ms=50) is None


def test_a_lease_the_server_expired_during_the_stall_still_counts_at_its_real_end() -> None:
    # The watcher, in the stalled app, heard of the expiry only once the app woke up (2511 ms).
    heard_late = {"t_ms": 2511, "actor": "redis-1", "kind": "expired", "holder": "alice"}
    crossing = told(GRANTED, heard_late).crossing(STEPS, late_ms=2200, margin_ms=50)
    assert crossing is not None and crossing.fixed.at_ms == 2005


def test_a_redlock_grant_runs_a_lease_on_each_node_that_said_yes() -> None:
    granted = {"t_ms": 200, "actor": "alice", "kind": "granted", "nodes": ["redis-1", "redis-2",
               "redis-3"], "ttl_ms": 8000}  # fmt: skip
    jumped = {"t_ms": 800, "actor": "redis-3", "kind": "expired", "holder": "alice"}
    ends = [(t.node, t.end_ms) for t in told(granted, jumped).timers()]
    assert ends == [("redis-3", 800), ("redis-1", 8200), ("redis-2", 8200)]


def test_a_renewal_moves_the_lease_end_and_a_grant_without_a_lease_has_none() -> None:
    renewed = told(GRANTED, {"t_ms": 1500, "actor": "alice", "kind": "extended", "ok": True,
                             "ttl_ms": 2000})  # fmt: skip
    assert renewed.timers()[0].end_ms == 3500
    assert told({**GRANTED, "ttl_ms": None}).timers() == []  # PostgreSQL: held until released


def test_an_acquire_waits_until_its_timeout_or_its_grant() -> None:
    step = {"t_ms": 600, "actor": "lab", "kind": "step", "do": "acquire", "client": "bob",
            "timeout_ms": 2500}  # fmt: skip
    story = told(step)
    [wait] = story.timers()
    assert (wait.kind, wait.client, wait.end_ms) == ("wait", "bob", 3100)
    assert story.crossing([(3000, "step 5 (write)")], late_ms=200, margin_ms=50) is not None
    granted = {"t_ms": 700, "actor": "bob", "kind": "granted", "ttl_ms": None}
    assert [(t.kind, t.end_ms) for t in told(step, granted).timers()] == [("wait", 700)]


def after_alices_acquire(*later: tuple[int, str, str]) -> Story:
    """The lab's steps after alice's acquire (step 1, due at 0): (at ms, what, whose)."""
    steps = enumerate(later, 1)
    return told(*({"t_ms": t_ms, "actor": "lab", "kind": "step", "index": index, "do": do,
                   "client": client} for index, (t_ms, do, client) in steps))  # fmt: skip


def alice_took_it(story: Story, late_ms: int) -> Mark | None:
    """The step that alice's acquire, taken by her process ``late_ms`` late, crossed."""
    moment = [(0.0, "step 1 (acquire)")]
    crossing = story.crossing(moment, late_ms=late_ms, margin_ms=50, late_client=(0, "alice"))
    return crossing and crossing.fixed


def test_a_command_its_client_took_late_must_not_come_after_a_later_step_already_taken() -> None:
    # Alice's acquire was taken by her process 500 ms late; bob's (step 2, due at 300) was sent
    # on time meanwhile: he may have asked for the lock before she did.
    story = after_alices_acquire((300, "acquire", "bob"), (400, "write", "alice"))
    assert alice_took_it(story, 500) == Mark("step", "step 2 (acquire)", 300)
    # Alice's own later command waits for this one in her queue: it cannot come first. And a
    # step is where it was, not an estimate: one just after the late command is no crossing.
    assert alice_took_it(story, 299) is None
    # The scheduler's own lateness never crosses a step already taken: those came before it.
    assert story.crossing([(0.0, "step 1 (acquire)")], late_ms=500, margin_ms=50) is None


def test_a_fault_done_to_the_late_client_is_where_it_was_its_own_commands_wait() -> None:
    # Alice's acquire was held up 350 ms; her pause (step 2) came at 300 ms all the same: a
    # SIGSTOP waits in no queue. Her write (step 3) waits for her acquire.
    story = after_alices_acquire((300, "pause", "alice"), (320, "write", "alice"))
    assert alice_took_it(story, 350) == Mark("step", "step 2 (pause)", 300)
    assert alice_took_it(story, 250) is None


def test_a_fault_is_fixed_where_it_landed_and_the_late_command_s_own_wait_is_not() -> None:
    # The engine recorded alice's pause (step 2) at 300 ms but, stalled, froze her only at
    # 650 ms: her acquire, taken 320 ms late and granted before that, did not cross it.
    story = told(
        {"t_ms": 0, "actor": "lab", "kind": "step", "index": 0, "do": "acquire", "client": "alice"},
        {"t_ms": 300, "actor": "lab", "kind": "step", "index": 1, "do": "pause", "client": "alice"},
        {"t_ms": 650, "actor": "alice", "kind": "paused", "ms": 3500},
    )
    moment = [(0.0, "step 1 (acquire)")]
    assert story.crossing(moment, late_ms=320, margin_ms=50, late_client=(0, "alice")) is None
    crossing = story.crossing(moment, late_ms=700, margin_ms=50, late_client=(0, "alice"))
    assert crossing is not None and crossing.fixed == Mark("step", "step 2 (pause)", 650)
    # Her own acquire's wait (from 0 ms, 10 s by default) counts from when she began it: a late
    # command of hers does not cross its end; bob's wait would be fixed.
    assert story.crossing(moment, late_ms=10_500, margin_ms=50, late_client=(0, "bob"))
    assert all(m.who != "alice" for m in story.marks((0, "alice")) if m.kind == "wait")


def test_a_fault_recorded_a_hair_after_the_held_up_command_it_landed_on_still_crosses_it() -> None:
    # Seen under a CPU hog: alice's acquire (due at 3.3 ms) was still not taken when her crash
    # landed, at 300.47 ms; the crash was recorded at 300.5 (times are kept to 0.1 ms), and the
    # held-up acquire, moved to 300.47, seemed to come before it: the run told bob's grant as
    # the story's. A step's recorded time is known to 0.1 ms, and that is the margin it gets.
    story = told(
        {
            "t_ms": 300.3,
            "actor": "lab",
            "kind": "step",
            "index": 1,
            "do": "crash",
            "client": "alice",
        },
        {"t_ms": 300.5, "actor": "alice", "kind": "crashed"},
    )
    moment = [(3.3, "step 1 (acquire)")]
    crossing = story.crossing(moment, late_ms=297.17, margin_ms=0.0, late_client=(0, "alice"))
    assert crossing is not None and crossing.fixed == Mark("step", "step 2 (crash)", 300.5)
    assert story.crossing(moment, late_ms=297.0, margin_ms=0.0, late_client=(0, "alice")) is None
