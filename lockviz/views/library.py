"""A teacher's library: Save on a run, the library page (search, visibility, delete), a saved
scenario's page, and the whole library as one archive.

Thin: what is kept, who may see it and the archive's format are lockviz.library's. Saving
needs an account; an anonymous Save leads to the login page and back.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from lockviz.catalogue import BACKENDS, STORAGE_KINDS
from lockviz.errors import ImportRefused, Invalid, NotYours, Refusal
from lockviz.library import access, archive, listing, saving
from lockviz.models import Run, SavedExercise, SavedRun, SavedScenario, Visibility
from lockviz.shares import address_of, rates
from lockviz.views import HtmxHttpRequest, owns
from lockviz.views.refusals import respond

MAX_SCENARIO = 256 * 1024  # characters of a scenario pasted into the library


def _teacher(request: HtmxHttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)  # login_required let only a teacher through
    return user


def _back(request: HttpRequest, default: str) -> str:
    """Where a form said to go back to, if it is on this site; else ``default``."""
    wanted = str(request.POST.get("back") or "")[:2000]
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return wanted if wanted and safe else default


def save_box(request: HttpRequest, run: Run, back: str = "") -> dict[str, object]:
    """What the Save box on a run's pages shows (templates/lockviz/_save.html); ``back``: the
    page it is on (this request's, unless the box is the answer to its own Save)."""
    saved = SavedRun.objects.filter(run=run).first()
    user = request.user
    back = back or request.get_full_path()
    return {
        "back": back,
        "run_id": run.pk,
        "saved": saved,
        "mine": saved is not None and saved.user_id == user.pk,
        "teacher": user.is_authenticated,
        "yours": owns(request, run),
        "retention_days": settings.LOCKVIZ_RETENTION_DAYS,
        "login": f"{reverse('login')}?{urlencode({'next': back})}",
        "visibilities": Visibility.choices,
    }


@require_POST
def save_run(request: HtmxHttpRequest, run_id: str) -> HttpResponse:
    """Save (or change the title and visibility of) a run: the Save box, or the library."""
    run = access.run_or_404(request, run_id)
    back = _back(request, reverse("run", args=[run.pk]))
    if not request.user.is_authenticated:
        login = f"{reverse('login')}?{urlencode({'next': back})}"
        return HttpResponseClientRedirect(login) if request.htmx else redirect(login)
    problems: list[str] = []
    try:  # NotYours unless it is the teacher's run (saving.save_run)
        saving.save_run(
            _teacher(request), run, str(request.POST.get("visibility", Visibility.PRIVATE)),
            str(request.POST.get("title", "")),
        )  # fmt: skip
    except Refusal as refused:
        problems = refused.problems
    if request.htmx:
        context = {**save_box(request, run, back), "problems": problems}
        return render(request, "lockviz/_save.html", context)
    if problems:
        return respond(request, Invalid(problems))
    return redirect(back)


@login_required
@require_GET
def library_page(request: HtmxHttpRequest) -> HttpResponse:
    search = listing.Search.of(request.GET)
    runs, scenarios = listing.library(_teacher(request), search)
    context = {
        "search": search,
        "runs": runs,
        "scenarios": scenarios,
        "exercises": SavedExercise.objects.filter(user=_teacher(request))[:200],
        "backends": BACKENDS.values(),
        "storages": STORAGE_KINDS.values(),
        "visibilities": Visibility.choices,
    }
    return render(request, "lockviz/library.html", context)


@login_required
@require_POST
def add_scenario(request: HtmxHttpRequest) -> HttpResponse:
    """A scenario pasted into the library (the scenario editor saves through the same call)."""
    text = str(request.POST.get("scenario", ""))
    try:
        if len(text) > MAX_SCENARIO:
            raise Invalid(f"scenario: {len(text)} characters; the most is {MAX_SCENARIO}")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise Invalid(f"scenario: not JSON ({exc})") from None
        saved = saving.save_scenario(
            _teacher(request), data, str(request.POST.get("visibility", Visibility.PRIVATE)),
            str(request.POST.get("title", "")),
        )  # fmt: skip
    except Refusal as refused:
        context = {"problems": refused.problems, "text": text[:MAX_SCENARIO]}
        return render(request, "lockviz/library_add.html", context, status=400)
    return redirect("saved_scenario", saved.pk)


@login_required
@require_POST
def scenario_visibility(request: HtmxHttpRequest, saved_id: str) -> HttpResponse:
    saved = SavedScenario.objects.filter(pk=saved_id[:16], user=_teacher(request)).first()
    if saved is None:
        return respond(
            request, NotYours(f"There is no scenario {saved_id[:16]!r} in your library.")
        )
    try:
        saved.visibility = saving.visibility(request.POST.get("visibility"))
        saved.title = saving.title(request.POST.get("title"), saved.title)
    except Invalid as refused:
        return respond(request, refused)
    saved.save(update_fields=["visibility", "title", "updated"])
    return redirect(_back(request, reverse("library")))


@require_GET
def saved_scenario(request: HtmxHttpRequest, saved_id: str) -> HttpResponse:
    """A saved scenario's permalink: what it is, its JSON, Run it live."""
    saved = access.scenario_or_404(request, saved_id)
    context = {
        "saved": saved,
        "mine": saved.user_id == request.user.pk,
        "scenario_json": json.dumps(saved.scenario, indent=1),
        "visibilities": Visibility.choices,
    }
    return render(request, "lockviz/saved_scenario.html", context)


@require_GET
def saved_scenario_json(request: HtmxHttpRequest, saved_id: str) -> JsonResponse:
    saved = access.scenario_or_404(request, saved_id)
    response = JsonResponse(saved.scenario, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="lockviz-scenario-{saved.pk}.json"'
    return response


@login_required
@require_http_methods(["GET", "POST"])
def forget(request: HtmxHttpRequest, kind: str, key: str) -> HttpResponse:
    """Delete a run or a scenario from the library: GET asks, POST deletes."""
    user = _teacher(request)
    found: SavedRun | SavedScenario | None = (
        SavedRun.objects.filter(run_id=key[:16], user=user).first()
        if kind == "runs"
        else SavedScenario.objects.filter(pk=key[:16], user=user).first()
    )
    if found is None:
        return respond(request, NotYours(f"There is no such item ({key[:16]!r}) in your library."))
    if request.method == "GET":
        context = {"item": found, "kind": "run" if kind == "runs" else "scenario"}
        return render(request, "lockviz/library_delete.html", context)
    if kind == "runs":
        saving.forget_run(user, key)
    else:
        saving.forget_scenario(user, key)
    messages.success(request, f"Deleted {found.title!r} from your library.")
    return redirect("library")


@login_required
@require_GET
def export_library(request: HtmxHttpRequest) -> HttpResponse:
    user = _teacher(request)
    response = HttpResponse(archive.export(user), content_type="application/zip")
    name = f"lockviz-library-{user.get_username()}.zip"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@login_required
@require_POST
def import_library(request: HtmxHttpRequest) -> HttpResponse:
    rates.take(rates.IMPORTS, address_of(request))
    upload = request.FILES.get("archive")
    limit_mb = settings.LOCKVIZ_MAX_UPLOAD // 1024 // 1024
    try:
        if getattr(request, "lockviz_upload_too_big", None) is not None:  # stopped at the limit
            raise ImportRefused(f"archive: more than {limit_mb} MB, the most an upload may be")
        if upload is None or not upload.size:
            raise ImportRefused("archive: choose a library archive (.zip) to import")
        if upload.size > settings.LOCKVIZ_MAX_UPLOAD:
            size = upload.size / 1024 / 1024
            raise ImportRefused(f"archive: {size:.1f} MB; the most is {limit_mb} MB")
        added = archive.load(_teacher(request), upload.read())
    except ImportRefused as refused:
        search = listing.Search()
        runs, scenarios = listing.library(_teacher(request), search)
        context = {
            "search": search, "runs": runs, "scenarios": scenarios,
            "backends": BACKENDS.values(), "storages": STORAGE_KINDS.values(),
            "visibilities": Visibility.choices, "import_problems": refused.problems,
        }  # fmt: skip
        return render(request, "lockviz/library.html", context, status=400)
    messages.success(request, added.sentence)
    return redirect("library")
