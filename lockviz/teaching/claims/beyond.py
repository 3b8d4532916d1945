"""The claims of the lessons beyond one lock (issue 36): pooled transactions, fenced reads,
elections, replicated storage."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import granted_after_expiry, write_is
from lockviz.teaching.history import Finding, History, finding, ms


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
