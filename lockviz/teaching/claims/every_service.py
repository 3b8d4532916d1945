"""The claims of "one pause, every lock service": the GC pause again, on each lock service."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import granted_after_expiry, write_is
from lockviz.teaching.history import Finding, History, finding, ms


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
