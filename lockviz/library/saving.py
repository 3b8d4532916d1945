"""Keeping things in a teacher's library: Save, change who may see, delete.

The other features call these, never the models: a run page's Save (:func:`save_run`), the
scenario editor's Save (:func:`save_scenario`), the exercise editor's (:func:`save_exercise`),
the library's delete (:func:`forget_run`,
:func:`forget_scenario`). Each takes the teacher (a logged-in user) and refuses with a sentence
(lockviz.errors) what it will not do.
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from lockviz import accounts
from lockviz.errors import Invalid, NotYours, ScenarioError
from lockviz.exercises.definition import Exercise
from lockviz.jsontypes import JsonObject
from lockviz.models import Run, SavedExercise, SavedRun, SavedScenario, Visibility
from lockviz.scenarios.schema import parse

MAX_TITLE = 200


def visibility(value: object) -> str:
    """``value`` as a visibility; :class:`Invalid` naming the choices if it is none."""
    if isinstance(value, str) and value in Visibility.values:
        return value
    choices = ", ".join(Visibility.values)
    raise Invalid(f"visibility: {str(value)[:40]!r} is not one of {choices}")


def title(value: object, default: str) -> str:
    """A title as given (trimmed), or ``default`` when it is blank; :class:`Invalid` past
    :data:`MAX_TITLE` characters."""
    text = str(value or "").strip()
    if len(text) > MAX_TITLE:
        raise Invalid(f"title: at most {MAX_TITLE} characters, not {len(text)}")
    return text or default[:MAX_TITLE]


def save_run(user: User, run: Run, shown: str = Visibility.PRIVATE, name: str = "") -> SavedRun:
    """Keep ``run`` in ``user``'s library (live, finished, imported or forked alike: a live one
    is kept as it goes on), or change its title and visibility if it is kept already.
    :class:`NotYours` if the run is not theirs (another browser started it)."""
    owner = accounts.owner_of(user)
    kept = SavedRun.objects.filter(run=run).first()
    if kept is not None and kept.user_id != user.pk:
        raise NotYours("Another teacher keeps this run in their library.")
    if kept is None and run.owner != owner:
        raise NotYours(
            "Only who started this run can save it: export it as JSON and import it to keep "
            "a copy of your own."
        )
    with transaction.atomic():
        if run.user_id is None:
            Run.objects.filter(pk=run.pk).update(user=user)
        saved, _ = SavedRun.objects.update_or_create(
            run=run,
            defaults={
                "user": user,
                "title": title(name, run.title),
                "visibility": visibility(shown),
                "backend": str(run.scenario.get("backend", ""))[:20],
                "storage": run.storage_kind[:20],
            },
        )
    return saved


def save_scenario(
    user: User,
    scenario: JsonObject,
    shown: str = Visibility.PRIVATE,
    name: str = "",
    saved_id: str = "",
) -> SavedScenario:
    """Keep ``scenario`` (JSON the schema accepts: :class:`ScenarioError` naming each problem
    otherwise) in ``user``'s library; ``saved_id``: replace that one of theirs instead."""
    if not isinstance(scenario, dict):
        raise ScenarioError("scenario: a JSON object")
    checked = parse(scenario).to_json()  # ScenarioError: every problem named by its field
    fields = {
        "user": user,
        "scenario": checked,
        "title": title(name, str(checked.get("title", "")) or "Untitled scenario"),
        "visibility": visibility(shown),
        "backend": str(checked.get("backend", ""))[:20],
        "storage": str(checked.get("storage", ""))[:20],
    }
    if saved_id:
        kept = SavedScenario.objects.filter(pk=saved_id[:16], user=user).first()
        if kept is None:
            raise NotYours(f"There is no scenario {saved_id[:16]!r} in your library.")
        for name_, value in fields.items():
            setattr(kept, name_, value)
        kept.save()
        return kept
    return SavedScenario.objects.create(**fields)


def save_exercise(
    user: User, ex: Exercise, shown: str = Visibility.PRIVATE, name: str = ""
) -> SavedExercise:
    """Keep ``ex`` (parsed: lockviz.exercises.definition) in ``user``'s library."""
    setting = ex.setting()
    return SavedExercise.objects.create(
        user=user, title=title(name, ex.title), visibility=visibility(shown),
        backend=setting.backend[:20], storage=setting.storage_kind[:20], kind=ex.kind,
        exercise=ex.to_json(),
    )  # fmt: skip


def forget_run(user: User, run_id: str) -> str:
    """Delete a run from ``user``'s library, with its events; its title. A run still live is
    only taken out of the library (pruned later like any other): its engine still records it."""
    kept = SavedRun.objects.filter(run_id=run_id[:16], user=user).select_related("run").first()
    if kept is None:
        raise NotYours(f"There is no run {run_id[:16]!r} in your library.")
    if kept.run.live:
        kept.delete()
    else:
        kept.run.delete()  # the saved row, the events and the shares go with it
    return kept.title


def forget_scenario(user: User, saved_id: str) -> str:
    """Delete a scenario from ``user``'s library; its title."""
    kept = SavedScenario.objects.filter(pk=saved_id[:16], user=user).first()
    if kept is None:
        raise NotYours(f"There is no scenario {saved_id[:16]!r} in your library.")
    kept.delete()
    return kept.title
