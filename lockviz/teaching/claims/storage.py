"""The claims of the lessons on what the storage checks (fencing, sequencers, versions, retries)."""

from __future__ import annotations

from typing import TypeGuard

from lockviz.lab.events import EventJson
from lockviz.teaching.claims.registry import claim
from lockviz.teaching.claims.shapes import write_is
from lockviz.teaching.history import Finding, History, finding, ms


def _applied_over(reply: EventJson | None, version: object) -> TypeGuard[EventJson]:
    """The storage applied the write, over the data at ``version`` (the reply's ``found``)."""
    return reply is not None and reply.get("accepted") is True and reply.get("found") == version


@claim("storage-lost-update", 3)
def _overwrites_unseen(h: History) -> Finding:
    reply = h.wrote(3)
    ok = _applied_over(reply, 1)
    return finding(ok, f"accepted on version {reply and reply.get('found')}")


write_is("storage-lost-update-cas", 3, accepted=False)
write_is("storage-hole-fenced", 5, accepted=True)


@claim("storage-hole-fenced", 6)
def _stale_by_its_read(h: History) -> Finding:
    reply, alice = h.wrote(6), h.wrote(5)
    ok = (
        alice is not None and _applied_over(reply, alice.get("version")) and reply.get("found") != 0
    )
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
    ok = bob is not None and _applied_over(reply, bob.get("version")) and not reply.get("duplicate")
    return finding(ok, f"the retry applied over version {reply and reply.get('found')}")


@claim("storage-retry-idempotent", 6)
def _answered_once(h: History) -> Finding:
    reply = h.wrote(6)
    dup = reply.get("duplicate") if reply is not None else None
    return finding(dup is True, f"the retry answered as a duplicate: {dup}")
