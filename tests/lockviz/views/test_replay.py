"""The replay, export and import views: stored runs in, pages and files out, bad files named."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import HttpResponse
from django.test import Client
from django.utils.html import escape

from lockviz.models import Run
from tests.conftest import builtin_json
from tests.lockviz.runs.test_exports import DATA, recorded

pytestmark = pytest.mark.django_db


def upload(client: Client, data: bytes, name: str = "run.json", **extra: str) -> HttpResponse:
    return client.post("/import/", {"file": SimpleUploadedFile(name, data), "text": ""}, **extra)


def plain(response: HttpResponse) -> str:
    """The page's text with the field names' <code> tags taken out."""
    return re.sub(r"</?code>", "", response.content.decode())


def imported(client: Client) -> Run:
    response = upload(client, (DATA / "gc-pause-fenced-run.json").read_bytes())
    assert response.status_code == 302 and response["Location"].endswith("/replay/")
    return Run.objects.get(pk=response["Location"].strip("/").split("/")[-2])


def test_an_exported_run_imports_and_exports_the_same_events(client: Client) -> None:
    original = recorded("gc-pause-fenced")
    run = imported(client)
    assert run.status == Run.Status.FINISHED and run.verdict == original["verdict"]
    again = client.get(f"/runs/{run.pk}/export.json").json()
    assert again["events"] == original["events"]
    assert again["scenario"]["title"] == original["scenario"]["title"]


def test_the_replay_embeds_every_event_with_its_words(client: Client) -> None:
    run = imported(client)
    page = client.get(f"/runs/{run.pk}/replay/").content.decode()
    start = page.index('<script id="page-data" type="application/json">') + 47
    data = json.loads(page[start : page.index("</script>", start)])
    assert [e["seq"] for e in data["events"]] == list(range(1, 30))
    said = data["events"][23]["said"]
    assert said["text"] == "alice ← storage: write REJECTED (1 < 2)"
    assert said["label"] == "REJECTED 1 < 2" and said["mark"] == "REJECTED 1 < 2"
    assert "Keyboard" in page and "<kbd>Space</kbd>" in page


def test_no_template_comment_reaches_a_page() -> None:
    """Django's ``{# #}`` ends on its own line: one that runs on is printed, as the replay's
    partial printed its comment atop every replay, embed and downloaded file (a stray text in
    the layout's grid that, on a phone, pushed the controls off the screen)."""
    templates = Path(__file__).parents[3] / "templates"
    unclosed = [
        f"{path.relative_to(templates)}:{n}"
        for path in templates.rglob("*.html")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "{#" in line and "#}" not in line.split("{#", 1)[1]
    ]
    assert unclosed == []


def test_the_replay_embed_and_file_print_no_template_syntax(client: Client) -> None:
    run = imported(client)
    for path in (
        f"/runs/{run.pk}/replay/",
        f"/embed/runs/{run.pk}/",
        f"/runs/{run.pk}/export.html",
    ):
        page = client.get(path).content.decode()
        assert "{#" not in page and "#}" not in page and "{%" not in page, path


def test_the_mermaid_export_is_a_text_download(client: Client) -> None:
    run = imported(client)
    response = client.get(f"/runs/{run.pk}/export.mmd")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="lockviz-run-{run.pk}.mmd"'
    assert response.content.decode().startswith("sequenceDiagram\n")
    assert client.get("/runs/nope/export.mmd").status_code == 404
    assert client.get("/runs/nope/replay/").status_code == 404


def test_a_valid_scenario_is_shown_with_a_run_button(client: Client) -> None:
    text = json.dumps(builtin_json("gc-pause-fenced"))
    response = client.post("/import/", {"text": text}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and "A valid scenario: GC pause outlives the lease" in body
    assert 'action="/import/run/"' in body and "Run it live" in body
    assert Run.objects.count() == 0  # nothing runs before the button


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"not json at all", "file: not valid JSON"),
        (b"[1, 2, 3]", "file: holds a JSON array"),
        (bytes(range(256)), "file: this is a binary file"),
        (b'{"format": 1, "title": 7}', "title: Input should be a valid string"),
        (b'{"scenario": {}, "events": [{"seq": "1"}]}', "events[0].seq: must be a whole number"),
        (b"{" * 6 * 1024 * 1024, "file: run.json is more than 5 MB, the most an import may be"),
    ],
)
def test_garbage_files_are_named_inline_never_a_traceback(
    client: Client, data: bytes, message: str
) -> None:
    partial = upload(client, data, HTTP_HX_REQUEST="true")
    assert partial.status_code == 200  # htmx swaps it in beside the form
    assert message in plain(partial) and "<form" not in plain(partial)
    page = upload(client, data)
    assert page.status_code == 400 and message in plain(page)
    assert Run.objects.count() == 0


