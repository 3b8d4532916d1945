"""Habits the code base keeps (issue 8): a long module says at its top why it is long (a test
module from 400 lines: tests repeat more)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
LONG = 300  # lines: past this, a module's docstring says why it is one module
LONG_TEST = 400


def modules() -> list[tuple[Path, int]]:
    """Every module, with how long it may be before it says why."""
    found = [
        *ROOT.glob("algorithms/**/*.py"),
        *ROOT.glob("lockviz/**/*.py"),
        *ROOT.glob("bench/*.py"),
        *ROOT.glob("scripts/*.py"),
    ]
    tests = sorted(ROOT.glob("tests/**/*.py"))
    return [(p, LONG) for p in sorted(found) if "migrations" not in p.parts] + [
        (p, LONG_TEST) for p in tests
    ]


def test_every_module_past_300_lines_says_why_at_its_top() -> None:
    unexplained = []
    for path, most in modules():
        text = path.read_text()
        if text.count("\n") <= most:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if "~300 lines" not in docstring:
            unexplained.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert unexplained == [], "long modules without a reason at their top"
