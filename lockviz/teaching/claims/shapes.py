"""Shapes of claim shared by several lessons: each registers a checkpoint's claim built from its
arguments."""

from __future__ import annotations

from lockviz.teaching.claims.registry import claim
from lockviz.teaching.history import Finding, History, finding, ms


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
