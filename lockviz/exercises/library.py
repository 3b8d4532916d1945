"""Finding an exercise by its reference, for this request: a built-in's slug, or
``saved:<id>``, a teacher's exercise in the library, which opens as a saved scenario does
(lockviz.library.access: a private one for its teacher and the class they present, else 404)."""

from __future__ import annotations

from django.http import Http404, HttpRequest
from django.urls import reverse

from lockviz import accounts
from lockviz.errors import ExerciseRefused
from lockviz.exercises.builtin import builtin
from lockviz.exercises.definition import Exercise, parse
from lockviz.library.access import may_see_exercise
from lockviz.models import SavedExercise

SAVED = "saved:"


def find(request: HttpRequest, ref: str) -> Exercise:
    """The exercise ``ref`` names, if this request may open it; 404 otherwise."""
    if not ref.startswith(SAVED):
        found = builtin().get(ref[:80])
        if found is None:
            raise Http404(f"there is no exercise {ref[:80]!r}")
        return found
    saved = SavedExercise.objects.filter(pk=ref.removeprefix(SAVED)[:16]).first()
    if saved is None or not may_see_exercise(accounts.viewer(request), saved):
        raise Http404("No such saved exercise here (or it is private).")
    try:
        return parse(saved.exercise)
    except ExerciseRefused:  # kept before a rule it breaks: as if it were not there
        raise Http404("This saved exercise no longer fits the exercise format.") from None


def title_of(ref: str) -> str:
    """An exercise's title for a table or a list (its reference when it is gone)."""
    if not ref.startswith(SAVED):
        found = builtin().get(ref)
        return found.title if found is not None else ref
    saved = SavedExercise.objects.filter(pk=ref.removeprefix(SAVED)).only("title").first()
    return saved.title if saved is not None else ref


def url_of(ref: str, action: str = "") -> str:
    """An exercise's page, or its ``action`` ("try")."""
    suffix = f"_{action}" if action else ""
    if ref.startswith(SAVED):
        return reverse(f"saved_exercise{suffix}", args=[ref.removeprefix(SAVED)])
    return reverse(f"exercise{suffix}", args=[ref])
