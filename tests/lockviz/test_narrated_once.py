"""A finished run is narrated once: a replay, a fork page, a chunk of events or a viewer's
catch-up reads the words stored with its events, and never says the run again from its start.

The narrator is counted, not replaced: every word these pages show is still its own.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from lockviz.edge import workers
from lockviz.models import Run, RunEvent
from lockviz.teaching import forks, reveals
from lockviz.views import replay
from tests.lockviz.teaching.test_forks import form as form_of
from tests.lockviz.teaching.test_forks import parse_run, stored
from tests.lockviz.views.test_replay import imported

pytestmark = pytest.mark.django_db


def page_data(html: bytes) -> dict[str, object]:
    page = html.decode()
    start = page.index('<script id="page-data" type="application/json">') + 47
    data: dict[str, object] = json.loads(page[start : page.index("</script>", start)])
    return data


def test_an_import_is_said_once_and_its_pages_say_nothing_again(
    client: Client, narrations: list[int]
) -> None:
    run = imported(client)
    # each event said once, as it was read, in a worker process (lockviz.edge.workers): stored
    # with its words, and not one said in this process
    assert not run.events.filter(said__isnull=True).exists() and run.events.count() > 20
    assert narrations[0] == 0
    for path in ("replay/", "fork/?at=5", "events.json?after=3", "replay/", "fork/?at=20"):
        assert client.get(f"/runs/{run.pk}/{path}").status_code == 200
    assert narrations[0] == 0  # five pages later: not one event said again


def test_a_finished_runs_mermaid_export_is_drawn_once(
    client: Client, narrations: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    run = imported(client)
    jobs: list[object] = []
    submit = workers.run

    def counted(job: Any, *args: Any) -> Any:
        jobs.append(job)
        return submit(job, *args)

    monkeypatch.setattr(workers, "run", counted)
    first = client.get(f"/runs/{run.pk}/export.mmd")
    assert first.status_code == 200 and first.content.startswith(b"sequenceDiagram")
    assert jobs == [reveals.mermaid]  # drawn in a worker process, from the stored words
    assert "alice" in first.content.decode() and narrations[0] == 0
    again = client.get(f"/runs/{run.pk}/export.mmd")
    assert again.content == first.content and jobs == [reveals.mermaid]  # drawn once, kept


def test_a_run_stored_without_words_is_said_once_on_first_reading(
    client: Client, narrations: list[int]
) -> None:
    run = stored()  # as runs were stored before words were kept
    assert not RunEvent.objects.filter(run=run, said__isnull=False).exists()
    first = page_data(client.get(f"/runs/{run.pk}/replay/").content)
    assert narrations[0] == run.events.count()
    client.get(f"/runs/{run.pk}/replay/")
    client.get(f"/runs/{run.pk}/fork/?at=9")
    assert narrations[0] == run.events.count()
    told = first["events"]
    assert isinstance(told, list)
    assert told[23]["said"]["text"] == "alice ← storage: write REJECTED (1 < 2)"


def test_reading_events_from_the_middle_reads_only_those_rows(client: Client) -> None:
    run = imported(client)
    with CaptureQueriesContext(connection) as queries:
        later = run.said_after(20, 3)
    assert [e["seq"] for e in later] == [21, 22, 23]
    assert len(queries.captured_queries) == 1
    assert "LIMIT 3" in queries.captured_queries[0]["sql"]


def test_a_long_runs_replay_loads_in_chunks(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay, "CHUNK", 10)
    run = imported(client)
    data = page_data(client.get(f"/runs/{run.pk}/replay/").content)
    seqs = [e["seq"] for e in data["events"]]  # type: ignore[union-attr]
    more = data["more"]
    while more:
        chunk = client.get(str(more)).json()
        assert len(chunk["events"]) <= 10
        seqs += [e["seq"] for e in chunk["events"]]
        more = chunk["more"]
    assert seqs == list(range(1, 30))  # every event once, in order, in 10 + 10 + 9
    assert client.get(f"/runs/{run.pk}/events.json?after=x").status_code == 400


def test_the_fork_page_offers_the_moments_near_the_one_chosen(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forks, "MOMENTS", 6)
    run = stored()
    page = client.get(f"/runs/{run.pk}/fork/?at=15").content.decode()
    offered = page[page.index('<select name="at"') : page.index("</select>")]
    assert re.findall(r'<option value="(\d+)"', offered) == ["12", "13", "14", "15", "16", "17"]
    assert 'value="15" selected' in offered
    assert 'href="?at=11"' in page and 'href="?at=18"' in page  # earlier and later moments
    assert Run.objects.get(pk=run.pk).events.count() == 29


def test_a_fork_of_a_long_script_edits_its_first_steps_and_keeps_the_rest(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forks, "EDITABLE", 2)
    run = stored()
    at = forks.split(run, 1)
    assert at is not None and len(at.rest) > 2
    page = client.get(f"/runs/{run.pk}/fork/?at=1").content.decode()
    assert 'name="orig_1"' in page and 'name="orig_2" value=""' in page  # 2 steps, then blanks
    assert f"…and {len(at.rest) - 2} later steps, kept as they are" in page
    form = {name: str(value) for name, value in form_of(at).items()}  # as a browser posts it
    assert forks.rest_from_form(form, at, parse_run(run)) == at.rest
