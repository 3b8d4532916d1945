"""Whether a shifted schedule still tells the story: the timers a shift cannot move."""

from __future__ import annotations

from typing import Any

from lockviz.lab import events
from lockviz.lab.moments import Mark
from lockviz.lab.story import Story

# What each kind must carry besides what a test says (lockviz/lab/events.py), filled in.
FILLED: dict[str, dict[str, Any]] = {
    "granted": {"node": "redis-1", "token": None, "ttl_ms": None, "value": "v"},
    "extended": {"ttl_ms": None},
    "expired": {"key": "lockviz:lock", "holder": None},
    "step": {"index": 0},
}


def told(*seen: dict[str, Any], sessions: bool = False) -> Story:
    story = Story(sessions=sessions)
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
    # With no late client (the schedule itself fell behind, or a thaw did), a step already done
    # is fixed for a moment due before it (only a thaw, on the timers' own thread, can be), and
    # never for one due after it, however late.
    assert story.crossing([(450.0, "alice's thaw")], late_ms=500, margin_ms=50) is None
    crossing = story.crossing([(250.0, "alice's thaw")], late_ms=500, margin_ms=50)
    assert crossing is not None
    assert crossing.fixed == Mark("step", "step 2 (acquire)", 300, due_ms=300)


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


# -- grants something keeps alive (issue 34: "doubt only what can change the story") ----------

# A ZooKeeper grant on zk-1, on a 2 s session (the scenario's ttl_ms).
ZK_GRANT = {"t_ms": 5, "actor": "alice", "kind": "granted", "node": "zk-1", "ttl_ms": 2000}


def zk(*seen: dict[str, Any]) -> Story:
    return told(ZK_GRANT, *seen, sessions=True)


def test_a_zookeeper_grant_has_no_end_while_its_session_lives() -> None:
    # Its session's heartbeats renew it in the background: no shift, however long, moves a
    # moment across an end it does not have (seen: "lou's lease ends at 5013 ms" made a run
    # inconclusive at a server's restart three seconds after her grant).
    story = zk()
    assert story.crossing(STEPS, late_ms=2200, margin_ms=50) is None
    assert story.crossing([(1000, "step 7 (restart)")], late_ms=60_000, margin_ms=50) is None
    assert story.marks() == []


def test_a_frozen_zookeeper_holder_s_session_counts_down_from_her_pause() -> None:
    # Frozen at 300 ms: no heartbeat after that, so her session ends at most 2 s later, and as
    # early as a third of it before that (her last heartbeat may have come that long before).
    story = zk({"t_ms": 300, "actor": "alice", "kind": "paused", "ms": 3000})
    [session] = story.timers()
    assert (session.end_ms, session.early_ms) == (2300, 2000 / 3)
    crossing = story.crossing([(1000, "step 3 (acquire)")], late_ms=700, margin_ms=50)
    assert crossing is not None and crossing.fixed == Mark("lease", "alice", 2300, 2000 / 3)
    assert story.crossing([(1000, "step 3 (acquire)")], late_ms=500, margin_ms=50) is None


def test_a_zookeeper_session_thawed_in_time_lives_on_and_one_expired_ends_where_it_did() -> None:
    paused = {"t_ms": 300, "actor": "alice", "kind": "paused", "ms": 1000}
    thawed = {"t_ms": 1300, "actor": "alice", "kind": "resumed"}
    assert zk(paused, thawed).crossing(STEPS, late_ms=5000, margin_ms=50) is None
    expired = {"t_ms": 2250, "actor": "zk-1", "kind": "expired", "key": "/lockviz/lock/x",
               "holder": "alice"}  # fmt: skip
    [session] = zk(paused, expired, {**thawed, "t_ms": 3300}).timers()
    assert session.end_ms == 2250  # ended on the server: thawing does not bring it back


