"""Hostile scenarios, generated: every one is either accepted or refused field by field.

The strategies (tests/strategies.py) derive scenarios from the format itself and mutate them
and the built-in scenarios. Whatever comes in, ``parse`` returns a scenario or raises
``ScenarioError`` whose every problem starts with the path of a field of the input
(``steps[3].ms: ...``) and stays short; never another exception.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from lockviz.errors import ScenarioError
from lockviz.scenarios.schema import check_step, loads, parse
from tests.strategies import (
    ANY_JSON,
    BUILTIN,
    FUZZ,
    hostile_scenarios,
    mutated,
    scenarios,
    steps,
    unnamed,
)


def outcome(data: Any, allow_empty: bool = False) -> list[str]:
    """The problems ``parse`` finds in ``data`` ([] when it accepts it)."""
    try:
        scenario = parse(data, allow_empty=allow_empty)
    except ScenarioError as exc:
        assert exc.problems, "a refusal without a reason"
        return exc.problems
    again = parse(scenario.to_json(), allow_empty=allow_empty)  # what it saves, it reads back
    assert again == scenario
    scenario.script()
    return []


@FUZZ
@given(hostile_scenarios())
@example({"format": 1, "title": "t", "backend": "redis", "ttl_ms": 1000, "clients": ["a"],
          "steps": [{"at_ms": 0, "do": "acquire", "client": "a", "a: b": 1}]})  # fmt: skip
@example({**BUILTIN["contention"], "x" * 5000: 1})
@example([BUILTIN["contention"]])
def test_every_scenario_is_accepted_or_refused_by_its_fields(data: Any) -> None:
    problems = outcome(data)
    assert unnamed(problems, data, roots=("scenario",)) == []


@FUZZ
@given(scenarios())
def test_scenarios_built_from_the_format_are_refused_only_for_their_meaning(
    data: dict[str, Any],
) -> None:
    """Generated within every bound of the schema: a refusal, if any, is about what the steps
    mean together (a client's step done to a node...), never a type or a bound."""
    for problem in outcome(data):
        assert "Input should" not in problem and "should have" not in problem, problem


@FUZZ
@given(st.text(max_size=200) | st.binary(max_size=200) | ANY_JSON.map(json.dumps))
def test_any_text_is_a_scenario_or_a_named_refusal(text: str | bytes) -> None:
    try:
        loads(text)
    except ScenarioError as exc:
        assert exc.problems and all(len(p) < 600 for p in exc.problems)


@st.composite
def clicks(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    """A valid session scenario and a step for it, often broken."""
    scenario = draw(scenarios())
    scenario["steps"] = []
    servers = ["redis-1", "storage", "zk-1", "pg-1", "etcd-1", "redis-5"]
    step = draw(steps(scenario["clients"], servers))
    del step["at_ms"]
    return scenario, draw(st.just(step) | mutated(step))


@FUZZ
@given(clicks())
def test_a_click_is_a_step_or_a_refusal_naming_its_field(case: tuple[dict[str, Any], Any]) -> None:
    data, step = case
    try:
        scenario = parse(data, allow_empty=True)
    except ScenarioError:
        return  # the scenario itself is refused: covered above
    try:
        check_step(scenario, step, at_ms=10)
    except ScenarioError as exc:
        assert unnamed(exc.problems, step, roots=("step",)) == []
