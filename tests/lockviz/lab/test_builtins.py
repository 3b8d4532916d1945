"""Every built-in scenario on the live lab meets its ``expect``: real servers, real clients,
real faults, the story each one is written to tell.

A built-in's run is mostly its schedule (a pause of 2 s, a lease that must lapse: most of
a run is waiting for its next step's moment), so the runs are played two at a
time, each on its own servers, as a lab plays a class's runs side by side (those that restart a
server afterwards, one at a time): tests/lockviz/lab/recorded.py, which shares each run with the
tests that check its story's order and cause. Under ``-n`` the runs those tests read and the
others are played in two processes (tests/scheduling.py).
One that the machine could not keep its schedule for says so and is played again
(tests/lockviz/lab/test_engine.py:told); a wrong story is a failure whatever the load."""

from __future__ import annotations

import pytest

from lockviz.scenarios.library import builtin
from tests.lockviz.lab import recorded
from tests.scheduling import played_here

pytestmark = pytest.mark.live


@pytest.fixture
def played(request: pytest.FixtureRequest) -> None:
    """The runs of every test here that this process runs (tests/scheduling.py:played_here),
    started by the first (tests/lockviz/lab/recorded.py: each played once in this process, and
    read by the tests of one story each too)."""
    recorded.play_all([str(item.callspec.params["slug"]) for item in played_here(request.node)])


@pytest.mark.parametrize("slug", list(builtin()))
def test_builtin_scenario_meets_its_expectation(slug: str, played: None) -> None:
    result = recorded.told_once(slug)
    assert result.error is None
    assert result.mismatches == [], result.verdict
    assert result.expect_met is True, result.inconclusive  # not inconclusive: the story was told
