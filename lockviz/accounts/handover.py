"""What changes hands with an account: a browser's things when it logs in, an account's when
it is deleted.

A teacher who starts a run, opens a room or makes a lecture plan and then logs in (on the same
browser) finds them theirs, on every device: on ``user_logged_in`` the runs, rooms and plans of
the session's anonymous token move to the account's owner name (lockviz.accounts). The token
stays in the session; it owns nothing any more, and after logout the browser starts afresh.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from django.http import HttpRequest

from lockviz import accounts
from lockviz.models import Plan, Room, Run


def adopt(request: HttpRequest | None, user: User, **_: object) -> None:
    """The ``user_logged_in`` receiver: this browser's runs and rooms are now ``user``'s."""
    token = request.session.get("browser") if request is not None else None
    owner = accounts.owner_of(user)
    if not isinstance(token, str) or not token or not owner or token == owner:
        return
    with transaction.atomic():
        Run.objects.filter(owner=token).update(owner=owner, user=user)
        Room.objects.filter(presenter=token).update(presenter=owner)
        Plan.objects.filter(owner=token).update(owner=owner)


def disown(instance: User, **_: object) -> None:
    """The ``pre_delete`` receiver of a user: what its owner name owned is nobody's now."""
    owner = accounts.owner_of(instance)
    if owner:
        Run.objects.filter(owner=owner).update(owner="")
        Room.objects.filter(presenter=owner).update(presenter="")
        Plan.objects.filter(owner=owner).delete()  # a plan is nothing without its teacher
