"""How ``pytest -n`` shares the tests among its workers (a plugin of tests/conftest.py's).

A unit of work is one test, except that the tests of a module that shares module-scoped
fixtures are one unit, run by one worker in file order: they share that fixture instead of each
worker starting its own, and may build on each other (tests/deploy). The modules that read the
built-ins' shared runs (they import tests/lockviz/lab/recorded.py) are one unit too, so that
one process plays each run once; test_builtins' tests of the runs they read go first in it.
test_builtins' other runs (:func:`read_elsewhere`: no other module names them) are a unit of
their own, played in another process meanwhile: one process playing all 64, three at a time,
took 286 s of the suite's wall time on its own (the tests in this file are one process each).

Units start longest first, so that no worker is left, at the end, with one long test while the
others wait idle: a worker takes its next unit in collection order, and this plugin orders the
collection (under ``-n`` only; ``-n 0`` runs in file order) by what a test is known to cost:

    0  tests/deploy: a deployment's stack, then a chain of tests on it (minutes)
    1  a browser, a Hypothesis test (its examples add up)
    2  any other ``live`` test: real servers started and stopped
    3  an ``alone`` test (tests/conftest.py:_the_machine): it first waits for every test that
       starts servers or a browser, then runs while no other such test does. It comes before
       most of the quick ones, which do not wait for it: the other workers run those meanwhile
       (:func:`quick_before_alone`: a few go first, so no other worker holds a live test then).
    4  the rest: well under a second each

A module's tests stay together, and a module that is one unit goes first within its rank (the
module's rank is its costliest test's; an ``alone`` test's unit ranks as ``alone``, so one that
needs a deployment's stack has a module of its own: tests/deploy/test_class_arrives.py)."""

from __future__ import annotations

import functools
import inspect
import os
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
# A fixture's decorator asking for the module scope, as written in a test module or conftest.py.
MODULE_FIXTURE = re.compile(r'^\s*@pytest\.fixture\([^)]*scope="module"', re.MULTILINE)


@functools.cache
def shares_module_fixtures(path: str) -> bool:
    """Whether the test module ``path`` (from the root) or a conftest.py above it declares a
    module-scoped fixture: a server, an app, a deployment's stack that its tests share."""
    module = ROOT / path
    sources = [module, *(d / "conftest.py" for d in module.parents if d.is_relative_to(ROOT))]
    return any(f.is_file() and MODULE_FIXTURE.search(f.read_text()) for f in sources)


# A test module importing the built-ins' runs that one process plays once and shares.
RECORDED = "tests/lockviz/lab/recorded.py"
SHARED_RUNS = "tests.lockviz.lab.recorded"
READS_RECORDED = re.compile(r"^from tests\.lockviz\.lab(\.recorded import| import recorded)", re.M)
PLAYS_ALL = "tests/lockviz/lab/test_builtins.py"  # starts every run: first in the unit


PLAYS_REST = f"{PLAYS_ALL} (the runs no other module reads)"
# A module whose tests of one function share the runs one process plays for them: a unit per
# function (the exercises' worked solutions, their starting points: 18 runs each).
BY_FUNCTION = ("tests/lockviz/exercises/test_builtins.py",)
BUILTINS = ROOT / "lockviz" / "scenarios" / "builtin"  # a built-in's slug is its file's name
SLUG = re.compile(r'"([a-z0-9]+(?:-[a-z0-9]+)+)"')  # a string in a module that may name one
PARAM = re.compile(r"\[([^\]]+)\]$")


@functools.cache
def reads_recorded(path: str) -> bool:
    module = ROOT / path
    return module.is_file() and bool(READS_RECORDED.search(module.read_text()))


