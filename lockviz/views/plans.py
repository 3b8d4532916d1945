"""Lecture plans: my plans, the editor, a plan's page (read-only to others, with "Copy to my
plans"), export and import, and presenting one to a room (lockviz.teaching.plans has the rules,
lockviz.teaching.presenting what each item does).

Who may change a plan is asked of lockviz.teaching.plans.may_edit, through :func:`_mine`, and
nowhere else.
"""

from __future__ import annotations

import json
import re

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from lockviz import accounts
from lockviz.errors import NotAdmitted, NotYours, PlanRefused
from lockviz.exercises.builtin import builtin as exercises
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.models import Plan, Run
from lockviz.scenarios.library import builtin
from lockviz.shares import address_of, rates
from lockviz.teaching import control, plan_files, plans, presenting, rooms
from lockviz.teaching.lessons import course
from lockviz.views import HtmxHttpRequest, absolute, browser
from lockviz.views.pagedata import page_data
from lockviz.views.pagedata import presenting as presented_room
from lockviz.views.refusals import respond

FIELD = re.compile(r"^items-(\d{1,3})-kind$")
FIELDS = (
    "note", "lesson", "run", "from", "to", "slug", "scenario", "question", "choices", "exercise",
)  # fmt: skip


def _mine(request: HttpRequest, plan_id: str, what: str) -> Plan:
    """The plan, if this browser may change it (lockviz.teaching.plans.may_edit); else the
    refusal, naming what only its owner may do."""
    plan = get_object_or_404(Plan, pk=plan_id[:16])
    if not plans.may_edit(plan, browser(request)):
        raise NotYours(
            f"Only the browser that made plan “{plan.title}” can {what}: "
            "copy it to your plans to change it."
        )
    return plan


@require_GET
def index(request: HtmxHttpRequest) -> HttpResponse:
    mine = Plan.objects.filter(owner=browser(request))[:100]
    return render(request, "lockviz/plans.html", {"plans": mine, "most": plans.MAX_ITEMS})


