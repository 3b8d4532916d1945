"""Replays that leave the site: the embed's framing headers, the replay page's snippet and
download link, and what the one-file replay carries (the browser plays it in
tests/browser/test_sharing.py)."""

from __future__ import annotations

import base64
import gzip
import html
import json
import re

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.utils.html import escape

from bench.abuse import big_import
from lockviz.models import Run
from lockviz.runs import webpage
from tests.lockviz.teaching.test_reveals import found, open_class, secrets_of, teachers_run
from tests.lockviz.views.test_replay import imported, upload

pytestmark = pytest.mark.django_db


def run_events(html: str) -> tuple[str, list[dict[str, object]]]:
    """The encoding and the events a one-file replay carries."""
    found = re.search(
        r'<script id="run-events" type="[^"]+" data-encoding="([^"]+)">([^<]*)</script>', html
    )
    assert found, "no events in the file"
    encoding, text = found.groups()
    if encoding == "gzip+base64":
        text = gzip.decompress(base64.b64decode(text)).decode()
    return encoding, json.loads(text)


def test_the_embed_is_framable_by_the_setting_and_no_other_page_is(client: Client) -> None:
    run = imported(client)
    embed = client.get(f"/embed/runs/{run.pk}/")
    assert embed.status_code == 200
    assert embed["Content-Security-Policy"] == "frame-ancestors *"
    assert "X-Frame-Options" not in embed
    page = embed.content.decode()
    assert (
        'id="rp-play"' in page
        and 'id="diagram"' in page
        and re.search(r"pages/embed\.(\w+\.)?js", page)
    )
    assert 'class="site"' not in page and "rp-whatif" not in page  # the replay, nothing else
    for other in (f"/runs/{run.pk}/replay/", f"/runs/{run.pk}/", "/", "/lessons/"):
        response = client.get(other)
        assert response["X-Frame-Options"] == "DENY", other
        assert "frame-ancestors" not in response.get("Content-Security-Policy", ""), other
    with override_settings(LOCKVIZ_EMBED_ANCESTORS="https://course.example.edu"):
        framed = client.get(f"/embed/runs/{run.pk}/")
    assert framed["Content-Security-Policy"] == "frame-ancestors https://course.example.edu"
    assert client.get("/embed/runs/nosuchrun/").status_code == 404


def test_the_replay_page_offers_the_snippet_and_the_download(client: Client) -> None:
    run = imported(client)
    page = client.get(f"/runs/{run.pk}/replay/").content.decode()
    snippet = re.search(r'<textarea id="embed-code" readonly[^>]*>([^<]*)</textarea>', page)
    assert snippet, "no snippet"
    iframe = html.unescape(snippet.group(1))
    assert f'src="http://testserver/embed/runs/{run.pk}/"' in iframe
    assert iframe.startswith("<iframe ") and 'title="lockviz replay: ' in iframe
    assert '<label for="embed-code">' in page and 'id="embed-copy"' in page
    assert f'href="/runs/{run.pk}/export.html"' in page and "Download as a web page" in page


def test_the_one_file_replay_carries_everything_and_names_nothing_to_fetch(
    client: Client,
) -> None:
    run = imported(client)
    response = client.get(f"/runs/{run.pk}/export.html")
    assert response["Content-Disposition"] == f'attachment; filename="lockviz-run-{run.pk}.html"'
    page = response.content.decode()
    assert f'content="{escape(webpage.CSP)}"' in page
    # nothing to load: no src, no stylesheet link, no url() in the styles, no module by URL
    assert not re.search(r"<(script|img|iframe|link)[^>]*\s(src|href)=\"(?!data:)", page)
    assert "url(" not in webpage.styles() and "import " not in webpage.script().split("\n", 2)[1]
    assert not re.search(r"^\s*(import|export)\b", webpage.script(), re.M)
    encoding, events = run_events(page)
    told = client.get(f"/runs/{run.pk}/events.json?after=0").json()["events"]
    assert encoding == "json" and events == told and len(events) == run.events.count()
    assert 'id="rp-verdict"' in page and 'id="story"' in page and "<kbd>Space</kbd>" in page


def test_a_long_runs_file_is_compressed_and_carries_every_event(client: Client) -> None:
    cache.clear()
    big = big_import(20_000)
    response = upload(client, json.dumps(big).encode())
    assert response.status_code == 302, response.content[:400]
    run = Run.objects.get(pk=response["Location"].strip("/").split("/")[-2])
    page = client.get(f"/runs/{run.pk}/export.html").content.decode()
    encoding, events = run_events(page)
    assert encoding == "gzip+base64" and len(events) == 20_000 == run.events.count()
    assert [e["seq"] for e in events] == list(range(1, 20_001))
    assert len(page) < 4_000_000, len(page)


def test_a_lesson_run_is_embedded_and_downloaded_as_its_replay_shows_it() -> None:
    """A student of the class that runs a lesson is asked first, and reads no answer not yet
    revealed, in the embed or the file (its events unpacked); the presenter reads them all."""
    teacher, student = Client(), Client()
    open_class(teacher, student)
    run = teachers_run(teacher)
    secrets = [text for texts in secrets_of(run).values() for text in texts]
    for path in (f"/embed/runs/{run.pk}/", f"/runs/{run.pk}/export.html"):
        asked = student.get(path).content.decode()
        assert 'id="show-outcome"' in asked and 'id="rp-play"' not in asked, path
        shown = student.get(path + "?outcome=shown").content.decode()
        told = [json.dumps(run_events(shown)[1])] if "export" in path else []
        assert 'id="rp-play"' in shown, path
        assert not any(found("\n".join([shown, *told]), secret) for secret in secrets), path
    own = teacher.get(f"/runs/{run.pk}/export.html").content.decode()
    assert all(found(json.dumps(run_events(own)[1]) + own, secret) for secret in secrets)
