"""The claims of the etcd lessons' checkpoints."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import token_gap, write_is
from lockviz.teaching.history import Finding, History, finding, ms

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
