"""Who may try a teacher's password now: guessing gets nowhere, and nobody can lock a teacher out.

A name is counted as authentication reads it (:func:`name_key`: NFKC, as Django's
``UsernameField`` normalizes it, then case-folded), so the full-width spelling of a name, or its
capitals, are that name. Then, by device:

- **a device that logged in as the name before** carries a signed device cookie
  (:data:`COOKIE`: a random device id and the account's id, signed with the installation's key,
  HttpOnly, a year). Its attempts count against that device alone
  (``LOCKVIZ_LOGIN_FAILURES_PER_HOUR``): the right password from it is let through, whatever
  anyone else guessed;
- **any other device**: failures count per address *and* name (the same number: past it, that
  address may not try that name for the rest of the hour; a script behind a class's NAT locks
  only the name it guesses, at that address), and per name from everywhere. Past the name's
  count, a device new to it is *slowed*, not blocked: ``LOCKVIZ_LOGIN_SLOWED_PER_MINUTE``
  attempts a minute for the name (default one), so a botnet's guesses come to a trickle, and the
  teacher on a new device waits a minute at most.

A refused attempt never reaches the password hasher (a failure costs a hash: 0.25-0.6 s of CPU).
"""

from __future__ import annotations

import contextlib
import secrets
import unicodedata
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.core import signing
from django.http import HttpRequest, HttpResponse

from lockviz.errors import TooMany
from lockviz.shares import address_of, rates

COOKIE = "lockviz_device"
SALT = "lockviz.accounts.logins"
COOKIE_AGE_S = 365 * 86400
MAX_NAME = 150  # Django's username


def name_key(name: str) -> str:
    """The name as the failures of logins to it are counted."""
    return unicodedata.normalize("NFKC", name).strip().casefold()[:MAX_NAME]


@dataclass(frozen=True)
class Device:
    """A browser that logged in before: its own id, and the account it logged in as."""

    id: str
    user: int


def device(request: HttpRequest) -> Device | None:
    """The device cookie, if it is one this installation signed."""
    try:
        said = signing.loads(request.COOKIES.get(COOKIE, ""), salt=SALT, max_age=COOKIE_AGE_S)
    except signing.BadSignature:
        return None
    if not isinstance(said, dict):
        return None
    found, user = said.get("device"), said.get("user")
    if not isinstance(found, str) or not isinstance(user, int):
        return None
    return Device(found, user)


def remember(request: HttpRequest, response: HttpResponse, user: AbstractBaseUser) -> None:
    """``user`` logged in on this browser: its device cookie says so from now on."""
    known = device(request)
    found = known.id if known is not None else secrets.token_urlsafe(12)
    signed = signing.dumps({"device": found, "user": user.pk}, salt=SALT)
    response.set_cookie(
        COOKIE, signed, max_age=COOKIE_AGE_S, httponly=True, samesite="Lax",
        secure=request.is_secure(),
    )  # fmt: skip


def _known(request: HttpRequest, user_id: int | None) -> Device | None:
    found = device(request)
    return found if found is not None and user_id is not None and found.user == user_id else None


def check(request: HttpRequest, name: str, user_id: int | None) -> None:
    """:class:`TooMany` if this attempt to log in as ``name`` (the account ``user_id``, None
    if there is none) may not be tried now; a slowed attempt is counted here."""
    known = _known(request, user_id)
    if known is not None:
        rates.check(rates.LOGIN_FAILURES_DEVICE, known.id)
        return
    key = name_key(name)
    rates.check(rates.LOGIN_FAILURES, address_of(request), key)
    try:
        rates.check(rates.LOGIN_FAILURES_NAME, key)
    except TooMany:  # many failures for this name from everywhere: slowed, not blocked
        rates.take(rates.LOGIN_SLOWED, key)


def failed(request: HttpRequest, name: str, user_id: int | None) -> None:
    """An attempt failed; :class:`TooMany` if this device or address has now failed too often."""
    known = _known(request, user_id)
    if known is not None:
        rates.take(rates.LOGIN_FAILURES_DEVICE, known.id)
        return
    key = name_key(name)
    with contextlib.suppress(TooMany):  # counted: past it, new devices are slowed (check)
        rates.take(rates.LOGIN_FAILURES_NAME, key)
    rates.take(rates.LOGIN_FAILURES, address_of(request), key)
