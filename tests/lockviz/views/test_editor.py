"""New scenario: the check as the learner types names every problem by its row, a valid scenario
can be run, downloaded and linked, a link opens the editor filled in, and input is bounded."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from lockviz.catalogue import BACKENDS
from lockviz.errors import ScenarioError
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import parse
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS
from lockviz.teaching import editor, steprows
from tests.lockviz.teaching.test_forks import stored
from tests.strategies import ANY_JSON, FUZZ, LONGEST_PROBLEM, TEXT

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def form(*steps: dict[str, Any], **settings: Any) -> dict[str, Any]:
    """The editor's form with ``settings`` and one row for each step (fields as the page names
    them: ``at_ms``, ``do``, ``who``, ``ms``...)."""
    data: dict[str, Any] = {"title": "Three steps", "backend": "redis", "storage": "fenced"}
    data |= {"clients": "alice, bob", "ttl_ms": "2000", "rows": str(len(steps))} | settings
    for i, step in enumerate(steps):
        data |= {f"{name}_{i}": value for name, value in step.items()}
    return data


THREE = (
    {"at_ms": "0", "do": "acquire", "who": "alice"},
    {"at_ms": "100", "do": "pause", "who": "alice", "ms": "3000"},
    {"at_ms": "200", "do": "acquire", "who": "bob"},
)


def test_every_verb_field_has_its_input_and_each_verb_its_fields() -> None:
    assert steprows.EDITED == VERB_FIELDS
    assert steprows.verb_fields() == {n: sorted(v.fields) for n, v in VERBS.items()}


def test_a_valid_form_is_a_scenario_the_schema_takes() -> None:
    draft = editor.from_form(form(*THREE))
    assert draft.problems == [] and draft.scenario is not None
    compact = draft.compact()
    assert compact is not None and parse(compact) == draft.scenario
    assert [s["do"] for s in compact["steps"]] == ["acquire", "pause", "acquire"]
    assert compact["steps"][1] == {"at_ms": 100, "do": "pause", "client": "alice", "ms": 3000}


def test_every_problem_is_named_by_its_row() -> None:
    bad = (
        {"at_ms": "0", "do": "acquire", "who": "alice"},
        {"at_ms": "100", "do": "pause", "who": "alice", "ms": "0"},  # schema: more than 0 ms
        {"at_ms": "x", "do": "acquire", "who": "bob"},  # the row: not a number
        {"at_ms": "300", "do": "write", "who": "carol", "value": "A"},  # not a client
        {"at_ms": "", "do": "", "who": ""},  # blank: left out, no problem
        {"at_ms": "400", "do": "partition", "who": "bob"},  # nodes missing
    )
    draft = editor.from_form(form(*bad))
    assert draft.scenario is None
    assert draft.problems == [
        "step 2 (pause): ms: a pause must last more than 0 ms",
        "step 3 (acquire): at_ms: 'x' is not a whole number of milliseconds",
        "step 4 (write): who: 'carol' is not in this scenario; choose one of alice, bob, "
        "redis-1, storage",
        "step 6 (partition): nodes: required for 'partition' (which servers, e.g. [\"redis-1\"])",
    ]
    assert sorted(draft.row_problems) == [1, 2, 3, 5]


def test_settings_problems_name_their_field() -> None:
    draft = editor.from_form(form(*THREE, ttl_ms="5"))
    assert draft.problems == ["lease (ttl_ms): Input should be greater than or equal to 100"]
    draft = editor.from_form(form(*THREE, clients="alice, lab", backend="redlock"))
    assert any(p.startswith("storage: Redlock cannot fence") for p in draft.problems)
    assert any(p.startswith("clients[1]: 'lab' is a server's") for p in draft.problems)
    empty = editor.from_form(form())
    assert empty.problems == ["steps: add a step (choose what it does in a row's “do”)"]


def test_a_backends_own_settings_are_read_only_for_it() -> None:
    steps = ({"at_ms": "0", "do": "acquire", "who": "alice"},)
    draft = editor.from_form(
        form(*steps, backend="redlock", storage="plain", count_redlock="3", node_timeout_ms="50",
             idle_session_timeout_ms="500", variant_postgres="pooled")
    )  # fmt: skip
    assert draft.scenario is not None
    assert (draft.scenario.redis_nodes, draft.scenario.node_timeout_ms) == (3, 50)
    assert draft.scenario.idle_session_timeout_ms is None  # PostgreSQL's, hidden for Redlock
    assert draft.actors == ["alice", "bob", "redis-1", "redis-2", "redis-3", "storage"]


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
    assert "can_save" not in good and "editor-save" not in good  # the library's, at merge


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
    assert '"can_save": false' in page and '"verbs": {"acquire": ["timeout_ms"]' in page
    assert 'id="editor-blank-row"' in page and "Not checked yet" in page


ROW_FIELDS = st.sampled_from([*steprows.FIELDS, "rows", "backend", "storage", "clients", "ttl_ms"])


@FUZZ
@given(
    fields=st.dictionaries(
        st.tuples(ROW_FIELDS, st.integers(min_value=0, max_value=3)), TEXT | st.sampled_from(
            ["pause", "acquire", "partition", "write", "alice", "bob", "redis-1", "0", "-5",
             "1e9", "zookeeper", "none", "sequencer", "100000"]
        ), max_size=12,
    )
)  # fmt: skip
def test_any_form_is_a_scenario_or_problems_each_named(fields: dict[Any, str]) -> None:
    data: dict[str, Any] = {"rows": "4"}
    for (name, i), value in fields.items():
        key = name if name in ("rows", "backend", "storage", "clients", "ttl_ms") else f"{name}_{i}"
        data[key] = value
    draft = editor.from_form(data)
    assert (draft.scenario is None) == bool(draft.problems)
    for problem in draft.problems:
        assert len(problem) <= LONGEST_PROBLEM, problem
        name = problem.split(": ", 1)[0]
        assert name.startswith("step ") or name.split("[")[0].split(".")[0] in {
            "title", "description", "backend", "variant", "storage", "clients", "lease (ttl_ms)",
            "fencing", "steps", "redis_nodes", "zk_nodes", "node_timeout_ms",
            "idle_session_timeout_ms", "renew", "persistence", "scenario",
        }, problem  # fmt: skip


@FUZZ
@given(value=ANY_JSON)
def test_any_json_in_a_link_opens_filled_in_or_named(value: Any) -> None:
    data = {"steps": [value], "clients": value, "backend": value, "ttl_ms": value}
    text = json.dumps(data, separators=(",", ":"))  # a lone surrogate travels as \\ud800
    code = base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")
    try:
        found = editor.decode(code)
    except ScenarioError as exc:  # too long for a link: named, never a traceback
        assert exc.problems[0].startswith("link: "), exc.problems
        return
    draft = editor.from_form(editor.form_of(found)[0])
    assert (draft.scenario is None) == bool(draft.problems)
    if draft.scenario is not None:
        editor.encode(editor.compact(draft.scenario))  # and a valid one makes its own link


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
