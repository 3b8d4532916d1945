"""Teacher accounts, and who owns what: one identity, the *owner*, for runs, rooms and saves.

Everything the app lets one person change is stored with its owner's name, a short string
(``Run.owner``, ``Room.presenter``):

- an anonymous browser (every learner, and a teacher not logged in): a random token kept in its
  session, as it always was (``lockviz.views.browser``);
- a teacher logged in: ``account:<user id>``, the same on every browser they log in on, so their
  runs and rooms are theirs on a second device. The session never holds it: it is read from the
  logged-in user, which Django's auth vouches for (a signed session, its password's hash).

Random tokens are URL-safe base64 (no ``:``), so no browser's token can be taken for an account.
When a browser logs in, what it owned anonymously (its runs, the rooms it presents) becomes the
account's (:func:`adopt`, on ``user_logged_in``); after logout it is a new anonymous browser.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.http import HttpRequest

ACCOUNT = "account:"
User = AbstractBaseUser | AnonymousUser


def owner_of(user: User | None) -> str:
    """The owner name of a logged-in ``user``; "" for nobody (anonymous or None)."""
    if user is None or not user.is_authenticated or user.pk is None:
        return ""
    return f"{ACCOUNT}{user.pk}"


def account_id(owner: str) -> int | None:
    """The user id an owner name stands for, or None (an anonymous browser's token)."""
    if not owner.startswith(ACCOUNT):
        return None
    digits = owner.removeprefix(ACCOUNT)
    return int(digits) if digits.isdigit() and len(digits) < 19 else None


def _user(request: HttpRequest) -> User | None:
    return getattr(request, "user", None)


def owner(request: HttpRequest) -> str:
    """Who this request is, making a browser token when it has none (it is about to own
    something: a run, a room)."""
    found = owner_of(_user(request)) or request.session.get("browser")
    if not isinstance(found, str) or not found:
        found = request.session["browser"] = secrets.token_urlsafe(16)
    return found


def viewer(request: HttpRequest) -> str:
    """Who this request is, or "" when it is nobody yet; never makes a session."""
    found = owner_of(_user(request)) or request.session.get("browser")
    return found if isinstance(found, str) else ""


def in_scope(scope: dict[str, Any]) -> str:
    """Who is on the other end of a WebSocket (its scope's user and session), or ""."""
    found = owner_of(scope.get("user"))
    if found:
        return found
    session = scope.get("session")
    token = session.get("browser") if session is not None else None
    return token if isinstance(token, str) else ""
