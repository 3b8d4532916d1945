"""Progress: a learner's own (``/progress/``), a lesson's mark, and a room's class view.

A learner sees only their own progress. A room's presenter sees the class's
(``/rooms/<code>/progress/``, a partial the room page fetches again whenever the room's
presenter stream says progress moved: static/lockviz/room/class-progress.js) and downloads it as CSV
(``/rooms/<code>/progress.csv``); anyone else is refused as every presenter's action is.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from lockviz import accounts
from lockviz.exercises import classview, progress
from lockviz.exercises.library import title_of, url_of
from lockviz.lms import roster
from lockviz.models import Plan, Room
from lockviz.teaching import lessons
from lockviz.teaching.plans import items_of
from lockviz.teaching.presenting import Presenting
from lockviz.views import HtmxHttpRequest
from lockviz.views.rooms import _by_the_presenter


@require_GET
def mine(request: HtmxHttpRequest) -> HttpResponse:
    who = accounts.viewer(request)
    marks = progress.lessons(who)
    course = [(lesson, marks.get(lesson.slug, "")) for lesson in lessons.course()]
    tried = [
        {"title": title_of(ref), "url": url_of(ref), "tried": t}
        for ref, t in progress.exercises(who).items()
    ]
    context = {"course": course, "tried": tried, "done": sum(1 for _, m in course if m == "done")}
    return render(request, "lockviz/progress.html", context)


@require_POST
def lesson_mark(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """A lesson page says its learner started or finished it (lesson/progress.js)."""
    if lessons.lesson(slug) is not None:
        progress.mark(progress.learner(request), slug, str(request.POST.get("state") or ""))
    return HttpResponse(status=204)


def class_table(request: HtmxHttpRequest, room: Room) -> classview.Table:
    """The room's class on the items of the plan this presenter presents to it, if any."""
    now = Presenting.of(request.session)
    planned: list[str] = []
    if now is not None and now.room == room.code:
        plan = Plan.objects.filter(pk=now.plan).first()
        for item in items_of(plan) if plan is not None else []:
            if item.kind == "lesson":
                planned.append(classview.LESSON + item.lesson)
            elif item.kind == "exercise":
                planned.append(classview.EXERCISE + item.exercise)
    return classview.table(room, planned, roster.of(room))


@require_GET
@_by_the_presenter("see the class's progress")
def room_progress(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    context = {"room": room, "table": class_table(request, room)}
    return render(request, "lockviz/_class_table.html", context)


@require_GET
@_by_the_presenter("download the class's progress")
def room_progress_csv(request: HtmxHttpRequest, room: Room) -> HttpResponse:
    response = HttpResponse(
        class_table(request, room).csv(), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="lockviz-class-{room.code}.csv"'
    return response
