"""The claims of the Redlock lessons' checkpoints."""

from __future__ import annotations

import re

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.history import Finding, History, finding, ms


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
