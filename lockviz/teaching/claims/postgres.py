"""The claims of the PostgreSQL advisory-lock lessons' checkpoints."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import never_granted, write_is
from lockviz.teaching.history import Finding, History, finding, ms


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
