"""Each built-in scenario played once per test process, and its run shared by every test that
reads it.

A built-in's run is mostly its schedule, and many of them start a Sentinel set, a ZooKeeper
ensemble or an etcd cluster: tests/lockviz/lab/test_builtins.py plays them all, and the tests
that check one story's order and cause (test_beyond, test_failover, test_storage_kinds,
servers/test_etcd) read the same runs instead of playing them again. A run is played with
:func:`tests.lockviz.lab.test_engine.told` (again only when the machine fell behind and the
run said so), so each test still gets a run that told its story, or a failure.

Under ``pytest -n`` the modules that import this one are one unit of work (tests/scheduling.py):
they run in one process, which plays each run once. :func:`play_all` (test_builtins) starts
every run of its tests that the process runs, :data:`AT_ONCE` at a time, those that restart a
server alone after the others; a test that asks for one run (:func:`told_once`) gets it as
soon as it is played, or starts it. test_builtins' runs that no other module reads are a unit
of their own, played in another process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from lockviz.lab.recording import RunResult
from lockviz.scenarios.library import builtin
from tests.lockviz.lab.test_engine import told

# Runs played side by side in one process (each a few servers and clients, mostly waiting).
# Two: under -n, test_builtins' runs are two units and the exercises' two more
# (tests/scheduling.py), so up to eight play at once on the machine; six did before, as two
# units of three, and a run beside more falls behind and is played again.
AT_ONCE = 2

_lock = threading.Lock()
_played: dict[str, Future[RunResult]] = {}
_pool = ThreadPoolExecutor(AT_ONCE, thread_name_prefix="builtin")
_alone = ThreadPoolExecutor(1, thread_name_prefix="builtin-alone")


def length_ms(slug: str) -> int:
    """How long ``slug``'s schedule runs: its last step's moment."""
    return max(step.at_ms for step in builtin()[slug].steps)


def restarts(slug: str) -> bool:
    """Whether ``slug`` restarts a server: its next step is due as soon as the server is back,
    and a server starting beside other runs on a loaded machine comes back late (pg-restart-frees
    fell behind three times in a row beside the others: 1 fresh clone in 4)."""
    return any(step.do == "restart" for step in builtin()[slug].steps)


def future(slug: str) -> Future[RunResult]:
    """``slug``'s run: played already, under way, or started now (one that restarts a server
    waits for every run under way beside it first)."""
    with _lock:
        found = _played.get(slug)
        if found is None:
            if restarts(slug):
                beside = [f for s, f in _played.items() if not restarts(s)]
                found = _alone.submit(_after, beside, slug)
            else:
                found = _pool.submit(told, builtin()[slug])
            _played[slug] = found
        return found


def _after(beside: list[Future[RunResult]], slug: str) -> RunResult:
    wait(beside)
    return told(builtin()[slug])


def told_once(slug: str) -> RunResult:
    """``slug``'s run, played once in this process (see the module's docstring)."""
    return future(slug).result()


def play_all(slugs: Iterable[str] | None = None) -> dict[str, Future[RunResult]]:
    """The runs of ``slugs`` (every built-in: None), started longest first (no long one left
    alone at the end), those that restart a server after all the others."""
    longest_first = sorted(builtin() if slugs is None else slugs, key=length_ms, reverse=True)
    ordered = [s for s in longest_first if not restarts(s)] + [
        s for s in longest_first if restarts(s)
    ]
    return {slug: future(slug) for slug in ordered}
