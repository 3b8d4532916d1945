"""The table of claims, one per checkpoint, and the decorator that fills it."""

from __future__ import annotations

from collections.abc import Callable

from lockviz.teaching.history import Finding, History

Claim = Callable[[History], Finding]
CLAIMS: dict[tuple[str, int], Claim] = {}


def claim(slug: str, index: int) -> Callable[[Claim], Claim]:
    """Register the claim of checkpoint ``index`` (the step's place in the script) of ``slug``."""

    def register(check: Claim) -> Claim:
        CLAIMS[(slug, index)] = check
        return check

    return register