@require_http_methods(["GET", "POST"])
def new(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _save(request, Plan(owner=browser(request)))
    blank: JsonObject = {"title": "", "items": [{"kind": "lesson", "lesson": course()[0].slug}]}
    return _editor(request, None, blank, [])


@require_http_methods(["GET", "POST"])
def edit(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    plan = _mine(request, plan_id, "change it")
    if request.method == "POST":
        return _save(request, plan)
    return _editor(request, plan, {"title": plan.title, "items": plan.items}, [])


def _save(request: HtmxHttpRequest, plan: Plan) -> HttpResponse:
    given = _from_form(request)
    try:
        plans.save(plan, *plans.read(given))
    except PlanRefused as exc:
        return _editor(request, None if plan._state.adding else plan, given, exc.problems, 400)
    return redirect("plan", plan_id=plan.pk)


def _from_form(request: HttpRequest) -> JsonObject:
    """The editor's fields as a plan's JSON: ``items-<i>-<field>``, in the order of ``i``."""
    numbers = sorted({int(m[1]) for key in request.POST if (m := FIELD.match(key))})
    items: list[JsonValue] = []
    for i in numbers[: plans.MAX_ITEMS + 1]:  # one more than allowed: read() says so
        item: JsonObject = {"kind": request.POST.get(f"items-{i}-kind", "")}
        for name in FIELDS:
            value = request.POST.get(f"items-{i}-{name}")
            if value is not None:
                item[name] = value
        if item.get("slug") == "json":  # "my own JSON" in the scenario's list
            item.pop("slug")
        elif item["kind"] == "scenario":
            item.pop("scenario", None)
        items.append(item)
    if len(numbers) > plans.MAX_ITEMS:
        items += [{}] * (len(numbers) - len(items))
    return {"title": request.POST.get("title", ""), "items": items}


def _editor(
    request: HtmxHttpRequest, plan: Plan | None, given: JsonObject, problems: list[str],
    status: int = 200,
) -> HttpResponse:  # fmt: skip
    rows = []
    items = given.get("items")
    for number, raw in enumerate(items if isinstance(items, list) else [], start=1):
        item = dict(raw) if isinstance(raw, dict) else {}
        if isinstance(choices := item.get("choices"), list):
            item["choices"] = "\n".join(str(c) for c in choices)
        if isinstance(scenario := item.get("scenario"), dict):
            item["scenario"] = json.dumps(scenario, indent=1)
        prefix = f"item {number}"
        mine = [p.split(": ", 1)[1] for p in problems if re.match(rf"{prefix}( \(|:)", p)]
        rows.append({"number": number, "index": number - 1, "item": item, "problems": mine})
    context: dict[str, object] = {
        "plan": plan,
        "title": given.get("title") or "",
        "rows": rows,
        "problems": problems,
        "lessons": course(),
        "exercises": list(exercises().items()),
        "scenarios": sorted(builtin().items(), key=lambda kv: kv[1].title),
        "runs": Run.objects.filter(owner=browser(request)).only("pk", "title")[:30],
        "most": plans.MAX_ITEMS,
        "blank_row": {"number": "0", "index": "__i__", "item": {"kind": "lesson"}, "problems": []},
        "page": page_data(request, most=plans.MAX_ITEMS),
    }
    return render(request, "lockviz/plan_edit.html", context, status=status)


@require_POST
def add(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    """One item added at the end of a plan of this browser's: its fields as the editor's row
    has them, unprefixed (``kind``, ``slug`` or ``scenario``, ``note``…): "add to plan" from
    another page (a scenario's editor). A refusal names the item's problems."""
    plan = _mine(request, plan_id, "add to it")
    item: JsonObject = {"kind": request.POST.get("kind", "")}
    item.update({k: v for k in FIELDS if (v := request.POST.get(k)) is not None})
    plans.save(plan, *plans.read({"title": plan.title, "items": [*plan.items, item]}))
    return redirect("plan", plan_id=plan.pk)


@require_GET
def plan_page(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    plan = get_object_or_404(Plan, pk=plan_id[:16])
    now = presenting.Presenting.of(request.session)
    context = {
        "plan": plan,
        "items": plans.items_of(plan),
        "yours": plans.may_edit(plan, browser(request)),
        "link": absolute(request, reverse("plan", args=[plan.pk])),
        "embed": absolute(request, reverse("embed_plan", args=[plan.pk])),
        "presenting": now if now and now.plan == plan.pk else None,
    }
    return render(request, "lockviz/plan.html", context)


@require_POST
def copy(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    plan = get_object_or_404(Plan, pk=plan_id[:16])
    return redirect("plan", plan_id=plans.copy(plan, browser(request)).pk)


@require_POST
def delete(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    _mine(request, plan_id, "delete it").delete()
    return redirect("plans")


@require_GET
def export_json(request: HtmxHttpRequest, plan_id: str) -> JsonResponse:
    plan = get_object_or_404(Plan, pk=plan_id[:16])
    response = JsonResponse(plan_files.export(plan), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lockviz-plan-{plan.pk}.json"'
    return response


@require_POST
def import_plan(request: HtmxHttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    data = upload.read(plan_files.MAX_FILE_BYTES + 1) if upload else str(
        request.POST.get("text", "")).encode()  # fmt: skip
    try:
        if not data.strip():
            raise PlanRefused("file: choose a plan's export.json, or paste its text")
        rates.take(rates.IMPORTS, address_of(request))
        plan = plan_files.imported(data, browser(request))
    except PlanRefused as exc:
        mine = Plan.objects.filter(owner=browser(request))[:100]
        context = {"plans": mine, "most": plans.MAX_ITEMS, "import_problems": exc.problems}
        return render(request, "lockviz/plans.html", context, status=400)
    return redirect("plan", plan_id=plan.pk)


# -- presenting ----------------------------------------------------------------------------


@require_POST
def present(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    """Present this plan: the room this browser presents, if it is open, or a new one; the
    presenter lands on the room's page (item 0) while the class joins."""
    plan = _mine(request, plan_id, "present it")
    code = presented_room(request)
    room = rooms.find(code, browser(request)) if code else None
    if room is None or room.presenter != browser(request) or room.closed is not None:
        rates.take(rates.ROOMS, address_of(request))
        room = rooms.open_room(browser(request))
        request.session["presenting"] = room.code
        request.session["room_key"] = {"room": room.code, "key": control.new_key(room)}
    presenting.Presenting(plan=plan.pk, room=room.code).keep(request.session)
    return redirect("room", code=room.code)


@require_POST
def go(request: HtmxHttpRequest, plan_id: str, number: int) -> HttpResponse:
    """Next, Previous (or Start again): to item ``number`` of the plan being presented."""
    plan = _mine(request, plan_id, "present it")
    now = presenting.Presenting.of(request.session)
    room = rooms.find(now.room, browser(request)) if now and now.plan == plan.pk else None
    if now is None or room is None or presented_room(request) != room.code or room.closed:
        request.session.pop(presenting.SESSION_KEY, None)
        return respond(request, NotYours("This plan is not being presented in an open room: "
                                         "press “Present this plan” on its page."))  # fmt: skip
    again = request.POST.get("again") == "1"
    try:
        url = presenting.arrive(
            now, plan, room, number, browser(request), address_of(request), again
        )
    except NotAdmitted as refused:
        now.keep(request.session)  # the plan bar offers Start again
        return respond(request, refused)
    now.keep(request.session)
    return redirect(url)


@require_POST
def stop(request: HtmxHttpRequest, plan_id: str) -> HttpResponse:
    request.session.pop(presenting.SESSION_KEY, None)
    return redirect("plan", plan_id=plan_id[:16])


def plan_bar(request: HttpRequest) -> dict[str, object]:
    """Context for every page: the plan this browser presents to its room, if any (the plan bar,
    templates/lockviz/_plan_bar.html; its note is on the presenter's pages only)."""
    session = getattr(request, "session", None)
    now = presenting.Presenting.of(session) if session is not None else None
    if now is None or now.room != presented_room(request):
        return {}
    plan = Plan.objects.filter(pk=now.plan).first()
    if plan is None or not plans.may_edit(plan, accounts.viewer(request)):
        return {}
    return {"plan_bar": presenting.bar(now, plan)}
