"""Lessons: the course index, and walkthroughs that tell a live run of a lesson's scenario.

Real leases cannot be paused, so a walkthrough runs the scenario live first and tells it
afterwards. ``/lessons/<slug>/`` shows the lesson's setting (never its outcome) and a button that
starts the run by POST, or reuses the learner's last run of the lesson, remembered in a cookie,
and redirects to ``?run=<id>``, so reloading the page does not start another run; "Re-run live"
posts to start a fresh one. Until a checkpoint is answered, its step is told by its click and
its question, never by its narration (which gives the answer away), and the page holds neither
its answer nor its explanation: answering (``POST /lessons/<slug>/answer``) fetches them, and the
session remembers which checkpoints of which run this browser has answered (or its class has
seen revealed: lockviz.teaching.reveals).
"""

from __future__ import annotations

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from lockviz import accounts, narrator
from lockviz.errors import NotAdmitted, NotYours
from lockviz.exercises import progress
from lockviz.library import access
from lockviz.models import Run
from lockviz.runs import launcher, recovery
from lockviz.shares import address_of
from lockviz.teaching import choices, lessons, reveals
from lockviz.views import HtmxHttpRequest, browser, owns, withheld
from lockviz.views.pagedata import page_data
from lockviz.views.refusals import respond

COOKIE_DAYS = 30


@require_GET
def index(request: HtmxHttpRequest) -> HttpResponse:
    modules = lessons.modules()
    context = {
        "modules": modules,
        "count": sum(len(m.lessons) for m in modules),
        "total_minutes": sum(m.minutes for m in modules),
        "page": page_data(request, progress=progress.lessons(accounts.viewer(request))),
    }
    return render(request, "lockviz/lessons.html", context)


