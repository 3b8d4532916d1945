"""algorithms/ is a plain library: importing all of it must not import Django."""

from __future__ import annotations

from tests.without_django import run_without_django


def test_algorithms_import_without_django() -> None:
    code = (
        "import sys, pkgutil, importlib, algorithms\n"
        "for m in pkgutil.iter_modules(algorithms.__path__):\n"
        "    importlib.import_module('algorithms.' + m.name)\n"
        "banned = ('django', 'channels', 'lockviz')\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in banned)\n"
        "print(len([n for n in sys.modules if n.startswith('algorithms.')]))\n"
        "assert not bad, bad\n"
    )
    assert int(run_without_django(code)) >= 6  # every module was really imported
