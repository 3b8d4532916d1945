"""Malformed input gets a sentence, never a 500: every form, body and file that carries JSON
from outside goes through one bounded decoder (lockviz.jsontext), and an archive's members are
read as what they are (a zip can hold a corrupt deflate stream).

Each row was a 500 (five of them needing no account): a nesting 100,000 deep, an integer of
5,000 digits, a broken archive member.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Callable
from html import unescape

import pytest
from django.http import HttpResponse
from django.test import Client

from lockviz.models import Run
from tests.lockviz.library.helpers import recorded_run, teacher

pytestmark = pytest.mark.django_db
DEEP = "[" * 100_000 + "]" * 100_000
DEEPER = "[" * 200_000 + "]" * 200_000
DIGITS = '{"format": 1, "title": "x", "n": ' + "9" * 5000 + "}"


def client() -> Client:
    return Client(raise_request_exception=False)


def plan_import(text: str) -> HttpResponse:
    return client().post("/plans/import", {"text": text})


def plan_editor(text: str) -> HttpResponse:
    form = {"title": "T", "items-0-kind": "scenario", "items-0-slug": "json",
            "items-0-scenario": text}  # fmt: skip
    return client().post("/plans/new/", form)


def fork_form(text: str) -> HttpResponse:
    run = recorded_run("contention")
    form = {"at": "1", "rows": "1", "orig_0": text, "keep_0": "on"}
    return client().post(f"/runs/{run.pk}/fork/", form)


def room_state(text: str) -> HttpResponse:
    presenter = client()
    code = presenter.post("/rooms/")["Location"].split("/")[2]
    return presenter.post(f"/rooms/{code}/show", text, "application/json")


def library_box(text: str) -> HttpResponse:
    _, ada = teacher("ada")
    ada.raise_request_exception = False
    return ada.post("/library/scenarios/", {"scenario": text})


def archive(files: dict[str, bytes], corrupt: str = "") -> HttpResponse:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        for name, data in files.items():
            packed.writestr(name, data)
    data = buffer.getvalue()
    if corrupt:  # the member's deflate stream is damaged after its header, CRC left as it was
        at = data.index(corrupt.encode()) + len(corrupt) + 2
        data = data[:at] + bytes(b ^ 0x5A for b in data[at : at + 40]) + data[at + 40 :]
    _, ada = teacher("ada")
    ada.raise_request_exception = False
    upload = io.BytesIO(data)
    upload.name = "library.zip"
    return ada.post("/library/import/", {"archive": upload})


def manifest(runs: list[dict[str, str]]) -> bytes:
    return json.dumps({"format": "lockviz-library", "version": 1, "runs": runs,
                       "scenarios": []}).encode()  # fmt: skip


ROWS: list[tuple[str, Callable[[], HttpResponse], str]] = [
    ("plan import, deep", lambda: plan_import(DEEP), "nested 100,000 deep"),
    ("plan import, digits", lambda: plan_import(DIGITS), "an integer of 5,000 digits"),
    ("plan editor, deep", lambda: plan_editor("[" * 30_000 + "]" * 30_000), "nested 30,000 deep"),
    ("plan editor, digits", lambda: plan_editor(DIGITS), "an integer of 5,000 digits"),
    ("fork's orig_0, deep", lambda: fork_form(DEEP), ""),
    ("room state, deep", lambda: room_state(DEEP), "state: 195.3 KB is too big"),
    ("room state, less deep", lambda: room_state("[" * 5000 + "]" * 5000), "nested 5,000 deep"),
    ("library box, deep", lambda: library_box(DEEP), "nested 100,000 deep"),
    ("library box, deeper", lambda: library_box(DEEPER), "characters; the most is 262144"),
    ("library.json, deep", lambda: archive({"library.json": DEEP.encode()}), "nested 100,000"),
    (
        "archive member, corrupt deflate",
        lambda: archive(
            {
                "library.json": manifest([{"file": "runs/a.json", "title": "a"}]),
                "runs/a.json": b'{"events": [' + b'{"seq": 1}, ' * 4000 + b"{}]}",
            },
            corrupt="runs/a.json",
        ),
        "runs/a.json: cannot be read",
    ),
]


@pytest.mark.parametrize(("name", "send", "said"), ROWS, ids=[row[0] for row in ROWS])
def test_malformed_input_is_refused_with_a_sentence_not_a_500(
    name: str, send: Callable[[], HttpResponse], said: str
) -> None:
    response = send()
    assert 400 <= response.status_code < 500, (name, response.status_code)
    assert said in unescape(response.content.decode()), name
    assert not Run.objects.filter(title="x").exists()


def test_the_corrupt_member_test_really_corrupts_it() -> None:
    """(The row above would prove nothing if zipfile could still read the member.)"""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        packed.writestr("runs/a.json", b'{"seq": 1}, ' * 4000)
    data = buffer.getvalue()
    at = data.index(b"runs/a.json") + len("runs/a.json") + 2
    data = data[:at] + bytes(b ^ 0x5A for b in data[at : at + 40]) + data[at + 40 :]
    with (
        zipfile.ZipFile(io.BytesIO(data)) as packed,
        pytest.raises((zlib.error, zipfile.BadZipFile)),
    ):
        packed.read("runs/a.json")
