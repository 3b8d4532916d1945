"""The claims of the replicas-and-failover lessons' checkpoints (issue 35): Redis replication,
Sentinel."""

from __future__ import annotations

from lockviz.lab.events import EventJson
from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import write_is
from lockviz.teaching.history import Finding, History, finding, ms


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
