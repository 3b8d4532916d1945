"""A learner's answer as the scenario to run, or refused by name: no servers."""

from __future__ import annotations

import pytest

from lockviz.errors import ExerciseRefused
from lockviz.exercises import answers, definition
from lockviz.exercises.builtin import builtin


def test_a_fix_refuses_a_change_it_does_not_allow_by_name() -> None:
    ex = builtin()["fix-redis-fencing"]  # only the storage kind may change
    with pytest.raises(ExerciseRefused) as refused:
        answers.scenario_for(ex, {"changes": {"storage": "fenced", "ttl_ms": 9000, "renew": True}})
    said = " ".join(refused.value.problems)
    assert "ttl_ms: this exercise fixes the lease (ttl_ms) at 2000" in said
    assert "renew: this exercise fixes renewal" in said
    assert "you may change only the storage kind" in said


def test_a_knob_left_as_it_was_is_no_change() -> None:
    ex = builtin()["fix-redis-fencing"]
    scenario, goal = answers.scenario_for(ex, {"changes": {"storage": "fenced", "ttl_ms": 2000}})
    assert scenario.storage_kind == "fenced" and scenario.ttl_ms == 2000 and goal == "safe"


def test_a_swap_exchanges_the_two_steps_times() -> None:
    ex = builtin()["fix-etcd-release-order"]
    scenario, _ = answers.scenario_for(ex, {"changes": {"order": True}})
    alice = [(s.at_ms, s.do) for s in scenario.steps if s.client == "alice"]
    assert alice == [(0, "acquire"), (300, "write"), (700, "release")]


def test_a_break_keeps_to_its_budget_and_adds_only_faults() -> None:
    ex = builtin()["break-redis-pause"]  # one fault, the clients' steps given
    two = [{"at_ms": 100, "client": "alice", "do": "pause", "ms": 100},
           {"at_ms": 200, "client": "bob", "do": "pause", "ms": 100}]  # fmt: skip
    with pytest.raises(ExerciseRefused, match="2 faults; this exercise allows at most 1"):
        answers.scenario_for(ex, {"steps": two})
    with pytest.raises(ExerciseRefused, match=r"step 1 \(write\): this exercise gives"):
        answers.scenario_for(
            ex, {"steps": [{"at_ms": 100, "client": "alice", "do": "write", "value": "X"}]}
        )
    with pytest.raises(ExerciseRefused, match=r"step 1 \(pause\): client: 'carol' is not"):
        answers.scenario_for(
            ex, {"steps": [{"at_ms": 1, "client": "carol", "do": "pause", "ms": 5}]}
        )
    scenario, goal = answers.scenario_for(ex, answers.solution(ex))
    assert goal == "lost_update" and [s.do for s in scenario.steps].count("pause") == 1
    assert scenario.steps == sorted(scenario.steps, key=lambda s: s.at_ms)


def test_a_prediction_must_be_one_of_the_choices() -> None:
    ex = builtin()["predict-zk-partition"]
    with pytest.raises(ExerciseRefused, match="predict: choose one"):
        answers.scenario_for(ex, {"predict": "stuck"})
    assert answers.scenario_for(ex, {"predict": "refused"})[1] == "predict:refused"


def test_an_exercise_names_each_problem_by_its_field() -> None:
    data = builtin()["fix-redis-fencing"].to_json()
    data.update(goal="two_holders", may_change=["colour"], reveal_after=0)
    with pytest.raises(ExerciseRefused) as refused:
        definition.parse(data)
    said = " ".join(refused.value.problems)
    assert "may_change[0]" in said and "reveal_after" in said
    data = {**builtin()["fix-redis-fencing"].to_json(), "goal": "two_holders"}
    with pytest.raises(ExerciseRefused, match='goal: a fix asks for "safe"'):
        definition.parse(data)
    data = {**builtin()["fix-redis-fencing"].to_json(), "scenario": {"format": 1}}
    with pytest.raises(ExerciseRefused, match=r"scenario\.title: required"):
        definition.parse(data)
