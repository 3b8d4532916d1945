"""New scenario's logic (lockviz/teaching/editor.py, steprows.py): the editor's form becomes a
scenario or every problem named by its row or field; a link's JSON, whatever it holds, is filled
in or named. The page and its endpoints: tests/lockviz/views/test_editor.py."""

from __future__ import annotations

import base64
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lockviz.errors import ScenarioError
from lockviz.scenarios.schema import parse
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS
from lockviz.teaching import editor, steprows
from tests.strategies import ANY_JSON, FUZZ, LONGEST_PROBLEM, TEXT


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


def test_the_editor_writes_an_election_and_a_replicated_storage() -> None:
    """What issue 36 added is in the editor's menus: an election's variant and its "leader"
    step, and a replicated storage whose second replica a link step may cut."""
    election = editor.from_form(
        form({"at_ms": "0", "do": "acquire", "who": "alice"},
             {"at_ms": "100", "do": "leader", "who": "bob"},
             backend="etcd", variant_etcd="election")
    )  # fmt: skip
    assert election.problems == [] and election.scenario is not None
    assert election.scenario.variant == "election"
    lww = editor.from_form(
        form({"at_ms": "0", "do": "partition", "who": "alice", "nodes": "storage-2"},
             {"at_ms": "100", "do": "write", "who": "alice", "value": "A"},
             backend="none", storage="lww")
    )  # fmt: skip
    assert lww.problems == [] and lww.actors == ["alice", "bob", "storage", "storage-2"]


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
