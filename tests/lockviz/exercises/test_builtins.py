"""Every built-in exercise on the live lab: its worked solution solves it, its starting point
does not. Real servers, real clients, real faults, judged by the checker's verdict as an
attempt is (lockviz.exercises.goals.judge).

36 runs (18 exercises, twice each), mostly waiting for their schedules' moments, so they play
:data:`AT_ONCE` at a time in each of two processes (the worked solutions in one, the starting
points in another: tests/scheduling.py) as tests/lockviz/lab/test_builtins.py plays the built-ins
(those that restart a server alone, after the others). A run the machine could not keep to its
schedule is inconclusive: it counts neither way, for a learner as here, and is played again
(tests.lockviz.lab.test_engine.retold); three in a row are a failure."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait

import pytest

from lockviz.exercises import answers, goals
from lockviz.exercises.builtin import builtin
from lockviz.lab.recording import RunResult
from tests.lockviz.lab.test_engine import retold, run
from tests.scheduling import played_here

pytestmark = pytest.mark.live

AT_ONCE = 2  # per process: as tests/lockviz/lab/recorded.py, and for the same reason
KIND_OF = {  # what each test plays, by its function's name
    "test_the_worked_solution_solves_it": "solution",
    "test_the_starting_point_does_not": "starting",
}


def play(slug: str, kind: str) -> tuple[RunResult, str]:
    ex = builtin()[slug]
    answer = answers.solution(ex) if kind == "solution" else answers.starting(ex)
    scenario, goal = answers.scenario_for(ex, answer)

    # An exercise's scenario has no expect: retold() plays a run again only when it says it
    # could not keep its story.
    return retold(lambda: run(scenario)[1]), goal


def restarts(slug: str) -> bool:
    ex = builtin()[slug]
    scenario, _ = answers.scenario_for(ex, answers.solution(ex))
    return any(step.do == "restart" for step in scenario.steps)


Played = dict[tuple[str, str], Future[tuple[RunResult, str]]]  # (slug, kind): its run, its goal
_played: Played = {}
_pool = ThreadPoolExecutor(AT_ONCE, thread_name_prefix="exercise")
_alone = ThreadPoolExecutor(1, thread_name_prefix="exercise-alone")


def _after(
    beside: list[Future[tuple[RunResult, str]]], slug: str, kind: str
) -> tuple[RunResult, str]:
    wait(beside)
    return play(slug, kind)


@pytest.fixture
def played(request: pytest.FixtureRequest) -> Played:
    """The runs of every test here that this process runs (under ``-n``, tests/scheduling.py
    makes the worked solutions one unit of work and the starting points another, each played
    in a process of its own), started by the first: each once, those that restart a server
    after the others."""
    every = [
        (str(item.callspec.params["slug"]), KIND_OF[item.originalname])
        for item in played_here(request.node)
        if item.originalname in KIND_OF
    ]
    for key in [k for k in every if k not in _played and not restarts(k[0])]:
        _played[key] = _pool.submit(play, *key)
    for key in [k for k in every if k not in _played]:
        beside = [f for k, f in _played.items() if not restarts(k[0])]
        _played[key] = _alone.submit(_after, beside, *key)
    return _played


def test_there_are_fifteen_or_more_across_every_backend() -> None:
    from lockviz.catalogue import BACKENDS

    assert len(builtin()) >= 15
    assert {ex.setting().backend for ex in builtin().values()} == set(BACKENDS)
    assert {ex.kind for ex in builtin().values()} == {"break", "fix", "predict"}


def judged(played: Played, slug: str, kind: str) -> tuple[goals.Judged, RunResult]:
    """The goal's judgment of one played run (which must have run to its end), and the run."""
    result, goal = played[(slug, kind)].result()
    assert result.error is None
    return goals.judge(result.verdict, goal), result


@pytest.mark.parametrize("slug", list(builtin()))
def test_the_worked_solution_solves_it(slug: str, played: Played) -> None:
    judgment, result = judged(played, slug, "solution")
    assert judgment.met is True, (judgment.why, result.verdict)


@pytest.mark.parametrize("slug", list(builtin()))
def test_the_starting_point_does_not(slug: str, played: Played) -> None:
    judgment, result = judged(played, slug, "starting")
    assert judgment.met is False, (judgment.why, result.verdict)
