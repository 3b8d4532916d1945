"""New scenario, the page: the check as the learner types answers with the problems by row, a
valid scenario can be run, downloaded and linked, a link opens the editor filled in, and input is
bounded. The editor's logic: tests/lockviz/teaching/test_editor.py."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lockviz.catalogue import BACKENDS
from lockviz.models import SavedScenario
from lockviz.scenarios.library import builtin
from lockviz.teaching import editor
from tests.lockviz.teaching.test_editor import THREE, form
from tests.lockviz.teaching.test_forks import stored

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_check_answers_htmx_with_the_problems_by_row(client: Client) -> None:
    bad = (*THREE[:1], {"at_ms": "100", "do": "pause", "who": "alice", "ms": "-5"}, THREE[2])
    page = client.post("/scenarios/new/check", form(*bad), **HTMX).content.decode()
    assert "step 2 (pause): ms: a pause must last more than 0 ms" in page
    assert 'id="editor-row-1-problem" hx-swap-oob="innerHTML"><span>⚠ ms: a pause' in page
    assert 'id="editor-row-0-problem" hx-swap-oob="innerHTML"></p>' in page
    assert "editor-run" not in page  # nothing to run yet
    good = client.post("/scenarios/new/check", form(*THREE), **HTMX).content.decode()
    assert "✓ Valid: 3 steps, 2 clients" in good and 'id="editor-run"' in good
    assert 'action="/import/run/"' in good  # run as any scenario is run
    assert "editor-save-form" not in good and "editor-save-login" in good  # not a teacher


def test_without_htmx_the_check_is_the_page_and_add_gives_a_row(client: Client) -> None:
    response = client.post("/scenarios/new/check", form(*THREE, add="1"))
    assert response.status_code == 200
    page = response.content.decode()
    assert 'id="editor-row-3"' in page and 'name="rows" value="4"' in page
    refused = client.post("/scenarios/new/check", form({"at_ms": "0", "do": "fly", "who": "x"}))
    assert refused.status_code == 400
    assert "step 1 (fly): who: &#x27;x&#x27; is not in this scenario" in refused.content.decode()


def test_the_check_is_bounded(client: Client) -> None:
    big = form(*THREE, description="x" * (70 * 1024))
    response = client.post("/scenarios/new/check", big, **HTMX)
    assert response.status_code == 413
    assert "form: more than 64 KB" in response.content.decode()
    rows = form(*THREE, rows="100000")  # more rows than there are: at most MAX_ROWS are read
    assert client.post("/scenarios/new/check", rows, **HTMX).status_code == 200
    long = editor.from_form(form(*THREE, title="t" * 5000, clients="a" * 5000))
    assert long.settings["title"] == "t" * 120 and len(long.settings["clients"]) == 200


def test_a_link_opens_the_editor_filled_in_and_round_trips(client: Client) -> None:
    draft = editor.from_form(form(*THREE, ttl_ms="1500", renew="on"))
    compact = draft.compact()
    assert compact is not None
    code = editor.encode(compact)
    assert editor.decode(code) == compact
    page = client.get(f"/scenarios/new/?s={code}").content.decode()
    assert 'name="ttl_ms" id="editor-ttl" value="1500"' in page
    assert 'name="ms_1" value="3000"' in page and "✓ Valid: 3 steps" in page
    again = editor.from_form(editor.form_of(compact)[0])
    assert again.compact() == compact
    exported = client.post("/scenarios/new/export.json", {"scenario": json.dumps(compact)})
    assert exported["Content-Disposition"].startswith("attachment")
    assert json.loads(exported.content) == compact


def test_a_bad_or_long_link_is_refused_by_name(client: Client) -> None:
    for code, said in (
        ("a" * (editor.MAX_LINK + 1), "the most a link may hold is 8000"),
        ("not*base64", "characters base64url never has"),
        ("eyJhIjo", "cut short or altered"),
        (editor.encode({}) + "WzFd", "cut short or altered"),
        ("WzFd", "holds no JSON object"),  # [1]
    ):
        response = client.get("/scenarios/new/", {"s": code})
        assert response.status_code == 400, code
        assert said in response.content.decode(), code
    junk = editor.encode({"backend": 5, "steps": [1, {"do": {"x": 1}}], "clients": "alice"})
    page = client.get(f"/scenarios/new/?s={junk}")  # any JSON object: filled in, then checked
    assert page.status_code == 200 and "problem" in page.content.decode()


def test_every_builtin_opens_in_the_editor(client: Client) -> None:
    for slug, scenario in builtin().items():
        form_data, left_out = editor.form_of(scenario.to_json())
        draft = editor.from_form(form_data)
        assert draft.problems == [], (slug, draft.problems)
        assert draft.scenario is not None, slug
        variant = {"variant": scenario.variant or scenario.lock_service.default_variant}
        # what the servers see is the same (a default variant may be written or not)
        assert draft.scenario.script() | variant == scenario.script() | variant, slug
        if any(step.say for step in scenario.steps):
            assert any("narration" in x for x in left_out), slug
    assert client.get("/scenarios/new/?from=gc-pause-fenced").status_code == 200
    assert client.get("/scenarios/new/?from=nope").status_code == 400


def test_the_page_names_every_backend_and_hands_its_script_the_verbs(client: Client) -> None:
    page = client.get("/scenarios/new/").content.decode()
    for service in BACKENDS.values():
        assert f'data-backend="{service.name}"' in page
    assert '"verbs": {"acquire": ["timeout_ms"]' in page
    assert 'id="editor-blank-row"' in page and "Not checked yet" in page


def test_a_runs_steps_open_in_the_editor_without_what_is_not_revealed(client: Client) -> None:
    run = stored()
    response = client.get("/scenarios/new/", {"run": run.pk})
    page = response.content.decode()
    assert response.status_code == 200 and "✓ Valid: 7 steps" in page
    assert 'name="do_2"' in page and 'name="ms_1" value="3500"' in page
    assert "it has already seen token 2" not in page  # a checkpoint's answer: never in a row
    assert "narration or checkpoint of" in page  # said to be left out
    missing = client.get("/scenarios/new/", {"run": "nosuchrun"})
    assert missing.status_code == 400 and "run: there is no run" in missing.content.decode()


def test_a_teacher_keeps_a_valid_scenario_in_the_library(client: Client) -> None:
    """Logged in, the valid scenario's answer offers Save to my library, which keeps it
    (lockviz.library), under its title, with the visibility chosen."""
    teacher = User.objects.create_user("ada-teacher", password="a long enough password")
    client.force_login(teacher)
    good = client.post("/scenarios/new/check", form(*THREE), **HTMX).content.decode()
    assert 'id="editor-save-form"' in good and 'action="/library/scenarios/"' in good
    scenario = re.search(r'name="scenario" value="([^"]+)"', good)
    assert scenario, "the save form carries no scenario"
    saved = client.post(
        "/library/scenarios/",
        {"scenario": html.unescape(scenario.group(1)), "visibility": "unlisted"},
    )
    assert saved.status_code == 302, saved.content.decode()[:300]
    kept = SavedScenario.objects.get(user=teacher)
    assert kept.visibility == "unlisted" and len(kept.scenario["steps"]) == 3