@functools.cache
def read_elsewhere() -> frozenset[str]:
    """The built-ins whose runs a module other than test_builtins reads: those it names (a
    slug it builds at run time is not seen, and its run is played again where it is read)."""
    slugs = {path.stem for path in BUILTINS.glob("*.json")}
    named: set[str] = set()
    for module in sorted(ROOT.glob("tests/**/test_*.py")):
        path = str(module.relative_to(ROOT))
        if path != PLAYS_ALL and reads_recorded(path):
            named |= set(SLUG.findall(module.read_text())) & slugs
    return frozenset(named)


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: the shared runs', test_builtins' other runs', its
    function's (:data:`BY_FUNCTION`), its module's path, or itself."""
    path = nodeid.split("::")[0]
    param = PARAM.search(nodeid)
    if path == PLAYS_ALL and param is not None and param.group(1) not in read_elsewhere():
        return PLAYS_REST
    if reads_recorded(path):
        return RECORDED
    if path in BY_FUNCTION:
        return nodeid.split("[")[0]
    return path if shares_module_fixtures(path) else nodeid


def played_here(item: pytest.Item) -> list[pytest.Function]:
    """The tests of ``item``'s module that this process runs with it: under ``-n``, those of
    its unit (a worker is handed a unit whole); else every one collected."""
    path = item.nodeid.split("::")[0]
    same = [
        i
        for i in item.session.items
        if isinstance(i, pytest.Function) and i.nodeid.split("::")[0] == path
    ]
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return same
    unit = unit_of(item.nodeid)
    return [i for i in same if unit_of(i.nodeid) == unit]


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Units as :func:`unit_of` says, handed out in collection order (xdist would otherwise put
    the units with the most tests first, whatever each test costs)."""
    from xdist.scheduler import LoadScopeScheduling

    class Together(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    config.option.loadscopereorder = False
    return Together(config, log)


QUICK_FIRST = 16  # quick units handed out before the alone ones (3 workers hold ~2 each ahead)


def cost_rank(item: pytest.Item) -> int:
    """0 costs most: see the module's docstring."""
    if item.get_closest_marker("alone"):
        return 3
    if item.nodeid.startswith("tests/deploy/"):
        return 0
    hypothesis = getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
    if item.get_closest_marker("browser") or hypothesis:
        return 1
    return 2 if item.get_closest_marker("live") else 4


def longest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` as units, the costliest first; a unit's tests in their order, and among units
    of one rank, those of many tests (a module) before single tests, else in file order."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(unit_of(item.nodeid), []).append(item)
    order = sorted(
        units.values(),
        key=lambda tests: (min(cost_rank(t) for t in tests), len(tests) == 1),
    )  # sorted() is stable: file order within a rank
    for tests in order:  # the module that starts every shared run first (sort is stable)
        tests.sort(key=lambda t: t.nodeid.split("::")[0] != PLAYS_ALL)
    return [item for tests in quick_before_alone(order) for item in tests]


def quick_before_alone(order: list[list[pytest.Item]]) -> list[list[pytest.Item]]:
    """``order`` with :data:`QUICK_FIRST` quick units moved ahead of the ``alone`` ones: each
    worker holds a few units ahead of the one it runs, and a live test held by another worker
    when an ``alone`` test starts would wait for all of it (100 s, seen). So by then the
    others hold quick ones, which do not wait."""
    alone = [u for u in order if min(cost_rank(t) for t in u) == 3]
    quick = [u for u in order if min(cost_rank(t) for t in u) == 4]
    rest = [u for u in order if u not in alone and u not in quick]
    return rest + quick[:QUICK_FIRST] + alone + quick[QUICK_FIRST:]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """What :func:`shares_module_fixtures` reads from the text, checked against what pytest
    resolved: a module-scoped fixture it missed would be started again in each worker. Then,
    in a worker of ``-n`` (each orders the same collection the same way), longest first."""
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        scopes = [d.scope for defs in info.name2fixturedefs.values() for d in defs] if info else []
        path = item.nodeid.split("::")[0]
        assert "module" not in scopes or shares_module_fixtures(path), (
            f"{path} uses a module-scoped fixture that tests/scheduling.py does not see"
        )
        module = getattr(item, "module", None)
        shared = module is not None and any(
            getattr(v, "__name__" if inspect.ismodule(v) else "__module__", "") == SHARED_RUNS
            for v in vars(module).values()
        )
        assert not shared or reads_recorded(path), (
            f"{path} reads the shared runs in a way tests/scheduling.py does not see"
        )
    if "PYTEST_XDIST_WORKER" in os.environ:
        items[:] = longest_first(items)
