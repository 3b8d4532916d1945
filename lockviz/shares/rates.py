"""How often one address may do something: each rate named once, counted on the shared cache.

django-ratelimit keeps the count: a fixed window per rate and address (its end jittered per
address), in ``CACHES["default"]``, so several app processes on one Redis share one count. Its
``get_usage`` says how long the window has left, which becomes ``Retry-After``.

A cache that cannot be reached (the channel layer's Redis restarting) lets the request through
and logs it: a share is fairness, not authorization, and a class must not be shut out by a blip.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from lockviz.errors import TooMany

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Rate:
    """``setting`` (how many) per ``period_s``, per address (or per address and room, or
    what ``whose`` names)."""

    group: str  # its name in the cache
    setting: str  # the LOCKVIZ_ setting that holds how many
    period_s: int
    done: str  # what was done, as "<n> <done> <per>" says it: "imports"
    per: str  # "an hour"
    whose: str = "address"  # who is counted: "This <whose> has made ..."

    @property
    def most(self) -> int:
        return int(getattr(settings, self.setting))

    def sentence(self, retry_after_s: int) -> str:
        return (
            f"This {self.whose} has made {self.most} {self.done} {self.per}, as many as one "
            f"{self.whose} may ({self.setting}): try again in {retry_after_s} s."
        )


IMPORTS = Rate("imports", "LOCKVIZ_IMPORTS_PER_HOUR", 3600, "imports", "in an hour")
ROOMS = Rate("rooms", "LOCKVIZ_ROOMS_PER_HOUR", 3600, "new rooms", "in an hour")
JOINS = Rate("joins", "LOCKVIZ_JOINS_PER_MINUTE", 60, "joins", "in a minute")
CODE_MISSES = Rate(
    "code-misses", "LOCKVIZ_CODE_MISSES_PER_HOUR", 3600, "look-ups of codes of no open room",
    "in an hour",
)  # fmt: skip
VOTES = Rate("votes", "LOCKVIZ_VOTES_PER_MINUTE", 60, "answers in this room", "in a minute")
# Guessing a teacher's password (lockviz.accounts.logins): failed logins per address and name,
# per name from everywhere (past it, devices new to the name are slowed: LOGIN_SLOWED), and per
# device that logged in as the name before; a success counts nothing.
LOGIN_FAILURES = Rate(
    "login-failures", "LOCKVIZ_LOGIN_FAILURES_PER_HOUR", 3600,
    "failed logins to this account", "in an hour",
)  # fmt: skip
LOGIN_FAILURES_NAME = Rate(
    "login-failures-name", "LOCKVIZ_LOGIN_FAILURES_PER_HOUR", 3600,
    "failed logins from everywhere", "in an hour", "account",
)  # fmt: skip
LOGIN_SLOWED = Rate(
    "login-slowed", "LOCKVIZ_LOGIN_SLOWED_PER_MINUTE", 60,
    "attempts from devices it was never used on, after many failed logins", "in a minute",
    "account",
)  # fmt: skip
LOGIN_FAILURES_DEVICE = Rate(
    "login-failures-device", "LOCKVIZ_LOGIN_FAILURES_PER_HOUR", 3600,
    "failed logins", "in an hour", "device",
)  # fmt: skip
SIGNUPS = Rate("signups", "LOCKVIZ_SIGNUPS_PER_HOUR", 3600, "new accounts", "in an hour")
PLANS = Rate("plans", "LOCKVIZ_PLANS_PER_HOUR", 3600, "new lecture plans", "in an hour")
RATES = (
    IMPORTS, ROOMS, JOINS, CODE_MISSES, VOTES, LOGIN_FAILURES, LOGIN_FAILURES_NAME,
    LOGIN_SLOWED, LOGIN_FAILURES_DEVICE, SIGNUPS, PLANS,
)  # fmt: skip


def take(rate: Rate, *who: str) -> None:
    """Count one more for ``who`` (an address; for a room's rates, the address and the code);
    :class:`TooMany` when that is past the share. A refused attempt counts too: a script that
    keeps trying stays refused until the window ends."""
    usage = _usage(rate, who, increment=True)
    if usage is not None and usage["count"] > usage["limit"]:
        retry = _retry_after(usage)
        raise TooMany(rate.sentence(retry), retry_after_s=retry)


def check(rate: Rate, *who: str) -> None:
    """:class:`TooMany` if ``who`` has spent its share already; counts nothing."""
    usage = _usage(rate, who, increment=False)
    if usage is not None and usage["count"] >= usage["limit"]:
        retry = _retry_after(usage)
        raise TooMany(rate.sentence(retry), retry_after_s=retry)


_NO_REQUEST = HttpRequest()  # get_usage wants one; the key below does not read it


def _usage(rate: Rate, who: tuple[str, ...], increment: bool) -> dict[str, int] | None:
    value = "|".join(who)
    try:
        usage: dict[str, int] | None = get_usage(
            _NO_REQUEST,
            group=rate.group,
            key=lambda group, request: value,
            rate=(rate.most, rate.period_s),
            increment=increment,
        )
    except Exception:  # the shared cache is away: let it through (see the module's docstring)
        log.warning("could not count %s for %s: let through", rate.group, value, exc_info=True)
        return None
    if usage is not None and usage["time_left"] < 0:  # the cache did not answer: as above
        log.warning("could not count %s for %s: let through", rate.group, value)
        return None
    return usage


def _retry_after(usage: dict[str, int]) -> int:
    return max(1, int(usage["time_left"]))
