"""The claims of the ZooKeeper lessons' checkpoints."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import token_gap, woken, write_is
from lockviz.teaching.history import FOREVER, Finding, History, finding, ms

ELECTION_HEARD_LATE_MS = 500  # a leader watcher's poll (0.1 s) and its three srvr asks (0.2 s)


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
