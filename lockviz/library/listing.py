"""What pages list: a teacher's library (searched), the public gallery, a visitor's own runs.

The index lists nobody's runs but the visitor's own (a teacher's on any device, an anonymous
browser's from its session) and the gallery of public items; a run nobody saved is never listed
to anyone else.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import QueryDict
from django.urls import reverse

from lockviz.catalogue import BACKENDS, STORAGE_KINDS
from lockviz.models import Run, SavedRun, SavedScenario, Visibility

MAX_QUERY = 100  # characters of a title search
SHOWN = 200  # items of each kind a library page lists
GALLERY = 24  # items of each kind the index's gallery lists
RECENT = 12  # runs of one's own the index lists


@dataclass(frozen=True)
class Search:
    """A library search: words in the title, a backend, a storage kind ("" for any)."""

    q: str = ""
    backend: str = ""
    storage: str = ""

    @classmethod
    def of(cls, query: QueryDict) -> Search:
        """The search a query string asks for: unknown backends and storage kinds, and text
        past :data:`MAX_QUERY`, are left out (a search asks, it is never refused)."""
        backend = str(query.get("backend", ""))
        storage = str(query.get("storage", ""))
        return cls(
            q=str(query.get("q", "")).strip()[:MAX_QUERY],
            backend=backend if backend in BACKENDS else "",
            storage=storage if storage in STORAGE_KINDS else "",
        )

    def __bool__(self) -> bool:
        return bool(self.q or self.backend or self.storage)


@dataclass(frozen=True)
class Item:
    """One saved thing as a list shows it."""

    kind: str  # "run" or "scenario"
    key: str  # the run's id, or the saved scenario's
    title: str
    backend: str
    storage: str
    visibility: str
    saved: datetime
    link: str  # its permalink
    about: str  # a run's status and outcome; a scenario's clients and steps


def permalink(saved: SavedRun | SavedScenario) -> str:
    """Where a saved item opens: a run's replay, a scenario's own page."""
    if isinstance(saved, SavedRun):
        return reverse("replay", args=[saved.run_id])
    return reverse("saved_scenario", args=[saved.pk])


def run_item(saved: SavedRun) -> Item:
    run = saved.run
    outcome = run.headline[0] if not run.live else "live"
    return Item(
        "run", run.pk, saved.title, saved.backend, saved.storage, saved.visibility, saved.saved,
        permalink(saved), f"{run.status} · {outcome}",
    )  # fmt: skip


def scenario_item(saved: SavedScenario) -> Item:
    clients = saved.scenario.get("clients")
    steps = saved.scenario.get("steps")
    about = (
        f"{len(clients) if isinstance(clients, list) else 0} clients · "
        f"{len(steps) if isinstance(steps, list) else 0} steps"
    )
    return Item(
        "scenario", saved.pk, saved.title, saved.backend, saved.storage, saved.visibility,
        saved.saved, permalink(saved), about,
    )  # fmt: skip


T = TypeVar("T", SavedRun, SavedScenario)


def _searched(found: QuerySet[T], search: Search) -> QuerySet[T]:
    if search.q:
        for word in search.q.split()[:8]:
            found = found.filter(title__icontains=word)
    if search.backend:
        found = found.filter(backend=search.backend)
    if search.storage:
        found = found.filter(storage=search.storage)
    return found


def library(user: User, search: Search) -> tuple[list[Item], list[Item]]:
    """``user``'s saved runs and saved scenarios that match ``search``, newest first."""
    runs = _searched(SavedRun.objects.filter(user=user).select_related("run"), search)
    scenarios = _searched(SavedScenario.objects.filter(user=user), search)
    return [run_item(s) for s in runs[:SHOWN]], [scenario_item(s) for s in scenarios[:SHOWN]]


def gallery() -> list[Item]:
    """Everything teachers made public, newest first."""
    public = Visibility.PUBLIC
    runs = SavedRun.objects.filter(visibility=public).select_related("run")[:GALLERY]
    scenarios = SavedScenario.objects.filter(visibility=public)[:GALLERY]
    items = [run_item(s) for s in runs] + [scenario_item(s) for s in scenarios]
    return sorted(items, key=lambda item: item.saved, reverse=True)


def own_runs(viewer: str) -> QuerySet[Run]:
    """The runs of ``viewer`` (an owner name: lockviz.accounts), newest first; none for ""."""
    if not viewer:
        return Run.objects.none()
    return Run.objects.filter(owner=viewer).select_related("saved")[:RECENT]
