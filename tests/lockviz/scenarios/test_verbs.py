"""The step vocabulary: one table that the schema, the engine, free play and lessons read."""

from __future__ import annotations

from lockviz.scenarios.schema import Step, parse
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS, WORDS, Target, commands
from tests.conftest import builtin_json


def test_every_field_a_verb_takes_is_a_field_of_a_step() -> None:
    assert set(VERB_FIELDS) <= set(Step.model_fields)
    assert set(Step.model_fields) >= WORDS


def test_commands_go_to_the_client_and_everything_else_is_a_fault() -> None:
    assert commands() == ["acquire", "read", "write", "release", "extend", "leader"]
    assert {v for v, verb in VERBS.items() if verb.lock} == {
        "acquire", "release", "extend", "leader",
    }  # fmt: skip
    assert {v for v, verb in VERBS.items() if verb.election} == {"leader"}
    assert all(VERBS[v].targets == {Target.CLIENT} for v in commands())
    assert VERBS["crash"].targets == {Target.CLIENT, Target.NODE}
    assert {v for v, verb in VERBS.items() if Target.LINK in verb.targets} == {
        "partition",
        "heal",
        "delay",
    }


def test_a_step_knows_its_target() -> None:
    scenario = parse(builtin_json("gc-pause-fenced"))
    targets = {(s.do, s.target) for s in scenario.steps}
    assert ("pause", Target.CLIENT) in targets and ("acquire", Target.CLIENT) in targets
    crash = Step(at_ms=0, do="crash", node="redis-1")
    cut = Step(at_ms=0, do="partition", client="alice", nodes=["redis-1"])
    assert crash.target is Target.NODE and not crash.command
    assert cut.target is Target.LINK


def test_the_script_of_a_scenario_drops_only_its_words() -> None:
    data = builtin_json("gc-pause-fenced")
    script = parse(data).script()
    assert "title" not in script and "description" not in script and "expect" not in script
    assert all("say" not in step and "ask" not in step for step in script["steps"])
    worded = {**data, "title": "other", "steps": [{**s, "say": "x"} for s in data["steps"]]}
    assert parse(worded).script() == script
    changed = {**data, "steps": [{**data["steps"][0], "timeout_ms": 7}, *data["steps"][1:]]}
    assert parse(changed).script() != script
