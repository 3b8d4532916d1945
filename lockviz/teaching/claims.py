"""What each checkpoint's answer claims about a run, as a check on the run's events.

A lesson's answer must hold for every live run of its script, not only for the one recorded.
So each checkpoint (a step with an ``ask``) has a claim here: a function of a run's
:class:`~lockviz.teaching.history.History` that says whether the run agrees with the answer,
and why. The claims check causes and order ("Bob is granted after the server expired Alice's
lease"), with margins where a time matters, never a millisecond. ``tests/lockviz/teaching/
test_claims.py`` runs them on every recorded run and requires one claim per checkpoint;
``bench/lessons.py`` runs them on fresh live runs (a run that could not keep its story is
inconclusive: counted and run again, never counted as agreeing).

Over ~300 lines on purpose: one table, a claim per checkpoint of the course, read together.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lockviz.lab.events import EventJson
from lockviz.teaching.history import FOREVER, Finding, History, finding, ms

ELECTION_HEARD_LATE_MS = 500  # a leader watcher's poll (0.1 s) and its three srvr asks (0.2 s)

Claim = Callable[[History], Finding]
CLAIMS: dict[tuple[str, int], Claim] = {}


def claim(slug: str, index: int) -> Callable[[Claim], Claim]:
    """Register the claim of checkpoint ``index`` (the step's place in the script) of ``slug``."""

    def register(check: Claim) -> Claim:
        CLAIMS[(slug, index)] = check
        return check

    return register


# -- shapes shared by several lessons --------------------------------------------------------


def write_is(slug: str, index: int, accepted: bool) -> None:
    """The storage accepted (or rejected) step ``index``'s write."""

    def check(h: History) -> Finding:
        reply = h.wrote(index)
        got = reply.get("accepted") if reply is not None else None
        return finding(got is accepted, f"step {index + 1}'s write: accepted = {got}")

    claim(slug, index)(check)


def granted_after_expiry(slug: str, index: int, who: str, holder: str, higher: bool) -> None:
    """``who`` is granted after step ``index``, once the server ended ``holder``'s lock, while
    ``holder`` (frozen) still believes it holds it; with a higher token if ``higher``."""

    def check(h: History) -> Finding:
        grant = h.granted(who, after=h.step(index))
        ended = h.of("expired", holder) or [
            e
            for e in h.events
            if e.get("kind") in ("expired", "deleted") and e.get("holder") == holder
        ]
        old, new = h.token(holder), h.token(who, after=h.step(index))
        thawed = ms(h.first("resumed", holder))  # the server ended it while the holder slept
        ok = (
            grant is not None
            and any(ms(e) < thawed for e in ended)
            and h.believes(holder, ms(grant))
            and (not higher or (old is not None and new is not None and new > old))
        )
        return finding(ok, f"{who} granted at {ms(grant):.0f} ms; tokens {old} → {new}")

    claim(slug, index)(check)


def never_granted(slug: str, index: int, who: str, until: float | None = None) -> None:
    """``who`` polls from step ``index`` and gives up without a grant."""

    def check(h: History) -> Finding:
        start = h.step(index)
        end = h.step(int(until)) if until is not None else float("inf")
        grant = h.granted(who, after=start, before=end)
        gave_up = h.of("acquire_failed", who, after=start, before=end)
        refused = [e for e in h.replies(who, "acquire", after=start) if not e.get("ok")]
        ok = grant is None and bool(gave_up) and len(refused) >= 2
        return finding(ok, f"{who}: {len(refused)} refusals, gave up: {bool(gave_up)}")

    claim(slug, index)(check)


def token_gap(slug: str, index: int) -> None:
    """Bob's token (a czxid, a revision) is above Alice's by more than one."""

    def check(h: History) -> Finding:
        old, new = h.token("alice"), h.token("bob", after=h.step(index))
        ok = old is not None and new is not None and new > old + 1
        return finding(ok, f"alice's token {old}, bob's {new}")

    claim(slug, index)(check)


def woken(slug: str, index: int, expect: set[str]) -> None:
    """Alice's release at step ``index`` wakes exactly ``expect``, and Bob alone is granted."""

    def check(h: History) -> Finding:
        start, end = h.step(index), h.step(index + 1)
        who = {str(e.get("actor")) for e in h.of("woken", after=start, before=end)}
        granted = {str(e.get("actor")) for e in h.of("granted", after=start, before=end)}
        return finding(
            who == expect and granted == {"bob"}, f"woken {sorted(who)}, granted {sorted(granted)}"
        )

    claim(slug, index)(check)


# -- Single Redis ----------------------------------------------------------------------------


@claim("contention", 1)
def _bob_refused_at_once(h: History) -> Finding:
    first = h.replies("bob", "acquire", after=h.step(1))[:1]
    retries = h.requests("bob", "acquire", after=h.step(1), before=h.step(3))
    ok = (
        bool(first)
        and first[0].get("ok") is False
        and ms(first[0]) < h.step(2)
        and len(retries) >= 3
    )
    return finding(
        ok, f"first answer {first[0].get('ok') if first else None}, {len(retries)} tries"
    )


@claim("contention", 3)
def _bob_on_next_try(h: History) -> Finding:
    released = h.first("released", "alice")  # her own account: the server's may come later
    grant = h.granted("bob")
    gap = ms(grant) - ms(released)
    return finding(0 <= gap < 500, f"bob granted {gap:.0f} ms after alice's release")


never_granted("naive-no-ttl-crash", 2, "bob")
granted_after_expiry("gc-pause-unfenced", 2, "bob", "alice", higher=False)
write_is("gc-pause-unfenced", 5, accepted=True)
granted_after_expiry("gc-pause-fenced", 2, "bob", "alice", higher=True)
write_is("gc-pause-fenced", 5, accepted=False)


@claim("unsafe-release", 3)
def _del_deletes_bobs(h: History) -> Finding:
    gone = h.of("deleted", "redis-1", after=h.step(3), before=h.step(4), holder="bob")
    return finding(bool(gone) and h.believes("bob", h.step(4)), f"bob's key deleted: {bool(gone)}")


@claim("unsafe-release", 4)
def _carol_granted(h: History) -> Finding:
    grant = h.granted("carol", after=h.step(4), before=h.step(5))
    return finding(
        grant is not None and h.believes("bob", ms(grant)), "carol granted while bob believes"
    )


@claim("watchdog-pause", 2)
def _expires_after_last_extend(h: History) -> Finding:
    extends = h.of("extended", "alice", before=h.step(2), ok=True)
    expired = h.of("expired", "redis-1", after=h.step(2), holder="alice")
    gap = ms(expired[0] if expired else None) - ms(extends[-1] if extends else None, 0)
    return finding(
        bool(extends) and 1200 <= gap <= 2500, f"expired {gap:.0f} ms after the last extend"
    )


@claim("redis-restart", 3)
def _same_token(h: History) -> Finding:
    old, new = h.token("alice"), h.token("bob", after=h.step(3))
    return finding(old == new == 1 and h.believes("alice", h.step(4)), f"tokens {old} and {new}")


# -- Replicas and failover (issue 35) --------------------------------------------------------


def _promoted(h: History, after: float) -> EventJson | None:
    """The first replica Sentinel promoted after ``after`` (its ``role`` event)."""
    return next(iter(h.of("role", after=after, role="primary")), None)


def _has_key(h: History, node: str, holder: str, before: float) -> bool:
    return bool(h.of("replicated", node, before=before, holder=holder))


@claim("redis-failover", 2)
def _promoted_without_the_key(h: History) -> Finding:
    role = _promoted(h, h.step(2))
    node = str(role.get("actor")) if role is not None else "nobody"
    had = _has_key(h, node, "alice", ms(role))
    grant = h.granted("bob", after=h.step(3))
    ok = (
        role is not None and ms(role) < h.step(3) and not had
        and grant is not None and grant.get("node") == node
    )  # fmt: skip
    return finding(ok, f"{node} promoted at {ms(role):.0f} ms, had alice's key: {had}")


def same_token(slug: str, index: int) -> None:
    """Bob is granted at step ``index`` while Alice still believes she holds the lock, with
    Alice's own token (the counter failed over with the lock)."""

    def check(h: History) -> Finding:
        grant = h.granted("bob", after=h.step(index))
        old, new = h.token("alice"), h.token("bob", after=h.step(index))
        ok = grant is not None and h.believes("alice", ms(grant)) and old is not None and old == new
        return finding(ok, f"alice's token {old}, bob's {new}, granted at {ms(grant):.0f} ms")

    claim(slug, index)(check)


same_token("redis-failover", 3)
write_is("redis-failover", 5, accepted=True)


@claim("redis-failover-wait", 1)
def _one_acknowledged(h: History) -> Finding:
    waited = [e for e in h.replies("alice", "wait", after=h.step(1)) if e.get("ok")][:1]
    acked = waited[0].get("acked") if waited else None
    grant = h.granted("alice", after=h.step(1))
    on = [n for n in ("redis-2", "redis-3") if _has_key(h, n, "alice", h.step(2))]
    ok = acked == 1 and grant is not None and on == ["redis-2"]
    return finding(ok, f"WAIT acknowledged by {acked}; alice's key on {on}")


@claim("redis-failover-wait", 3)
def _waits_for_alice(h: History) -> Finding:
    first = h.replies("bob", "acquire", after=h.step(3))[:1]
    grant, freed = h.granted("bob", after=h.step(3)), h.first("releasing", "alice")
    refused = bool(first) and not first[0].get("ok")
    ok = refused and grant is not None and ms(grant) > ms(freed)
    return finding(ok, f"refused at first: {refused}; granted at {ms(grant):.0f} ms, after "
                       f"alice let go at {ms(freed):.0f}")  # fmt: skip


@claim("redis-failover-wait-loses", 2)
def _priority_first(h: History) -> Finding:
    role = _promoted(h, h.step(2))
    node = str(role.get("actor")) if role is not None else "nobody"
    behind = not _has_key(h, "redis-2", "alice", ms(role))
    ahead = _has_key(h, "redis-3", "alice", ms(role))
    ok = node == "redis-2" and behind and ahead
    return finding(ok, f"{node} promoted; redis-2 behind: {behind}, redis-3 had the key: {ahead}")


same_token("redis-failover-wait-loses", 3)


@claim("redis-split-primary", 5)
def _inside_the_lag(h: History) -> Finding:
    grant = h.granted("alice", after=h.step(5))
    cut = h.step(2)
    ok = grant is not None and grant.get("node") == "redis-1" and ms(grant) - cut < 2000
    return finding(ok, f"alice granted on {grant and grant.get('node')}, "
                       f"{ms(grant) - cut:.0f} ms after the cut")  # fmt: skip


@claim("redis-split-primary", 6)
def _two_primaries(h: History) -> Finding:
    grant = h.granted("bob", after=h.step(6))
    old, new = h.token("alice", after=h.step(5)), h.token("bob", after=h.step(6))
    other = grant is not None and grant.get("node") != "redis-1"
    ok = other and h.believes("alice", ms(grant)) and old is not None and old == new
    return finding(ok, f"bob granted on {grant and grant.get('node')}; tokens {old} and {new}")


@claim("redis-split-primary", 9)
def _noreplicas(h: History) -> Finding:
    said = [e for e in h.replies("alice", "extend", after=h.step(9)) if "ok" in e][:1]
    reason = str(said[0].get("reason", "")) if said else ""
    ok = bool(said) and not said[0].get("ok") and reason.startswith("NOREPLICAS")
    return finding(ok, f"alice's extend: {reason or said}")


# -- Redlock ---------------------------------------------------------------------------------


@claim("redlock-happy", 1)
def _no_token(h: History) -> Finding:
    sent = h.requests("alice", "write", after=h.step(1))
    token = sent[0].get("token") if sent else "none sent"
    grant = h.granted("alice")
    return finding(
        token in (0, None) and grant is not None and grant.get("token") is None, f"token {token}"
    )


@claim("redlock-contention", 1)
def _undo_and_retry(h: History) -> Finding:
    rounds = h.rounds("bob", after=h.step(1), before=h.step(3))
    first = h.replies("bob", "acquire", after=h.step(1))[:5]
    undo = h.requests("bob", "release", after=ms(first[-1] if first else None, 0))[:5]
    again = [e for e in h.requests("bob", "acquire", after=ms(undo[-1] if undo else None, 0))][:1]
    delay = ms(again[0] if again else None) - ms(undo[-1] if undo else None, 0)
    ok = rounds[:1] == [0] and len(undo) == 5 and 90 <= delay <= 1000
    return finding(ok, f"rounds {rounds[:3]}, {len(undo)} undone, next round {delay:.0f} ms later")


@claim("redlock-two-down", 2)
def _three_of_five(h: History) -> Finding:
    grant = h.granted("alice", after=h.step(2))
    nodes = sorted(map(str, grant.get("nodes") or [])) if grant is not None else []  # type: ignore[arg-type]
    return finding(nodes == ["redis-1", "redis-2", "redis-3"], f"granted by {nodes}")


@claim("redlock-three-down", 3)
def _two_of_five(h: History) -> Finding:
    rounds = h.rounds("alice", after=h.step(3))
    failed = h.of("acquire_failed", "alice", after=h.step(3))
    ok = bool(rounds) and max(rounds) <= 2 and bool(failed) and h.granted("alice") is None
    return finding(ok, f"yeses per round {rounds}, gave up: {bool(failed)}")


@claim("redlock-slow-network", 1)
def _too_late(h: History) -> Finding:
    rounds = h.rounds("alice", after=h.step(1))
    late = [e for e in h.of("note", "alice") if "too late" in str(e.get("text"))]
    ok = rounds[:1] == [5] and bool(late) and h.granted("alice") is None
    return finding(ok, f"yeses per round {rounds}, refused as too late: {bool(late)}")


@claim("redlock-restart", 5)
def _second_majority(h: History) -> Finding:
    grant = h.granted("bob", after=h.step(5))
    nodes = sorted(map(str, grant.get("nodes") or [])) if grant is not None else []  # type: ignore[arg-type]
    ok = nodes == ["redis-3", "redis-4", "redis-5"] and h.believes("alice", ms(grant))
    return finding(ok, f"bob granted by {nodes} while alice believes")


@claim("redlock-restart-fsync", 5)
def _refused_by_the_restarted_node(h: History) -> Finding:
    no = [e for e in h.replies("bob", "acquire", after=h.step(5)) if e.get("from") == "redis-3"]
    failed = h.of("acquire_failed", "bob", after=h.step(5))
    ok = bool(no) and not any(e.get("ok") for e in no) and bool(failed) and h.granted("bob") is None
    return finding(
        ok,
        f"redis-3: {sum(1 for e in no if e.get('ok'))} yes of {len(no)}; gave up: {bool(failed)}",
    )


@claim("redlock-clock-jump", 3)
def _expires_at_once(h: History) -> Finding:
    jumped = h.first("clock_jumped", "redis-3")
    expired = h.of("expired", "redis-3", after=ms(jumped), holder="alice")
    gap = ms(expired[0] if expired else None) - ms(jumped)
    grant = h.granted("bob", after=h.step(4))
    second = "redis-3" in (grant.get("nodes") or []) if grant is not None else False  # type: ignore[operator]
    return finding(gap < 2000 and second, f"expired {gap:.0f} ms after the jump (7 s were left)")


@claim("redlock-slow-clock", 4)
def _writes_over(h: History) -> Finding:
    checked = [e for e in h.of("note", "alice", after=h.step(4)) if "left" in str(e.get("text"))]
    left = re.search(r"(-?\d+) ms left", str(checked[0].get("text"))) if checked else None
    reply = h.wrote(4)
    ok = (
        left is not None
        and 500 <= int(left[1]) <= 1500
        and reply is not None
        and reply.get("accepted")
    )
    return finding(
        bool(ok),
        f"her clock: {left[1] if left else '?'} ms left; taken: {reply and reply.get('accepted')}",
    )


# -- ZooKeeper -------------------------------------------------------------------------------

token_gap("zk-happy", 3)


@claim("zk-contention", 3)
def _woken_not_polling(h: History) -> Finding:
    wake = h.of("woken", "bob", after=h.step(3))
    grant = h.granted("bob", after=h.step(3))
    woke = ms(wake[0] if wake else None)
    # listings strictly before the wake-up (the one it makes may share its millisecond)
    polls = [e for e in h.requests("bob", "children", after=h.step(1) + 100) if ms(e) < woke]
    ok = bool(wake) and grant is not None and ms(grant) >= ms(wake[0]) and not polls
    return finding(ok, f"woken: {bool(wake)}, listings while waiting: {len(polls)}")


woken("zk-herd", 4, {"bob", "carol", "dave"})
woken("zk-no-herd", 4, {"bob"})


@claim("zk-partition", 1)
def _warned_then_expired(h: History) -> Finding:
    lost = h.first("lost", "alice")
    expired = h.first("expired", "zk-1", holder="alice")
    ok = ms(lost) < ms(expired) < h.step(2)
    return finding(ok, f"lost at {ms(lost):.0f} ms, expired at {ms(expired):.0f} ms")


write_is("zk-partition", 6, accepted=False)


@claim("zk-ensemble-partition", 2)
def _both_believe(h: History) -> Finding:
    grant = h.granted("bob", after=h.step(2))
    lost = h.first("lost", "alice")
    home = h.granted("alice")  # the premise: alice is connected to zk-1, the server cut off
    on = home.get("node") if home is not None else None
    ok = on == "zk-1" and grant is not None and ms(lost) > ms(grant)
    return finding(
        ok, f"alice on {on}; bob granted at {ms(grant):.0f}, alice lost at {ms(lost):.0f}"
    )


@claim("zk-session-survives", 2)
def _session_moves(h: History) -> Finding:
    crash = h.step(2)
    back = h.first("session", "alice", state="RECONNECTED")
    server = back.get("server") if back is not None else None
    freed = h.first("releasing", "alice")
    ended = [
        e for kind in ("lost", "expired") for e in h.of(kind, before=ms(freed))
        if e.get("actor") == "alice" or e.get("holder") == "alice"
    ]  # fmt: skip
    grant = h.granted("bob")
    ok = (
        server not in (None, "zk-1") and crash < ms(back) < ms(freed)
        and not ended and ms(grant) > ms(freed)
    )  # fmt: skip
    return finding(ok, f"alice RECONNECTED to {server}; her lock ended early: {bool(ended)}")


@claim("zk-leader-crash", 2)
def _both_suspended(h: History) -> Finding:
    # A follower serves again only once the new leader has synced it, so a reconnect follows
    # the election; but the ``role`` event is when the lab's watcher *noticed* the leader (it
    # polls ``srvr`` every 0.1 s, each answer up to 0.2 s): a client may be heard reconnecting
    # a little before it. Seen in bench/lessons: 5 to 62 ms before.
    crash, found = h.step(2), []
    heard = ms(h.first("role", role="leader"))
    for who in ("alice", "bob"):
        out = h.first("session", who, state="SUSPENDED")
        back = h.first("session", who, state="RECONNECTED")
        lost = h.of("session", who, state="LOST")
        found.append(
            crash < ms(out) < heard < FOREVER and not lost
            and heard - ELECTION_HEARD_LATE_MS <= ms(back) < FOREVER
        )  # fmt: skip
    return finding(all(found), f"suspended, then reconnected after the election: {found}")


@claim("zk-leader-crash", 3)
def _gave_up_on_suspended(h: History) -> Finding:
    out, lost = h.first("session", "alice", state="SUSPENDED"), h.first("lost", "alice")
    grant = h.granted("bob", after=h.step(2))
    ok = ms(out) <= ms(lost) and ms(grant) < h.step(3) and not h.believes("alice", h.step(3))
    return finding(ok, f"alice gave up at {ms(lost):.0f} ms, bob granted at {ms(grant):.0f}")


# -- PostgreSQL ------------------------------------------------------------------------------


@claim("pg-happy", 3)
def _token_two(h: History) -> Finding:
    return finding(
        h.token("alice") == 1 and h.token("bob", after=h.step(3)) == 2, "tokens 1 then 2"
    )


@claim("pg-contention", 1)
def _false_at_once(h: History) -> Finding:
    first = h.replies("bob", "acquire", after=h.step(1))[:1]
    polls = h.requests("bob", "acquire", after=h.step(1), before=h.step(3))
    ok = (
        bool(first) and first[0].get("ok") is False and ms(first[0]) < h.step(2) and len(polls) >= 3
    )
    return finding(ok, f"first answer {first[0].get('ok') if first else None}, {len(polls)} polls")


@claim("pg-crash-frees", 3)
def _next_poll(h: History) -> Finding:
    grant = h.granted("bob", after=h.step(3))
    gap = ms(grant) - ms(h.first("crashed", "alice"))
    return finding(0 <= gap < 500, f"bob granted {gap:.0f} ms after alice's crash")


@claim("pg-restart-frees", 4)
def _higher_after_restart(h: History) -> Finding:
    # From the restart step: the lab records "restarted" once it sees the server serve, which
    # can come after a poll of bob's has already been granted (a live run showed it).
    old, new = h.token("alice"), h.token("bob", after=h.step(4))
    return finding(old is not None and new is not None and new > old, f"tokens {old} → {new}")


write_is("pg-restart-frees", 6, accepted=False)
never_granted("pg-pause-blocks", 2, "bob", until=3)
write_is("pg-pause-blocks", 3, accepted=True)
never_granted("pg-ghost-holder", 2, "bob")


@claim("pg-ghost-holder-timeout", 2)
def _about_two_seconds(h: History) -> Finding:
    gap = ms(h.granted("bob")) - ms(h.granted("alice"))
    return finding(1500 <= gap <= 3500, f"bob granted {gap:.0f} ms after alice's last statement")


@claim("pg-ghost-holder-timeout", 3)
def _bob_goes_too(h: History) -> Finding:
    grant = h.granted("bob")
    ended = h.of("deleted", "pg-1", after=ms(grant), before=h.step(4), holder="bob")
    ok = bool(ended) and not h.of("releasing", "bob") and 1500 <= ms(ended[0]) - ms(grant) <= 3500
    return finding(
        ok,
        f"bob's session ended {ms(ended[0] if ended else None) - ms(grant):.0f} ms after his grant",
    )


@claim("pg-ghost-holder-reset", 1)
def _freed_at_once(h: History) -> Finding:
    gone = h.of("deleted", "pg-1", after=h.step(1), before=h.step(3), holder="alice")
    first = h.replies("bob", "acquire", after=h.step(2))[:1]  # granted at its first try
    ok = bool(gone) and bool(first) and first[0].get("ok") is True
    return finding(
        ok,
        f"alice's lock gone: {bool(gone)}; bob's first try: {first and first[0].get('ok')}",
    )


@claim("pg-pooled-leak", 2)
def _same_session(h: History) -> Finding:
    grant = h.granted("bob", after=h.step(2))
    ours = [str(e.get("value", "")).split(":")[-1] for e in (h.granted("alice"), grant) if e]
    ok = grant is not None and h.believes("alice", ms(grant)) and len(set(ours)) == 1
    return finding(ok, f"granted in sessions {ours}")


# -- etcd ------------------------------------------------------------------------------------

token_gap("etcd-happy", 3)


@claim("etcd-contention", 4)
def _queue(h: History) -> Finding:
    bob, carol = h.granted("bob", after=h.step(4)), h.granted("carol")
    ok = bob is not None and ms(bob) < h.step(5) and ms(carol) > h.step(6)
    return finding(ok, f"bob at {ms(bob):.0f} ms, carol at {ms(carol):.0f} ms")


@claim("etcd-renew-pause", 3)
def _after_the_lease(h: History) -> Finding:
    expired = h.first("expired", "etcd-1", holder="alice")
    grant = h.granted("bob", after=h.step(3))
    renewed = h.of("extended", "alice", before=h.step(2), ok=True)  # her last keepalive
    last = ms(renewed[-1] if renewed else h.granted("alice"))
    thawed = ms(h.first("resumed", "alice"))
    ok = expired is not None and ms(grant) - last >= 1500 and ms(grant) < thawed
    return finding(
        ok, f"alice's lease expired at {ms(expired):.0f}, bob granted at {ms(grant):.0f}"
    )


@claim("etcd-leader-crash", 2)
def _lease_kept(h: History) -> Finding:
    crash = h.step(2)
    renewed = [e for e in h.of("reply", "alice", before=crash) if e.get("op") == "keepalive"]
    grant = h.granted("alice")
    ttl = grant.get("ttl_ms") if grant is not None else None
    last = ms(renewed[-1] if renewed else grant)
    left = (ttl if isinstance(ttl, int) else 0) - (crash - last)  # left when the leader died
    role = h.first("role", role="leader")
    leases = role.get("leases") if role is not None else None
    kept = leases.get("alice") if isinstance(leases, dict) else None
    extended = h.first("extended", "alice", ok=True)
    early = h.of("expired", before=h.step(5), holder="alice")
    ok = (
        isinstance(kept, int | float) and kept > left + 300
        and extended is not None and not early
    )  # fmt: skip
    return finding(ok, f"{left:.0f} ms left at the crash; the new leader gives her {kept} ms")


write_is("etcd-leader-crash", 7, accepted=False)


# -- What the storage checks -----------------------------------------------------------------


@claim("storage-lost-update", 3)
def _overwrites_unseen(h: History) -> Finding:
    reply = h.wrote(3)
    ok = reply is not None and reply.get("accepted") is True and reply.get("found") == 1
    return finding(ok, f"accepted on version {reply and reply.get('found')}")


write_is("storage-lost-update-cas", 3, accepted=False)
write_is("storage-hole-fenced", 5, accepted=True)


@claim("storage-hole-fenced", 6)
def _stale_by_its_read(h: History) -> Finding:
    reply, alice = h.wrote(6), h.wrote(5)
    ok = (
        reply is not None and reply.get("accepted") is True and alice is not None
        and reply.get("found") == alice.get("version") and reply.get("found") != 0
    )  # fmt: skip
    return finding(ok, f"bob read version 0 and found version {reply and reply.get('found')}")


write_is("storage-hole-plain", 5, accepted=True)


@claim("storage-hole-sequencer", 5)
def _node_gone(h: History) -> Finding:
    reply = h.wrote(5)
    checks = h.of("reply", "storage", after=h.step(5), current=False)
    ok = reply is not None and reply.get("accepted") is False and bool(checks)
    return finding(ok, f"refused: {reply and reply.get('reason')}")


@claim("storage-hole-sequencer", 6)
def _one_round_trip(h: History) -> Finding:
    reply = h.wrote(6)
    asked = h.of("request", "storage", after=h.step(6), before=ms(reply), op="check")
    ok = reply is not None and reply.get("accepted") is True and len(asked) >= 1
    return finding(ok, f"{len(asked)} check(s) before bob's write was applied")


write_is("storage-hole-cas", 5, accepted=True)
write_is("storage-hole-cas", 6, accepted=False)


@claim("storage-retry-duplicate", 6)
def _applied_again(h: History) -> Finding:
    reply, bob = h.wrote(6), h.wrote(5)
    ok = (
        reply is not None and reply.get("accepted") is True and not reply.get("duplicate")
        and bob is not None and reply.get("found") == bob.get("version")
    )  # fmt: skip
    return finding(ok, f"the retry applied over version {reply and reply.get('found')}")


@claim("storage-retry-idempotent", 6)
def _answered_once(h: History) -> Finding:
    reply = h.wrote(6)
    dup = reply.get("duplicate") if reply is not None else None
    return finding(dup is True, f"the retry answered as a duplicate: {dup}")


# -- One pause, every lock service -----------------------------------------------------------


@claim("zk-gc-pause-fenced", 2)
def _only_his_node(h: History) -> Finding:
    listed = h.replies("bob", "children", after=h.step(2))[:1]
    children = listed[0].get("children") if listed else None
    only = isinstance(children, list) and len(children) == 1 and str(children[0]).startswith("bob.")
    old, new = h.token("alice"), h.token("bob", after=h.step(2))
    ok = (
        only
        and old is not None
        and new is not None
        and new > old
        and h.believes("alice", h.step(3))
    )
    return finding(ok, f"bob's first listing {children}; czxids {old} → {new}")


write_is("zk-gc-pause-fenced", 5, accepted=False)


@claim("pg-gc-pause-fenced", 2)
def _returns_at_the_timeout(h: History) -> Finding:
    gap = ms(h.granted("bob")) - ms(h.granted("alice"))
    ok = 1500 <= gap <= 3500 and ms(h.granted("bob")) < ms(h.first("resumed", "alice"))
    return finding(ok, f"bob granted {gap:.0f} ms after alice's last statement")


write_is("pg-gc-pause-fenced", 5, accepted=False)
granted_after_expiry("etcd-gc-pause-fenced", 2, "bob", "alice", higher=True)
write_is("etcd-gc-pause-fenced", 5, accepted=False)
write_is("redlock-gc-pause", 5, accepted=True)
write_is("redlock-gc-pause-sequencer", 5, accepted=False)


# -- Beyond one lock, and the lessons of issue 36 ---------------------------------------------


@claim("pg-pooled-xact", 2)
def _waits_for_the_transaction(h: History) -> Finding:
    grant = h.granted("bob", after=h.step(2))
    ended = h.first("releasing", "alice")
    ok = grant is not None and ms(grant) >= ms(ended) and h.step(5) <= ms(grant)
    return finding(
        ok, f"bob granted at {ms(grant):.0f} ms, after alice's commit at {ms(ended):.0f}"
    )


@claim("storage-hole-fenced-reads", 4)
def _raised_by_a_read(h: History) -> Finding:
    read = h.replies("bob", "read", after=h.step(4))[:1]
    reply = h.wrote(5)
    raised = bool(read) and read[0].get("token") == h.token("bob")
    ok = raised and reply is not None and reply.get("accepted") is False
    return finding(ok, f"bob's read carried his token: {raised}; alice's write refused: {ok}")


for _slug in ("leader-etcd-pause-fenced", "leader-etcd-pause-plain"):
    granted_after_expiry(_slug, 3, "bob", "alice", higher=True)
write_is("leader-etcd-pause-fenced", 5, accepted=False)
write_is("leader-etcd-pause-plain", 5, accepted=True)


@claim("leader-zk-partition-fenced", 3)
def _leader_replaced(h: History) -> Finding:
    lost, expired = h.first("lost", "alice"), h.first("expired", "zk-1", holder="alice")
    grant = h.granted("bob", after=h.step(3))
    old, new = h.token("alice"), h.token("bob", after=h.step(3))
    higher = old is not None and new is not None and new > old
    ok = grant is not None and ms(lost) < ms(expired) < h.step(5) and higher
    return finding(ok, f"warned {ms(lost):.0f}, expired {ms(expired):.0f}, epochs {old} → {new}")


write_is("leader-zk-partition-fenced", 6, accepted=False)


def _read_after(h: History, index: int, field: str) -> list[object]:
    return [e.get(field) for e in h.replies("bob", "read", after=h.step(index)) if e.get("ok")]


@claim("lww-clock-behind", 8)
def _keeps_a(h: History) -> Finding:
    seen = _read_after(h, 9, "value")
    return finding(bool(seen) and all(v == "A" for v in seen), f"bob reads {seen} after the merge")


@claim("crdt-clock-behind", 8)
def _keeps_both(h: History) -> Finding:
    seen = [sorted(map(str, v)) for v in _read_after(h, 9, "values") if isinstance(v, list)]
    ok = bool(seen) and all(v == ["A", "B"] for v in seen)
    return finding(ok, f"bob reads {seen} after the merge")


@claim("pitfall-write-after-failed-acquire", 3)
def _no_right_to_write(h: History) -> Finding:
    reply = h.wrote(3)
    failed = h.of("acquire_failed", "bob", before=h.step(3))
    ok = bool(failed) and reply is not None and reply.get("accepted") is True and h.stale(reply)
    return finding(ok, f"bob gave up: {bool(failed)}; his write stale and accepted: {ok}")


@claim("pitfall-slow-write", 7)
def _late_and_overwriting(h: History) -> Finding:
    late, bob = h.wrote(4), h.wrote(7)
    ok = (
        late is not None and late.get("accepted") is True and h.stale(late)
        and bob is not None and late.get("found") == bob.get("version")
    )  # fmt: skip
    return finding(
        ok,
        f"A2 found version {late and late.get('found')}, bob's B made {bob and bob.get('version')}",
    )


@claim("pitfall-read-outside-lock", 6)
def _accepted_and_lost(h: History) -> Finding:
    reply, alice = h.wrote(6), h.wrote(3)
    ok = (
        reply is not None and reply.get("accepted") is True and alice is not None
        and reply.get("found") == alice.get("version") and h.verdict().data_corrupted
    )  # fmt: skip
    return finding(ok, f"bob's B accepted on alice's version {reply and reply.get('found')}")
