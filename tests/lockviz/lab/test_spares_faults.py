"""Faults on servers taken from the warm spares' pool (lockviz.lab.spares) keep each story's
verdict: a pause, a moved clock, a cut mesh, a restart on the same data dir, a failover.

A module of its own because its tests share one pool (a module-scoped fixture makes a module
one unit of work under ``pytest -n``, tests/scheduling.py): test_spares.py's fresh-state tests,
each booting its kind's set three times, are then handed to the workers one by one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.lab.recording import RunResult
from lockviz.lab.servers import module_for
from lockviz.lab.sparekeys import key_for
from lockviz.lab.spares import SparePool
from lockviz.scenarios.library import builtin
from tests.lockviz.lab.test_engine import retold
from tests.lockviz.lab.test_spares import START_S

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def fault_pool() -> Iterator[SparePool]:
    pool = SparePool(per_kind=1, most=1, warm=[], reserve_mb=0).start()
    yield pool
    pool.stop()


def groups_of(slug: str) -> list[list[str]]:
    """``slug``'s servers as a lab starts them: one group per module (a Redis set with its
    Sentinels is one)."""
    groups: dict[object, list[str]] = {}
    for name in builtin()[slug].servers:
        groups.setdefault(module_for(name), []).append(name)
    return list(groups.values())


def told_on_spares(pool: SparePool, slug: str, attempts: int = 3) -> RunResult:
    """As test_engine.told, each attempt on servers all taken from the pool."""
    groups = groups_of(slug)
    for group in groups:  # asked for once: the pool keeps the set warm from now on
        taken = pool.take(group)
        if taken is not None:  # ready already: ours to stop
            taken.close()

    def play() -> RunResult:
        for group in groups:
            assert pool.wait_ready(key_for(group), timeout_s=START_S), group
        before = pool.taken
        result = RunEngine(builtin()[slug], LocalLab(spares=pool)).run()
        assert pool.taken - before == len(groups)  # every server of the run was a spare
        return result

    return retold(play, attempts)


@pytest.mark.parametrize(
    "slug",
    [
        "gc-pause-fenced",  # SIGSTOP of a client
        "redlock-clock-jump",  # a node's clock moved (libfaketime), client links cut
        "zk-ensemble-partition",  # an ensemble member cut off from its peers (the spare's mesh)
        "pg-restart-frees",  # kill -9 of the postmaster and a restart on the same data dir
        "redis-failover",  # a replicated set's own mesh: links between servers cut, a failover
        "etcd-leader-crash",  # a cluster's leader killed
    ],
)
def test_a_fault_on_a_spare_served_run_keeps_its_verdict(fault_pool: SparePool, slug: str) -> None:
    result = told_on_spares(fault_pool, slug)
    assert result.error is None
    assert result.mismatches == [], result.verdict
    assert result.expect_met is True, result.inconclusive
