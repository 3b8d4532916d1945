"""Habits the code base keeps (issue 8): a long module says at its top why it is long."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
LONG = 300  # lines: past this, a module's docstring says why it is one module


def modules() -> list[Path]:
    found = [
        *ROOT.glob("algorithms/**/*.py"),
        *ROOT.glob("lockviz/**/*.py"),
        *ROOT.glob("bench/*.py"),
    ]
    return sorted(p for p in found if "migrations" not in p.parts)


def test_every_module_past_300_lines_says_why_at_its_top() -> None:
    unexplained = []
    for path in modules():
        text = path.read_text()
        if text.count("\n") <= LONG:
            continue
        docstring = ast.get_docstring(ast.parse(text)) or ""
        if "~300 lines" not in docstring:
            unexplained.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert unexplained == [], "long modules without a reason at their top"
