"""Importing a scenario (to run it live) or an exported run (to replay it).

Errors come back as a partial that htmx swaps in beside the form, so the pasted text and the
chosen file stay as they were; without htmx the whole page comes back with the text kept.
"""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import Http404, HttpResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from lockviz.edge import workers
from lockviz.errors import Busy, ImportRefused, NotAdmitted
from lockviz.runs import imports, launcher, stored
from lockviz.runs.imports import ImportedScenario
from lockviz.shares import address_of, rates
from lockviz.views import HtmxHttpRequest, browser
from lockviz.views.refusals import respond


@require_http_methods(["GET", "POST"])
def import_page(request: HtmxHttpRequest) -> HttpResponse:
    if request.method == "GET":
        return render(request, "lockviz/import.html", {"text": "", "paste_limit": _limit()})
    rates.take(rates.IMPORTS, address_of(request))  # reading one is the cost: count it first
    text, data = "", b""
    data_in: bytes | str = data
    try:
        text = _pasted(request)
        data_in, field, source = _chosen(request, text)
        found = workers.run(stored.read_and_tell, data_in, field)  # the CPU: not in this process
    except (ImportRefused, Busy) as exc:
        kept = text or _as_text(data_in)  # without htmx, a file's text comes back to be fixed
        busy = isinstance(exc, Busy)  # the workers are full: nothing wrong with the file
        problems = [(exc.message, "")] if busy else _split(exc.problems)
        context: dict[str, object] = {"problems": problems, "busy": busy}
        context.update(_where(request, text, kept))
        answer = _answer(request, "lockviz/_import_errors.html", context, kept, exc.status)
        if isinstance(exc, Busy):
            answer["Retry-After"] = str(exc.retry_after_s)
        return answer
    if isinstance(found, ImportedScenario):
        scenario = found.scenario
        context = {
            "scenario": scenario,
            "scenario_json": json.dumps(scenario.to_json()),
            "source": source,
        }
        return _answer(request, "lockviz/_import_scenario.html", context, text, status=200)
    run = stored.store(found, owner=browser(request))
    return _go(request, reverse("replay", args=[run.pk]))


@require_GET
def scenario_format(request: HtmxHttpRequest) -> HttpResponse:
    """docs/scenarios.md, the scenario format, as the import page links to it."""
    doc = settings.BASE_DIR / "docs" / "scenarios.md"
    try:
        text = doc.read_text(encoding="utf-8")
    except OSError:
        raise Http404("the scenario format's documentation is not installed here") from None
    return render(request, "lockviz/scenario_format.html", {"text": text})


@require_POST
def run_imported(request: HtmxHttpRequest) -> HttpResponse:
    """The "Run it live" button under a checked scenario."""
    try:
        found = imports.read(request.POST.get("scenario", ""), "scenario")
        if not isinstance(found, ImportedScenario):
            raise ImportRefused(["scenario: this is an exported run; open its replay instead"])
    except ImportRefused as exc:
        return _answer(
            request, "lockviz/_import_errors.html", {"problems": _split(exc.problems)}, ""
        )
    try:
        run = launcher.launch(found.scenario, owner=browser(request), address=address_of(request))
    except NotAdmitted as refused:
        return respond(request, refused)
    return _go(request, reverse("run", args=[run.pk]))


def _pasted(request: HtmxHttpRequest) -> str:
    """The pasted text: a form field, or a file part when it was too big for one (import.js)."""
    too_big = getattr(request, "lockviz_upload_too_big", None)
    if too_big is not None and too_big[0] == "text":  # the upload handler stopped keeping it
        raise ImportRefused(["text: more than 5 MB of text; the most an import may be is 5 MB"])
    try:
        part = request.FILES.get("text")
        if part is None:
            return str(request.POST.get("text", ""))
        if (part.size or 0) > imports.MAX_BYTES:
            raise ImportRefused(
                [f"text: {(part.size or 0) / 1024 / 1024:.1f} MB; the most is 5 MB"]
            )
        return bytes(part.read()).decode("utf-8", errors="replace")  # a textarea's is UTF-8
    except RequestDataTooBig:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 1024 / 1024
        raise ImportRefused(
            [
                f"text: more than {limit:.1f} MB is too much to paste; save it to a file and "
                f"upload that (up to {imports.MAX_BYTES // 1024 // 1024} MB)"
            ]
        ) from None
    except (TooManyFieldsSent, MultiPartParserError) as exc:
        raise ImportRefused([f"form: the upload was not understood ({exc})"]) from None


def _chosen(request: HtmxHttpRequest, text: str) -> tuple[bytes | str, str, str]:
    """(what to import, its form field, where it came from): a chosen file wins over text."""
    upload = request.FILES.get("file")
    too_big = getattr(request, "lockviz_upload_too_big", None)
    if too_big is not None:  # the upload handler stopped keeping it at the limit
        raise ImportRefused([f"file: {too_big[1]} is more than 5 MB, the most an import may be"])
    if upload is not None and upload.size:
        if upload.size > imports.MAX_BYTES:  # refused on its size, without reading it
            size = f"{upload.size / 1024 / 1024:.1f} MB"
            raise ImportRefused([f"file: {upload.name} is {size}; the most is 5 MB"])
        return upload.read(), "file", f"the file {upload.name}"
    if not text.strip():
        raise ImportRefused(["text: paste a scenario or an exported run, or choose a file"])
    return text, "text", "the pasted text"


def _where(request: HtmxHttpRequest, text: str, kept: str) -> dict[str, str]:
    """Where the refused text is now, so the refusal says where to fix it: ``came_from`` is
    "text" (still in the box), "file-kept" (the file's text is in the box now), "file" (fix the
    file and choose it again: with htmx the page keeps the form as it was, the box empty) or
    "" (nothing was given)."""
    upload = request.FILES.get("file")
    if upload is not None and upload.size:
        came_from = "file-kept" if kept and not request.htmx else "file"
        return {"came_from": came_from, "file_name": str(upload.name or "the file")}
    return {"came_from": "text" if text.strip() else "", "file_name": ""}


def _as_text(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig") if b"\0" not in data else ""
    except UnicodeDecodeError:
        return ""


def _answer(
    request: HtmxHttpRequest,
    partial: str,
    context: dict[str, object],
    text: str,
    status: int = 400,
) -> HttpResponse:
    """The partial alone for htmx (swapped in beside the form), else the page around it."""
    if request.htmx:
        return render(request, partial, context)
    page = {**context, "text": text, "result": partial, "paste_limit": _limit()}
    return render(request, "lockviz/import.html", page, status=status)


def _limit() -> int | None:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


# A field's path: names, [3], and ["an odd key"] quoted as JSON (which may hold ": " itself).
_FIELD = re.compile(r'^((?:[^":]|"(?:[^"\\]|\\.)*"|:(?! ))+): (.*)$', re.S)


def _split(problems: list[str]) -> list[tuple[str, str]]:
    """("steps[3].ms", "must be ...") pairs, so the page can set the field apart."""
    return [(found[1], found[2]) if (found := _FIELD.match(p)) else (p, "") for p in problems]


def _go(request: HtmxHttpRequest, url: str) -> HttpResponse:
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)