def test_pasted_text_is_kept_when_it_is_refused(client: Client) -> None:
    data = builtin_json("gc-pause-fenced")
    data["steps"][1]["ms"] = -5
    text = json.dumps(data)
    page = plain(client.post("/import/", {"text": text}))
    assert "steps[1].ms: a pause must last more than 0 ms" in page
    assert f">{escape(text)}</textarea>" in page  # back in the box, as text
    huge = client.post("/import/", {"text": "x" * (7 * 1024 * 1024)}, HTTP_HX_REQUEST="true")
    assert "text: more than 6.0 MB is too much to paste" in plain(huge)
    as_part = SimpleUploadedFile("pasted.txt", b"{" + b" " * (3 * 1024 * 1024))  # import.js
    response = client.post("/import/", {"text": as_part}, HTTP_HX_REQUEST="true")
    assert "text: not valid JSON" in plain(response)
    empty = client.post("/import/", {"text": "  "}, HTTP_HX_REQUEST="true")
    assert "text: paste a scenario or an exported run, or choose a file" in plain(empty)


def test_a_refusal_says_where_the_text_is_to_fix(client: Client) -> None:
    data = builtin_json("gc-pause-fenced")
    data["steps"][1]["ms"] = -5
    text = json.dumps(data)
    pasted = plain(client.post("/import/", {"text": text}, HTTP_HX_REQUEST="true"))
    assert "your text is still in the box above" in pasted
    # From a file, with htmx: the box stays empty, so the file is what to fix.
    from_file = plain(upload(client, text.encode(), "gc.json", HTTP_HX_REQUEST="true"))
    assert "a pause must last more than 0 ms" in from_file
    assert "still in the box" not in from_file
    assert "Fix gc.json and choose it again" in from_file
    # Without htmx the file's text comes back in the box, and the refusal says so.
    page = plain(upload(client, text.encode(), "gc.json"))
    assert "The text of gc.json is in the box above now" in page
    assert f">{escape(text)}</textarea>" in page
    # Nothing given: nothing to find in the box.
    empty = plain(client.post("/import/", {"text": " "}, HTTP_HX_REQUEST="true"))
    assert "in the box above" not in empty


def test_run_it_live_refuses_what_is_not_a_scenario(client: Client) -> None:
    run = json.dumps(recorded("gc-pause-fenced"))
    response = client.post("/import/run/", {"scenario": run}, HTTP_HX_REQUEST="true")
    assert "this is an exported run" in response.content.decode()
    response = client.post("/import/run/", {"scenario": "{"}, HTTP_HX_REQUEST="true")
    assert "scenario: not valid JSON" in plain(response)
    assert Run.objects.count() == 0


def test_hostile_titles_stay_text_in_the_replay_and_the_import_summary(client: Client) -> None:
    data = builtin_json("contention")
    data["title"] = "<script>alert('x')</script>"
    body = client.post("/import/", {"text": json.dumps(data)}).content.decode()
    assert "<script>alert(" not in body and "&lt;script&gt;alert(" in body
    run = Run.objects.create(title=data["title"], scenario=data)
    page = client.get(f"/runs/{run.pk}/replay/").content.decode()
    assert "<script>alert(" not in page
