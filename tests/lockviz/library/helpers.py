"""Teachers and runs for the library's tests: recorded runs of the lab, stored as imports are."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth.models import User
from django.test import Client

from lockviz import accounts
from lockviz.models import Run
from lockviz.runs import stored
from lockviz.runs.imports import ImportedRun, read

RECORDED = Path(__file__).parents[2] / "browser" / "data" / "runs"


def teacher(name: str) -> tuple[User, Client]:
    """A teacher account, and a test client logged in as it."""
    user = User.objects.create_user(name, password="not-used-by-force-login")
    client = Client()
    client.force_login(user)
    return user, client


def recorded_run(slug: str = "gc-pause-fenced", owner: str = "") -> Run:
    """The lab's recorded run of the built-in ``slug``, stored as ``owner``'s (an owner name:
    a teacher's ``accounts.owner_of(user)``, or a browser's token)."""
    found = read((RECORDED / f"{slug}.json").read_bytes())
    assert isinstance(found, ImportedRun)
    return stored.store(found, owner=owner)


def teachers_run(user: User, slug: str = "gc-pause-fenced") -> Run:
    return recorded_run(slug, accounts.owner_of(user))