def test_a_zookeeper_session_counts_down_while_its_server_is_down_or_cut_off() -> None:
    crashed = {"t_ms": 1000, "actor": "zk-1", "kind": "crashed"}
    cut = {"t_ms": 1000, "actor": "zk-1", "kind": "link", "peers": ["zk-2", "zk-3"],
           "mode": "blackhole"}  # fmt: skip
    for stop in (crashed, cut):
        assert [t.end_ms for t in zk(stop).timers()] == [3000]
    # Another server of the ensemble crashing, and coming back, stops nothing of hers.
    other = {"t_ms": 1000, "actor": "zk-3", "kind": "crashed"}
    back = {"t_ms": 2400, "actor": "zk-3", "kind": "restarted", "persistence": "fsync"}
    assert zk(other, back).marks() == []
    # Back again (reconnected, healed): alive again, no end.
    reconnected = {"t_ms": 1500, "actor": "alice", "kind": "session", "state": "CONNECTED"}
    healed = {**cut, "t_ms": 1500, "mode": "pass"}
    assert zk(crashed, {**back, "actor": "zk-1"}).marks() == []
    assert zk(cut, healed).marks() == []
    suspended = {"t_ms": 900, "actor": "alice", "kind": "session", "state": "SUSPENDED"}
    assert [t.end_ms for t in zk(suspended).timers()] == [2900]
    assert zk(suspended, reconnected).marks() == []


def test_a_crashed_zookeeper_holder_s_session_outlives_her_by_its_timeout() -> None:
    # kill -9: the server keeps her node until her session times out; her wait ends at once.
    crashed = {"t_ms": 700, "actor": "alice", "kind": "crashed"}
    assert [(t.kind, t.end_ms) for t in zk(crashed).timers()] == [("lease", 2700)]


def test_a_lease_a_watchdog_renews_has_no_end_until_its_holder_freezes() -> None:
    # etcd's keepalive (or Redisson's watchdog): renewed every third of the ttl in the
    # background, from its start on; frozen with its process, the lease ends a ttl after the
    # last renewal that got through.
    etcd = {**GRANTED, "node": "etcd-1"}
    renewing = {"t_ms": 6, "actor": "alice", "kind": "renewal_started", "interval_ms": 667}
    renewed = {"t_ms": 680, "actor": "alice", "kind": "extended", "ok": True, "ttl_ms": 2000}
    story = told(etcd, renewing, renewed)
    assert story.marks() == [] and story.crossing(STEPS, late_ms=9000, margin_ms=50) is None
    paused = {"t_ms": 1000, "actor": "alice", "kind": "paused", "ms": 5000}
    [lease] = told(etcd, renewing, renewed, paused).timers()
    assert (lease.end_ms, lease.early_ms) == (2680, 0.0)  # its last renewal is known
    released = {"t_ms": 900, "actor": "alice", "kind": "releasing"}
    assert [t.end_ms for t in told(etcd, renewing, renewed, released).timers()] == [900]


def test_a_leader_change_in_an_etcd_cluster_stops_no_keepalive_of_a_grant_on_another_member() -> (
    None
):
    # The leader, etcd-2, is killed and restarted; alice's grant and keepalive are on etcd-1
    # (a new leader renews every lease it takes over). A shift while etcd-2 boots moves no
    # moment across an end: the run stays judged.
    etcd = {**GRANTED, "node": "etcd-1"}
    renewing = {"t_ms": 6, "actor": "alice", "kind": "renewal_started", "interval_ms": 667}
    crashed = {"t_ms": 1000, "actor": "etcd-2", "kind": "crashed"}
    back = {"t_ms": 2500, "actor": "etcd-2", "kind": "restarted", "persistence": "fsync"}
    story = told(etcd, renewing, crashed, back)
    assert story.crossing([(1200, "step 5 (acquire)")], late_ms=3000, margin_ms=50) is None
    # Her own member crashing stops her keepalive: her lease ends 2 s after its last renewal.
    own = told(etcd, renewing, {**crashed, "actor": "etcd-1"})
    assert [t.end_ms for t in own.timers()] == [2005]
