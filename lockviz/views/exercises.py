"""Exercises: the index, an exercise's page, an attempt, and its judged outcome.

``GET /exercises/`` lists the built-ins by kind, each with how far this learner has come.
``GET /exercises/<slug>/`` (a built-in) or ``/exercises/saved/<id>/`` (a teacher's) shows the
task, the setting, the form of the answer and this learner's attempts; ``POST .../try`` starts
an attempt (lockviz.exercises.attempts) and comes back to the page with it (``?attempt=<id>``),
whose diagram streams its run. ``GET /exercises/attempts/<id>/`` is the attempt's outcome as a
partial, judged on the server from the stored run: the page asks for it until it is decided.
Only the learner who made an attempt reads it. The worked solution is on the page only once
the learner solved the exercise or made ``reveal_after`` attempts that counted.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from lockviz import accounts, narrator
from lockviz.errors import ExerciseRefused, NotAdmitted
from lockviz.exercises import attempts, forms, goals, practice, progress
from lockviz.exercises.answers import Answer
from lockviz.exercises.builtin import KINDS, builtin
from lockviz.exercises.definition import Exercise
from lockviz.exercises.library import find, url_of
from lockviz.models import Attempt, Run
from lockviz.shares import address_of
from lockviz.teaching import steprows
from lockviz.views import HtmxHttpRequest
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import respond


@require_GET
def index(request: HtmxHttpRequest) -> HttpResponse:
    who = accounts.viewer(request)
    done = progress.exercises(who)
    groups = [
        {
            "kind": kind,
            "words": words,
            "items": [
                {
                    "slug": slug,
                    "ex": ex,
                    "tried": done.get(slug),
                    "backend": ex.setting().lock_service.label,
                    "span": practice.span(ex),
                }
                for slug, ex in builtin().items()
                if ex.kind == kind
            ],
        }
        for kind, words in KINDS.items()
    ]
    return render(request, "lockviz/exercises.html", {"groups": groups, "count": len(builtin())})


@require_GET
def exercise_page(request: HtmxHttpRequest, ref: str) -> HttpResponse:
    ex = find(request, ref)
    shown = _shown_attempt(request, ref)
    answer = shown.answer if shown is not None else None
    return _page(request, ref, ex, answer if isinstance(answer, dict) else None, shown=shown)


@require_POST
def try_it(request: HtmxHttpRequest, ref: str) -> HttpResponse:
    ex = find(request, ref)
    answer: Answer | None = None
    try:
        answer = _answer(request, ex)
        attempt = attempts.start(ref, ex, answer, progress.learner(request), address_of(request))
    except ExerciseRefused as exc:
        return _page(request, ref, ex, answer, problems=exc.problems, status=400)
    except NotAdmitted as refused:
        return respond(request, refused)
    return redirect(f"{url_of(ref)}?attempt={attempt.pk}#attempt")


@require_GET
def attempt_result(request: HtmxHttpRequest, attempt_id: int) -> HttpResponse:
    attempt = Attempt.objects.filter(pk=attempt_id).first()
    if attempt is None or attempt.learner != accounts.viewer(request):
        raise Http404("there is no such attempt of yours")
    ex = find(request, attempt.exercise)
    attempt = attempts.judge(attempt)
    context = _attempt_context(request, attempt.exercise, ex, attempt)
    return render(request, "lockviz/_exercise_attempt.html", context)


def _answer(request: HtmxHttpRequest, ex: Exercise) -> Answer:
    if ex.kind == "break":
        return forms.steps_of(request.POST, ex)
    if ex.kind == "fix":
        return forms.changes_of(request.POST, ex)
    return {"predict": str(request.POST.get("predict") or "")[:20]}


def _shown_attempt(request: HtmxHttpRequest, ref: str) -> Attempt | None:
    """The attempt the page shows: the one asked for (if it is this learner's), else none."""
    wanted = str(request.GET.get("attempt") or "")[:12]
    if not wanted.isdigit():
        return None
    found = Attempt.objects.filter(
        pk=int(wanted), exercise=ref, learner=accounts.viewer(request)
    ).first()
    return attempts.judge(found) if found is not None else None


def _attempt_context(
    request: HtmxHttpRequest, ref: str, ex: Exercise, attempt: Attempt | None
) -> dict[str, object]:
    mine = attempts.of(accounts.viewer(request), ref)
    tried = progress.tried(mine)
    earned = tried.solved or tried.attempts >= ex.reveal_after
    steps = ex.solution.steps if earned and ex.solution.steps else []
    return {
        "ref": ref,
        "ex": ex,
        "solution_steps": narrator.story(steps),
        "attempt": attempt,
        "run": Run.objects.filter(pk=attempt.run_id).first()
        if attempt and attempt.run_id
        else None,
        "tried": tried,
        "earned": earned,
        "outcome_words": goals.OUTCOMES,
    }


def _page(
    request: HtmxHttpRequest,
    ref: str,
    ex: Exercise,
    answer: Answer | None,
    *,
    shown: Attempt | None = None,
    problems: list[str] | None = None,
    status: int = 200,
) -> HttpResponse:
    setting = ex.setting()
    rows = (
        forms.posted_rows(request.POST)
        if problems and ex.kind == "break"
        else forms.rows_of(ex, answer)
    )
    run = Run.objects.filter(pk=shown.run_id).first() if shown and shown.run_id else None
    context = _attempt_context(request, ref, ex, shown) | {
        "setting": setting,
        "goal": goals.GOALS.get(ex.goal or "", ""),
        "kind_words": KINDS[ex.kind],
        "span": practice.span(ex),
        "problems": problems or [],
        "rows": [{"row": row} for row in rows],
        "blank": steprows.blank(),
        "verbs": forms.verbs_of(ex),
        "actors": [*setting.clients, *setting.servers],
        "max_rows": forms.MAX_ROWS,
        "knobs": forms.knobs(ex, answer),
        "allowed": forms.allowed_words(ex),
        "choices": [(c, goals.OUTCOMES[c]) for c in ex.choices],
        "chosen": (answer or {}).get("predict"),
        "try_url": url_of(ref, "try"),
        "page": page_data(
            request,
            run=run,
            verbs=steprows.verb_fields(),
            scenario=run.scenario if run is not None else None,
            nodes=setting.nodes,
        ),
    }
    return render(request, "lockviz/exercise.html", context, status=status)


def saved_page(request: HtmxHttpRequest, saved_id: str) -> HttpResponse:
    return exercise_page(request, f"saved:{saved_id[:16]}")


def saved_try(request: HtmxHttpRequest, saved_id: str) -> HttpResponse:
    return try_it(request, f"saved:{saved_id[:16]}")
