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
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client, override_settings
from django.utils.html import escape

from bench.abuse import big_import
from lockviz.models import Plan, Run, SavedRun
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
    assert "; frame-ancestors *;" in embed["Content-Security-Policy"]  # with lockviz.edge.csp's
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
        assert "frame-ancestors 'none'" in response["Content-Security-Policy"], other
    with override_settings(LOCKVIZ_EMBED_ANCESTORS="https://course.example.edu"):
        framed = client.get(f"/embed/runs/{run.pk}/")
    assert "frame-ancestors https://course.example.edu;" in framed["Content-Security-Policy"]
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
        asked = student.get(path, headers={"Sec-Fetch-Dest": "document"}).content.decode()
        assert 'id="show-outcome"' in asked and 'id="rp-play"' not in asked, path
        shown = student.get(path + "?outcome=shown").content.decode()
        told = [json.dumps(run_events(shown)[1])] if "export" in path else []
        assert 'id="rp-play"' in shown, path
        assert not any(found("\n".join([shown, *told]), secret) for secret in secrets), path
    own = teacher.get(f"/runs/{run.pk}/export.html").content.decode()
    assert all(found(json.dumps(run_events(own)[1]) + own, secret) for secret in secrets)


def test_the_embeds_ask_first_page_is_standalone_and_not_framable() -> None:
    """It was the whole site page (navigation, the "Teach a class" form), framable by anyone;
    then a blank frame (DENY) wherever a course page framed it."""
    teacher, student = Client(), Client()
    open_class(teacher, student)
    run = teachers_run(teacher)
    for asked in (
        student.get(f"/embed/runs/{run.pk}/", headers={"Sec-Fetch-Dest": "document"}),
        student.get(f"/embed/runs/{run.pk}/?outcome=ask", headers={"Sec-Fetch-Dest": "iframe"}),
    ):
        page = asked.content.decode()
        assert 'id="show-outcome"' in page and 'class="standalone' in page
        assert "<nav" not in page and "<form" not in page and "Teach a class" not in page
        assert asked["X-Frame-Options"] == "DENY"
        assert "frame-ancestors 'none'" in asked["Content-Security-Policy"]
        assert "Sec-Fetch-Dest" in asked["Vary"]
    # Framed (or by a browser that does not say): a notice a frame may hold, a link out.
    for dest in ("iframe", ""):
        framed = student.get(f"/embed/runs/{run.pk}/", headers={"Sec-Fetch-Dest": dest})
        page = framed.content.decode()
        assert 'id="show-outcome"' not in page and 'id="rp-play"' not in page
        assert "X-Frame-Options" not in framed
        assert "frame-ancestors *" in framed["Content-Security-Policy"]
        assert re.search(r'<a id="ask-elsewhere" href="\?outcome=ask" target="_blank"', page)
    shown = student.get(f"/embed/runs/{run.pk}/?outcome=shown")
    assert "X-Frame-Options" not in shown  # the embed itself: as any course page frames it


def test_a_lecture_plan_embeds_its_items_in_order_without_the_teachers_notes(
    client: Client,
) -> None:
    """/embed/plans/<id>/: framable as a run's embed is; a replay plays in place (its own embed,
    from and to its moments), a lesson and a scenario are links, a poll shows its choices; the
    notes, for the lecture, are nowhere on it; a private run's replay is not shown."""
    run = imported(client)
    items = [
        {"kind": "lesson", "lesson": "gc-pause-fenced", "note": "NOTE-lesson"},
        {"kind": "replay", "run": run.pk, "from": 5, "to": 20, "note": "NOTE-replay"},
        {"kind": "scenario", "slug": "contention", "note": "NOTE-scenario"},
        {"kind": "poll", "question": "Who writes?", "choices": ["Alice", "Bob"], "note": "NOTE-p"},
    ]
    plan = Plan.objects.create(title="Week 3", owner="a-teacher", items=items)
    embed = client.get(f"/embed/plans/{plan.pk}/")
    assert embed.status_code == 200 and "X-Frame-Options" not in embed
    assert "; frame-ancestors *;" in embed["Content-Security-Policy"]  # with lockviz.edge.csp's
    page = html.unescape(embed.content.decode())
    assert "NOTE-" not in page
    assert f'src="/embed/runs/{run.pk}/?to=20#seq=5"' in page
    assert 'href="/lessons/gc-pause-fenced/"' in page
    assert 'href="/scenarios/new/?from=contention"' in page
    assert "<li>Alice</li><li>Bob</li>" in page
    order = [page.index(s) for s in ("Lesson", "Replay", "contention", "Who writes?")]
    assert order == sorted(order)

    teacher = User.objects.create_user("plan-teacher")
    SavedRun.objects.create(run=run, user=teacher, title="t", visibility="private")
    hidden = html.unescape(Client().get(f"/embed/plans/{plan.pk}/").content.decode())
    assert f"/embed/runs/{run.pk}/" not in hidden and "private to its teacher's class" in hidden
    assert client.get("/embed/plans/nosuchplan/").status_code == 404
