"""The lab is plain Python under the app: all of it imports without Django, and its child
processes (lockviz/lab/children/) are modules a process can run."""

from __future__ import annotations

from tests.without_django import run_without_django

CODE = """
import importlib, pkgutil, sys
import lockviz.lab
from lockviz.lab import children
for m in pkgutil.walk_packages(lockviz.lab.__path__, "lockviz.lab."):
    importlib.import_module(m.name)
for name in (children.WORKER, children.PROXY, children.STORAGE_SERVICE, children.FORK_SERVER):
    assert callable(importlib.import_module(name).main), name
banned = ("django", "channels", "daphne")
bad = sorted(n for n in sys.modules if n.split(".")[0] in banned)
assert not bad, bad
allowed = ("lockviz.lab", "lockviz.catalogue", "lockviz.scenarios", "lockviz.errors",
           "lockviz.jsontypes", "lockviz.plaintext")
above = sorted(n for n in sys.modules if n.startswith("lockviz.") and not n.startswith(allowed))
assert not above, above
print(len([n for n in sys.modules if n.startswith("lockviz.lab.")]))
"""


def test_the_lab_and_its_child_processes_import_without_django() -> None:
    assert int(run_without_django(CODE)) >= 40  # every module was really imported
