"""Every built-in scenario on the live lab meets its ``expect``: real servers, real clients,
real faults, the story each one is written to tell.

A built-in's run is mostly its schedule (a pause of 2 s, a lease that must lapse: 160 s of
the 46 runs' 220 s is waiting for the next step's moment), so the runs are played
:data:`AT_ONCE` at a time, each on its own servers, as a lab plays a class's runs side by side
(those that restart a server afterwards, one at a time: :func:`restarts`).
One that the machine could not keep its schedule for says so and is played again
(tests/lockviz/lab/test_engine.py:told); a wrong story is a failure whatever the load."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait

import pytest

from lockviz.lab.engine import RunResult
from lockviz.scenarios.library import builtin
from tests.lockviz.lab.test_engine import told

pytestmark = pytest.mark.live

AT_ONCE = 3  # runs played side by side (each a few servers and clients, mostly waiting)


def length_ms(slug: str) -> int:
    """How long ``slug``'s schedule runs: its last step's moment."""
    return max(step.at_ms for step in builtin()[slug].steps)


def restarts(slug: str) -> bool:
    """Whether ``slug`` restarts a server: its next step is due as soon as the server is back,
    and a server starting beside other runs on a loaded machine comes back late (pg-restart-frees
    fell behind three times in a row beside the others: 1 fresh clone in 4)."""
    return any(step.do == "restart" for step in builtin()[slug].steps)


@pytest.fixture(scope="module")
def played() -> Iterator[dict[str, Future[RunResult]]]:
    """Every built-in's run: those that restart a server one at a time once the others are
    done; the others side by side, longest first (so no long one is left alone at the end)."""
    longest_first = sorted(builtin(), key=length_ms, reverse=True)
    with (
        ThreadPoolExecutor(AT_ONCE, thread_name_prefix="builtin") as pool,
        ThreadPoolExecutor(1, thread_name_prefix="builtin-alone") as alone,
    ):
        beside = {s: pool.submit(told, builtin()[s]) for s in longest_first if not restarts(s)}

        def after_the_others(slug: str) -> RunResult:
            wait(beside.values())
            return told(builtin()[slug])

        yield beside | {s: alone.submit(after_the_others, s) for s in longest_first if restarts(s)}


@pytest.mark.parametrize("slug", list(builtin()))
def test_builtin_scenario_meets_its_expectation(
    slug: str, played: dict[str, Future[RunResult]]
) -> None:
    result = played[slug].result()
    assert result.error is None
    assert result.mismatches == [], result.verdict
    assert result.expect_met is True, result.inconclusive  # not inconclusive: the story was told