@require_GET
def walkthrough(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    lesson = _lesson(slug)
    run_id = request.GET.get("run")
    course = lessons.course()
    context = {
        "lesson": lesson,
        "module": next(m for m in lessons.modules() if m.slug == lesson.module),
        "count": len(course),
        "previous": next((c for c in course if c.number == lesson.number - 1), None),
        "following": next((c for c in course if c.number == lesson.number + 1), None),
    }
    if run_id is None:  # a GET never starts servers (a prefetch, a link on another site)
        remembered = _remembered(request, lesson)
        if remembered is not None:
            return redirect(_url(slug, remembered.pk))
        return render(request, "lockviz/lesson.html", context)
    run = Run.objects.filter(pk=run_id[:16]).first() if run_id.strip() else None
    if run is None or not access.may_see(accounts.viewer(request), run):  # private: as none
        context["problem"] = f"There is no run {run_id[:40]!r}."
        return render(request, "lockviz/lesson.html", context, status=404)
    if run.slug != slug or not lessons.same_script(run, lesson):
        context["problem"] = (
            f"Run {run.pk} did not play this lesson's scenario as written (it is "
            f"{'another scenario' if run.slug != slug else 'a variation of it'}), so the "
            "lesson's questions would not fit it."
        )
        context["other_run"] = run
        return render(request, "lockviz/lesson.html", context, status=400)
    if withheld(request, run):  # the walkthrough holds every answer, to tell after each asks
        context["problem"] = (
            f"Run {run.pk} is another browser's: its questions are answered by whoever started "
            "it (a class's presenter reveals them to the class). Run the lesson yourself to "
            "answer them on your own."
        )
        return render(request, "lockviz/lesson.html", context, status=403)
    context["run"] = run
    hidden = _checkpoints(lesson)
    unanswered = reveals.unanswered(run, _answered(request, run))
    context["page"] = page_data(
        request,
        run=run,
        slug=lesson.slug,
        error=run.error,
        created=run.created.isoformat(),
        # Each learner's own order of each checkpoint's choices (its class's: the presenter's).
        scenario=choices.for_learner(
            reveals.scenario(lesson.scenario.to_json(), unanswered), f"{run.owner}:{lesson.slug}"
        ),
        answer_url=reverse("lesson_answer", args=[lesson.slug]),
        progress_url=reverse("progress_lesson", args=[lesson.slug]),
        nodes=lesson.scenario.nodes,
        hidden=hidden,
        events=[_unspoilt(e, hidden) for e in run.said_after(0)],
        events_url=reverse("replay_events", args=[run.pk]),  # the stored ones, if the stream fails
    )
    return render(request, "lockviz/lesson.html", context)


def _checkpoints(lesson: lessons.Lesson) -> dict[str, dict[str, str]]:
    """Each checkpoint step's words before it is answered, by step index."""
    steps = [step.to_json() for step in lesson.scenario.steps]
    election = narrator.electing(lesson.scenario.to_json())
    return {
        str(i): narrator.checkpoint(step, i, election)
        for i, step in enumerate(steps)
        if step.get("ask")
    }


def _unspoilt(event: dict[str, object], hidden: dict[str, dict[str, str]]) -> dict[str, object]:
    """A checkpoint's step event without its narration (pages/lesson.js does the same to events
    that arrive on the live stream)."""
    words = hidden.get(str(event.get("index"))) if event.get("kind") == "step" else None
    if words is None:
        return event
    return {**{k: v for k, v in event.items() if k != "say"}, "said": words}


ANSWERED = "answered"  # the session's {run id: [checkpoint step indexes answered]}


def _answered(request: HtmxHttpRequest, run: Run) -> set[int]:
    found = request.session.get(ANSWERED)
    steps = found.get(run.pk) if isinstance(found, dict) else None
    return {i for i in steps if isinstance(i, int)} if isinstance(steps, list) else set()


@require_POST
def answer(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The learner answered (or skipped) a checkpoint of their run: its answer, explanation and
    narration, which the page did not hold before."""
    lesson = _lesson(slug)
    run = Run.objects.filter(pk=str(request.POST.get("run", ""))[:16], slug=slug).first()
    if run is None or not owns(request, run):
        return respond(request, NotYours("run: only the browser that started it answers here"))
    try:
        index = int(str(request.POST.get("step", "")))
        step = lesson.scenario.steps[index]
    except (ValueError, IndexError):
        step, index = None, -1
    if step is None or step.ask is None or index < 0:
        return JsonResponse({"problem": "step: that step asks nothing"}, status=400)
    done = request.session.get(ANSWERED)
    done = done if isinstance(done, dict) else {}
    done[run.pk] = sorted(_answered(request, run) | {index})
    request.session[ANSWERED] = dict(list(done.items())[-50:])  # the last 50 runs are enough
    _keep(request, lesson, index, step.ask.answer)
    said = {"answer": step.ask.answer, "explain": step.ask.explain, "say": step.say or ""}
    return JsonResponse({"step": index, **said})


def _keep(request: HtmxHttpRequest, lesson: lessons.Lesson, index: int, answer: str) -> None:
    """The learner's answer (or skip), kept on the server as their progress
    (lockviz.exercises.progress); a fetch of an answer with neither keeps nothing."""
    choice = str(request.POST.get("choice") or "")[:200]
    if not choice and not request.POST.get("skipped"):
        return
    checkpoints = [i for i, s in enumerate(lesson.scenario.steps) if s.ask is not None]
    correct = (choice == answer) if choice else None
    progress.answered(browser(request), lesson.slug, index, choice, correct, checkpoints)


@require_POST
def rerun(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Start the lesson's scenario live (the first time, or again): a new run whose owner is
    the browser that asked; it changes no one else's run, so anyone may press it."""
    return _start(request, _lesson(slug))


def _lesson(slug: str) -> lessons.Lesson:
    lesson = lessons.lesson(slug)
    if lesson is None:
        raise Http404(f"there is no lesson {slug!r}")
    return lesson


def _start(request: HtmxHttpRequest, lesson: lessons.Lesson) -> HttpResponse:
    try:
        run = launcher.launch(
            lesson.scenario, lesson.slug, browser(request), address=address_of(request)
        )
    except NotAdmitted as refused:
        return respond(request, refused)
    response = redirect(_url(lesson.slug, run.pk))
    response.set_cookie(
        _cookie(lesson.slug), run.pk, max_age=COOKIE_DAYS * 86400, samesite="Lax", httponly=True
    )
    return response


def _remembered(request: HtmxHttpRequest, lesson: lessons.Lesson) -> Run | None:
    """The learner's last run of this lesson, if it still fits the lesson and did not fail."""
    run_id = request.COOKIES.get(_cookie(lesson.slug), "")[:16]
    run = Run.objects.filter(pk=run_id).first() if run_id else None
    if run is None or run.slug != lesson.slug:
        return None
    if run.status not in (Run.Status.FINISHED, *Run.LIVE):
        return None  # failed, interrupted or cancelled: nothing to tell
    if run.live and not recovery.running(run):
        return None  # its app is gone (the next start-up marks it interrupted)
    return run if lessons.same_script(run, lesson) else None


def _cookie(slug: str) -> str:
    return f"lockviz-lesson-{slug}"


def _url(slug: str, run_id: str) -> str:
    return f"{reverse('lesson', args=[slug])}?run={run_id}"
