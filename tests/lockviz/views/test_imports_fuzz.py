"""``/import/`` under hostile input, generated: never a 500, every refusal shown by its field,
the pasted text kept; what it accepts opens (a replay, a run page) without an error either.

Each case goes through the Django test client, as pasted text or as an uploaded file, with and
without htmx's header. A server error raises in the test client, so "never a 500" is every
request returning at all.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from django.utils.html import escape
from hypothesis import example, given
from hypothesis import strategies as st

from lockviz.errors import ImportRefused
from lockviz.models import Run
from lockviz.runs import imports, launcher
from lockviz.runs.imports import ImportedRun
from lockviz.scenarios.schema import Scenario
from tests.strategies import EXPORTED, FUZZ, hostile_runs, hostile_scenarios, split_problem

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


@st.composite
def submissions(draw: st.DrawFn) -> tuple[str, bytes | str, bool]:
    """(form field, what is sent in it, with htmx): JSON of a scenario or a run, or any text."""
    data = draw(hostile_scenarios() | hostile_runs() | st.text(max_size=80))
    text = data if isinstance(data, str) else json.dumps(data)
    # A form is sent as UTF-8, which cannot hold half a UTF-16 pair: a browser sends U+FFFD for
    # one (JSON can still spell it, "\\ud800": json.dumps does, and the examples below).
    text = re.sub("[\ud800-\udfff]", "\ufffd", text)
    field = draw(st.sampled_from(["text", "file"]))
    return field, (text.encode() if field == "file" else text), draw(st.booleans())


def with_event(**fields: Any) -> dict[str, Any]:
    """The exported gc-pause run with one more event, of these fields, before its end."""
    run = json.loads(json.dumps(EXPORTED["gc-pause-fenced-run"]))
    last = run["events"][-1]
    run["events"].insert(-1, {"seq": last["seq"], "t_ms": last["t_ms"], "actor": "lab", **fields})
    last["seq"] += 1
    return run


def post(client: Client, field: str, sent: bytes | str, htmx: bool) -> Any:
    if field == "file":
        from django.core.files.uploadedfile import SimpleUploadedFile

        upload = SimpleUploadedFile("brought.json", sent if isinstance(sent, bytes) else b"")
        return client.post("/import/", {"file": upload, "text": ""}, **(HTMX if htmx else {}))
    return client.post("/import/", {"text": sent}, **(HTMX if htmx else {}))


def opens(client: Client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200, url


@FUZZ
@given(submissions())
@example(("text", json.dumps({**EXPORTED["gc-pause-fenced-run"], "scenario": "x"}), False))
@example(
    (
        "text",
        '{"format": 1, "title": "\\ud800", "backend": "redis", "ttl_ms": 1000, '
        '"clients": ["a"], "steps": [{"at_ms": 0, "do": "acquire", "client": "a"}]}',
        True,
    )
)
@example(("text", json.dumps({**EXPORTED["gc-pause-fenced-run"], "run_id": "\ud800"}), False))
@example(("file", json.dumps(with_event(say="\ud800", kind="step")).encode(), False))
@example(("text", json.dumps(with_event(kind="request", actor="lab", to="lab")), True))
@example(("text", json.dumps({**EXPORTED["gc-pause-fenced-run"], "scenario": {"a: b": 1}}), False))
def test_an_import_is_never_a_server_error_and_a_refusal_names_its_fields(
    case: tuple[str, bytes | str, bool],
) -> None:
    field, sent, htmx = case
    cache.clear()  # each example is a visitor with its share of imports (lockviz.shares)
    client = Client()
    response = post(client, field, sent, htmx)
    try:
        found = (
            imports.read(sent, field) if (sent.strip() if isinstance(sent, str) else sent) else None
        )
    except ImportRefused as exc:
        page = response.content.decode()
        assert response.status_code == (200 if htmx else 400)
        for problem in exc.problems:
            named = split_problem(problem)
            if named is not None:  # all but the cut-off line (tests/lockviz/runs/)
                assert f"<code>{escape(named[0])}</code>: {escape(named[1])}" in page
        if not htmx and isinstance(sent, str):
            assert f">{escape(sent)}</textarea>" in page  # the pasted text, kept to be fixed
        return
    if found is None:  # nothing sent at all
        assert "<code>text</code>: paste a scenario" in response.content.decode()
    elif isinstance(found, ImportedRun):
        url = response["HX-Redirect"] if htmx else response["Location"]
        run_id = url.strip("/").split("/")[-2]
        for page in (url, f"/runs/{run_id}/", f"/runs/{run_id}/verdict/",
                     f"/runs/{run_id}/export.json", f"/runs/{run_id}/export.mmd"):  # fmt: skip
            opens(client, page)
    else:
        assert response.status_code == 200 and "Run it live" in response.content.decode()


@FUZZ
@given(hostile_scenarios(), st.booleans())
def test_run_it_live_opens_the_run_page_or_names_the_problem(data: Any, htmx: bool) -> None:
    client = Client()
    started: list[Scenario] = []

    def launch(scenario: Scenario, slug: str = "", owner: str = "", **_: Any) -> Run:
        started.append(scenario)  # recorded, not run: the lab is not what is tested here
        return Run.objects.create(title=scenario.title, scenario=scenario.to_json(), owner=owner)

    original, launcher.launch = launcher.launch, launch  # type: ignore[assignment]
    try:
        response = client.post(
            "/import/run/", {"scenario": json.dumps(data)}, **(HTMX if htmx else {})
        )
    finally:
        launcher.launch = original  # type: ignore[method-assign]
    if not started:
        assert "This cannot be imported" in response.content.decode()
        return
    url = response["HX-Redirect"] if htmx else response["Location"]
    opens(client, url)
