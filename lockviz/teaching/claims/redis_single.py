"""The claims of the single-Redis lessons' checkpoints."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import granted_after_expiry, never_granted, write_is
from lockviz.teaching.history import Finding, History, finding, ms


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
