"""Views: pages render, the run form validates and starts a real run, bad input is named."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.templatetags.static import static as static_url
from django.test import Client
from django.utils.html import escape

from lockviz.edge import staticfiles
from lockviz.models import Run
from lockviz.scenarios.library import builtin
from tests.conftest import builtin_json, wait_for_run

pytestmark = pytest.mark.django_db(transaction=True)
DATA = Path(__file__).parent.parent / "data"


def test_index_lists_every_builtin_scenario(client: Client) -> None:
    page = client.get("/").content.decode()
    for s in builtin().values():
        assert escape(s.title) in page


def test_the_index_leads_to_each_lock_services_scenarios_from_its_top(client: Client) -> None:
    """46 cards are a long page (37,000 px on a phone): a list at the top jumps to each
    service's section, and says how many scenarios it has."""
    page = client.get("/").content.decode()
    headings = re.findall(r'<h2 class="backend-heading" id="(backend-[a-z]+)"', page)
    nav = page.split('<nav class="backend-nav"', 1)[1].split("</nav>", 1)[0]
    assert re.findall(r'href="#(backend-[a-z]+)"', nav) == headings and len(headings) >= 5
    redis = sum(s.backend == "redis" for s in builtin().values())
    counted = rf'href="#backend-redis">Single Redis node</a> <span class="count">\({redis}\)'
    assert re.search(counted, nav), nav


@pytest.mark.live
def test_posting_the_form_runs_the_scenario_live_with_fencing_off(client: Client) -> None:
    for _ in range(3):  # a machine that fell behind says so (inconclusive): play it again
        response = client.post(
            "/runs/", {"scenario": "gc-pause-fenced", "ttl_ms": "2000"}, HTTP_HX_REQUEST="true"
        )
        assert response.status_code == 200
        run_id = response["HX-Redirect"].strip("/").split("/")[-1]
        run = wait_for_run(run_id)
        behind = run.verdict.get("inconclusive")
        if not behind:
            break
        assert str(behind).startswith("the machine fell behind"), behind
    assert run.scenario["fencing"] is False  # the checkbox was left unticked
    assert "expect" not in run.scenario  # the prediction was for the fenced version
    assert run.verdict["data_corrupted"] is True
    assert run.verdict["stale_writes_accepted"] == 1
    page = client.get(f"/runs/{run_id}/").content.decode()
    assert "storage <strong>plain</strong>" in page
    verdict = client.get(f"/runs/{run_id}/verdict/").content.decode()
    assert "Mutual exclusion violated, data corrupted" in verdict
    exported = client.get(f"/runs/{run_id}/export.json").json()
    assert exported["events"][-1]["kind"] == "run_finished"


@pytest.mark.live
def test_run_again_keeps_the_scenario_and_applies_the_new_knobs(client: Client) -> None:
    response = client.post("/runs/", {"scenario": "contention"})  # as written: plain storage
    first = wait_for_run(response["Location"].strip("/").split("/")[-1])
    assert first.expect_met is True
    response = client.post("/runs/", {"from_run": first.pk, "fencing": "on", "ttl_ms": "5000"})
    second = wait_for_run(response["Location"].strip("/").split("/")[-1])
    assert second.slug == "contention" and second.scenario["ttl_ms"] == 5000


@pytest.mark.django_db
def test_only_the_browser_that_ran_it_may_run_it_again_with_other_knobs(client: Client) -> None:
    theirs = Run.objects.create(
        title="t", slug="contention", scenario=builtin_json("contention"),
        status=Run.Status.FINISHED, owner="someone-else",
    )  # fmt: skip
    response = client.post("/runs/", {"from_run": theirs.pk, "fencing": "on"})
    assert response.status_code == 403
    assert "Only the browser that started run" in response.content.decode()
    assert Run.objects.count() == 1
    page = client.get(f"/runs/{theirs.pk}/").content.decode()
    assert "someone else's" in page and 'name="from_run"' not in page


def test_bad_form_input_is_named_and_nothing_runs(client: Client) -> None:
    response = client.post(
        "/runs/", {"scenario": "gc-pause-fenced", "ttl_ms": "12"}, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert "TTL:" in body and "greater than or equal to 100" in body
    response = client.post("/runs/", {"scenario": "nope"}, HTTP_HX_REQUEST="true")
    assert "Unknown scenario &#x27;nope&#x27;" in response.content.decode()
    response = client.post("/runs/", {"scenario": "gc-pause-fenced", "ttl_ms": "abc"})
    assert response.status_code == 400 and "Enter a whole number" in response.content.decode()
    assert Run.objects.count() == 0


def test_hostile_titles_are_shown_as_text(client: Client) -> None:
    data = builtin()["contention"].to_json()
    data["title"] = "<script>alert('x')</script>"
    run = Run.objects.create(title=data["title"], scenario=data)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "<script>alert(" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


def test_unknown_run_is_a_404(client: Client) -> None:
    assert client.get("/runs/nope/").status_code == 404
    assert client.get("/runs/nope/export.json").status_code == 404


def test_an_inconclusive_run_is_not_judged_on_its_page_nor_in_its_export(client: Client) -> None:
    # A real run whose app was stopped (SIGSTOP) for 2.5 s after alice's grant: see
    # tests/lockviz/runs/test_exports.py.
    recorded = json.loads((DATA / "gc-pause-fenced-inconclusive-run.json").read_text())
    run = Run.objects.create(
        title="GC pause outlives the lease",
        scenario=recorded["scenario"],
        status=Run.Status.FINISHED,
        verdict=recorded["verdict"],
        expect_met=recorded["expect_met"],
    )
    verdict = client.get(f"/runs/{run.pk}/verdict/").content.decode()
    said = recorded["inconclusive"]
    assert said.startswith("the machine fell behind by") and said.endswith("ms at step 2")
    assert f"⚠ Inconclusive: {said}" in verdict
    assert f'<span class="unjudged">Inconclusive: {said}, so' in verdict  # the presenter hides it
    assert "Not judged" in verdict and "Not what the scenario predicted" not in verdict
    exported = client.get(f"/runs/{run.pk}/export.json").json()
    assert exported["expect_met"] is None
    assert exported["inconclusive"] == said


def test_the_index_prefetches_every_asset_a_run_page_adds(client: Client) -> None:
    """A click on Run should wait for the run, not for its page's scripts: whatever run.html
    loads that every page does not, the index prefetches (a new script on the run page fails
    this test until it is prefetched too). A page's script is its entry module and every module
    that one imports; the modules are preloaded as modules, the rest prefetched."""
    templates = Path(__file__).parents[3] / "templates"
    static = r"{% static '([^']+)' %}"

    def loads(template: str) -> set[str]:
        names = set(re.findall(static, (templates / template).read_text()))
        scripts = {m for name in names if name.endswith(".js") for m in staticfiles.modules(name)}
        return names | scripts

    run_page, every_page = loads("lockviz/run.html"), loads("base.html")
    assert "lockviz/diagram/handlers/bars.js" in run_page - every_page  # imported, not named
    assert "lockviz/room/presenter.js" in every_page
    page = client.get("/").content.decode()
    prefetched = set(re.findall(r'<link rel="prefetch" href="([^"]+)">', page))
    preloaded = set(re.findall(r'<link rel="modulepreload" href="([^"]+)">', page))
    adds = run_page - every_page
    assert prefetched == {static_url(name) for name in adds if not name.endswith(".js")}
    assert preloaded == {static_url(name) for name in adds if name.endswith(".js")}
