"""lockviz/models/runs.py: what a run's row reads from its own fields."""

from __future__ import annotations

import pytest

from lockviz.errors import ScenarioError
from lockviz.models import Run, runs
from lockviz.scenarios.schema import parse, startable
from tests.conftest import builtin_json


def test_a_runs_scenario_is_parsed_once_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[object] = []

    def counted(data: object, allow_empty: bool = False) -> object:
        parsed.append(data)
        return parse(data, allow_empty)

    monkeypatch.setattr(runs, "parse", counted)
    run = Run(scenario=builtin_json("gc-pause-fenced"))
    first = run.parsed_scenario
    assert run.parsed_scenario is first and first.script() == parse(run.scenario).script()
    assert len(parsed) == 1


def test_only_a_free_play_session_starts_without_steps() -> None:
    session = Run(scenario={**builtin_json("gc-pause-fenced"), "steps": []}, open_ended=True)
    assert startable(session.parsed_scenario, session.open_ended).steps == []
    emptied = Run(scenario=session.scenario)  # not a session: the page shows it, no lab plays it
    with pytest.raises(ScenarioError, match="needs at least one step"):
        startable(emptied.parsed_scenario, emptied.open_ended)
    with pytest.raises(ScenarioError):
        assert Run(scenario={"garbage": True}).parsed_scenario is None
