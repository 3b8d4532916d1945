"""Who may open a run, a saved scenario or a saved exercise: one check, for every page, export
and stream.

A run nobody saved, and a saved item that is unlisted or public, opens for anyone with its
link. A private one opens only for its teacher (on any device: their owner name, lockviz.
accounts) and for the students of a room that teacher presents (a class must see what its
teacher shows it); for anyone else it does not exist: 404, the same answer as no such item, so
a private item's id says nothing.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest

from lockviz import accounts
from lockviz.models import Member, Run, SavedExercise, SavedRun, SavedScenario, Visibility


def may_see(viewer: str, run: Run) -> bool:
    """Whether ``viewer`` (an owner name, lockviz.accounts; "" for nobody yet) may open ``run``."""
    saved = SavedRun.objects.filter(run=run).only("visibility", "user_id").first()
    if saved is None or saved.visibility != Visibility.PRIVATE:
        return True
    return _teacher_or_class(viewer, {run.owner, accounts.ACCOUNT + str(saved.user_id)})


def may_see_scenario(viewer: str, saved: SavedScenario) -> bool:
    """Whether ``viewer`` may open the saved scenario ``saved``."""
    if saved.visibility != Visibility.PRIVATE:
        return True
    return _teacher_or_class(viewer, {accounts.ACCOUNT + str(saved.user_id)})


def may_see_exercise(viewer: str, saved: SavedExercise) -> bool:
    """Whether ``viewer`` may open (and try) the saved exercise ``saved``."""
    if saved.visibility != Visibility.PRIVATE:
        return True
    return _teacher_or_class(viewer, {accounts.ACCOUNT + str(saved.user_id)})


def _teacher_or_class(viewer: str, teachers: set[str]) -> bool:
    teachers.discard("")
    if not viewer:
        return False
    if viewer in teachers:
        return True
    return Member.objects.filter(
        browser=viewer, removed=False, room__presenter__in=teachers, room__closed__isnull=True
    ).exists()


def run_or_404(request: HttpRequest, run_id: str) -> Run:
    """The run ``run_id`` if this request may open it; 404 if there is none or it may not."""
    run = Run.objects.filter(pk=str(run_id)[:16]).first()
    if run is None or not may_see(accounts.viewer(request), run):
        raise Http404(f"No run {run_id!r} here (or it is private).")
    return run


def scenario_or_404(request: HttpRequest, saved_id: str) -> SavedScenario:
    """The saved scenario ``saved_id`` if this request may open it; 404 otherwise."""
    saved = SavedScenario.objects.filter(pk=str(saved_id)[:16]).first()
    if saved is None or not may_see_scenario(accounts.viewer(request), saved):
        raise Http404(f"No saved scenario {saved_id!r} here (or it is private).")
    return saved
