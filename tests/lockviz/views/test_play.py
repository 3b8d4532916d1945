"""Free play and clicks over HTTP: bad fields named in the answer, ended runs refuse clicks,
a session saved as a scenario and run again."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from django.test import Client

from lockviz.models import Run, RunEvent
from lockviz.runs import recorder
from lockviz.scenarios.schema import parse
from lockviz.teaching import play
from tests.conftest import browser_of

pytestmark = pytest.mark.django_db(transaction=True)
HTMX = {"HTTP_HX_REQUEST": "true"}
SESSION = {
    "format": 1,
    "title": "Free play: redis, 2 clients",
    "backend": "redis",
    "fencing": True,
    "ttl_ms": 2000,
    "clients": ["alice", "bob"],
    "steps": [],
}


def stored_run(status: str, *events: dict[str, Any], owner: str = "") -> Run:
    run = Run.objects.create(title="Free play", scenario=SESSION, status=status, owner=owner)
    for seq, event in enumerate(events, start=1):
        data = {"seq": seq, "t_ms": 10.0 * seq, "actor": "lab", **event}
        RunEvent.objects.create(
            run=run, seq=seq, t_ms=data["t_ms"], actor="lab", kind=data["kind"], data=data
        )
    return run


def wait(condition: Any, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_form_lists_every_backend_and_marks_the_missing_ones(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = play.unavailable
    missing = "missing etcd: install with `sudo apt-get install etcd-server`"
    monkeypatch.setattr(play, "unavailable", lambda name: missing if name == "etcd" else real(name))
    page = client.get("/play/").content.decode()
    assert 'value="etcd" disabled' in page and "cannot run here: missing etcd" in page
    assert "Redlock cannot fence" in page  # the reason fencing is forced off, on the form
    response = client.post("/play/", {"backend": "etcd", "clients": "2", "ttl_ms": "2000"})
    assert response.status_code == 400
    assert "etcd cannot run here: missing etcd" in response.content.decode()


def test_a_bad_lease_is_named_and_what_was_chosen_stays(client: Client) -> None:
    response = client.post(
        "/play/", {"backend": "redis", "clients": "4", "ttl_ms": "50", "fencing": "on"}, **HTMX
    )
    page = response.content.decode()
    assert response.status_code == 200 and "TTL:" in page and "100" in page
    assert (
        '<option value="4" selected>' in page and 'name="fencing" id="play-fencing" checked' in page
    )
    assert not Run.objects.exists()


def test_redlock_sessions_start_with_fencing_off(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[tuple[Run, bool]] = []
    monkeypatch.setattr(
        recorder, "start", lambda run, s, open_ended=False, **_: started.append((run, open_ended))
    )
    data = {"backend": "redlock", "clients": "3", "ttl_ms": "1500", "fencing": "on"}
    response = client.post("/play/", data)
    run = Run.objects.get()
    assert response["Location"] == f"/play/{run.pk}/"
    assert started == [(run, True)]  # open-ended: it waits for clicks
    assert run.scenario["fencing"] is False and run.scenario["clients"] == ["alice", "bob", "carol"]
    page = client.get(f"/play/{run.pk}/").content.decode()
    for name in ("alice", "carol", "redis-5", "storage"):
        assert f'id="faults-{name}"' in page


def test_bad_fields_are_named_in_the_answer(client: Client) -> None:
    run = stored_run(Run.Status.RUNNING, {"kind": "run_started"}, owner=browser_of(client))
    response = client.post(
        f"/runs/{run.pk}/do", {"do": "pause", "client": "alice", "ms": "<b>soon</b>"}
    )
    assert response.status_code == 400 and response["X-Fault"] == "refused"
    page = response.content.decode()
    assert "ms: &#x27;&lt;b&gt;soon&lt;/b&gt;&#x27; is not a whole number of milliseconds" in page
    htmx = client.post(f"/runs/{run.pk}/do", {"client": "alice"}, **HTMX)
    assert htmx.status_code == 200 and htmx["X-Fault"] == "refused"  # htmx swaps only 2xx
    assert "do: say what to do" in htmx.content.decode()


def test_a_finished_run_refuses_clicks_with_a_clear_message(client: Client) -> None:
    run = stored_run(
        Run.Status.FINISHED,
        {"kind": "run_started"},
        {"kind": "run_finished"},
        owner=browser_of(client),
    )
    response = client.post(f"/runs/{run.pk}/do", {"do": "acquire", "client": "alice"})
    assert response.status_code == 409
    assert f"run {run.pk} has finished: clicks only work while a run is live" in (
        response.content.decode()
    )
    assert client.post(f"/runs/{run.pk}/finish").status_code == 409
    assert client.post("/runs/nosuchrun/do", {"do": "acquire"}).status_code == 404


def test_a_run_still_starting_says_so(client: Client) -> None:
    run = stored_run(Run.Status.RUNNING, owner=browser_of(client))
    response = client.post(f"/runs/{run.pk}/do", {"do": "acquire", "client": "alice"}, **HTMX)
    assert "still starting" in response.content.decode()


def test_save_as_scenario_downloads_the_clicks(client: Client) -> None:
    run = stored_run(
        Run.Status.FINISHED,
        {"kind": "run_started"},
        {"kind": "step", "index": 0, "do": "acquire", "client": "alice"},
        {"kind": "step", "index": 1, "do": "pause", "client": "alice", "ms": 3000},
    )
    response = client.get(f"/runs/{run.pk}/scenario.json")
    assert response["Content-Disposition"] == f'attachment; filename="lockviz-play-{run.pk}.json"'
    saved = parse(json.loads(response.content))
    assert [(s.do, s.at_ms) for s in saved.steps] == [("acquire", 20), ("pause", 30)]


def test_a_session_too_long_to_run_again_names_the_late_step(client: Client) -> None:
    run = stored_run(
        Run.Status.FINISHED,
        {"kind": "step", "index": 0, "do": "acquire", "client": "alice"},
        owner=browser_of(client),
    )
    RunEvent.objects.filter(run=run, seq=1).update(
        t_ms=130_000, data={"seq": 1, "t_ms": 130_000, "actor": "lab", "kind": "step",
                            "index": 0, "do": "acquire", "client": "alice"}
    )  # fmt: skip
    page = client.post(f"/runs/{run.pk}/again", **HTMX).content.decode()
    assert "at most 120 s" in page and "steps[0].at_ms" in page
    empty = stored_run(Run.Status.FINISHED, {"kind": "run_started"}, owner=browser_of(client))
    response = client.post(f"/runs/{empty.pk}/again")
    assert response.status_code == 400 and "no clicks yet" in response.content.decode()


def test_only_the_browser_that_started_a_run_may_change_it(client: Client) -> None:
    run = stored_run(Run.Status.RUNNING, {"kind": "run_started"}, owner="someone-else")
    for url, data in (("do", {"do": "crash", "client": "alice"}), ("finish", {}), ("again", {})):
        response = client.post(f"/runs/{run.pk}/{url}", data)
        assert response.status_code == 403 and response["X-Fault"] == "refused"
        assert f"Only the browser that started run {run.pk} can" in response.content.decode()
        htmx = client.post(f"/runs/{run.pk}/{url}", data, **HTMX)
        assert htmx.status_code == 200 and htmx["X-Fault"] == "refused"
    page = client.get(f"/play/{run.pk}/").content.decode()
    assert "You are watching someone" in page
    assert 'id="finish-button"' not in page and 'id="faults-alice"' not in page
    mine = stored_run(Run.Status.RUNNING, {"kind": "run_started"}, owner=browser_of(client))
    page = client.get(f"/play/{mine.pk}/").content.decode()
    assert 'id="finish-button"' in page and 'id="faults-alice"' in page


@pytest.mark.live
def test_a_session_over_http_click_refuse_finish_and_run_again(client: Client) -> None:
    response = client.post("/play/", {"backend": "redis", "clients": "2", "ttl_ms": "800"})
    run_id = response["Location"].strip("/").split("/")[-1]
    wait(lambda: RunEvent.objects.filter(run_id=run_id, kind="run_started").exists())
    done = client.post(f"/runs/{run_id}/do", {"do": "acquire", "client": "alice"}, **HTMX)
    assert done["X-Fault"] == "done" and "done: alice asks for the lock" in done.content.decode()
    wait(lambda: RunEvent.objects.filter(run_id=run_id, kind="granted").exists())
    bad = client.post(f"/runs/{run_id}/do", {"do": "pause", "client": "mallory", "s": "1"})
    assert bad.status_code == 400
    assert "client: &#x27;mallory&#x27; is not one of the scenario&#x27;s clients" in (
        bad.content.decode()
    )
    cut = client.post(
        f"/runs/{run_id}/do", {"do": "partition", "client": "bob", "nodes": ["redis-1"]}
    )
    assert "done: bob \u21f9 redis-1 cut (blackhole)" in cut.content.decode()
    assert client.post(f"/runs/{run_id}/finish").status_code == 200
    wait(lambda: Run.objects.get(pk=run_id).status == Run.Status.FINISHED)
    again = client.post(f"/runs/{run_id}/again")
    rerun = Run.objects.get(pk=again["Location"].strip("/").split("/")[-1])
    assert [s["do"] for s in rerun.scenario["steps"]] == ["acquire", "partition"]
    wait(lambda: Run.objects.get(pk=rerun.pk).status == Run.Status.FINISHED)
