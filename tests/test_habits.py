"""Habits the code base keeps (issue 8): a long module says at its top why it is long (a test
module from 400 lines: tests repeat more)."""

from __future__ import annotations

import ast
import re
from collections import Counter
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


# Issues 20 and 33: what a module handles is typed (a TypedDict, JsonObject, a model, a
# Protocol), not ``Any``. Counted as ``grep -rhow Any lockviz --include=*.py | wc -l`` counts:
# every whole-word ``Any`` in every line (imports, comments and docstrings too), so an alias or
# a spelling that hides it does not lower the count by itself (the review looks for those).
MOST_ANY = 45
WHOLE_ANY = re.compile(r"(?<![A-Za-z0-9_])Any(?![A-Za-z0-9_])")


def any_counts() -> Counter[str]:
    """How many whole-word ``Any`` each module of ``lockviz/`` holds."""
    found: Counter[str] = Counter()
    for path in sorted(ROOT.glob("lockviz/**/*.py")):
        hits = len(WHOLE_ANY.findall(path.read_text()))
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    return found


def test_any_is_counted_as_grep_counts_it() -> None:
    assert WHOLE_ANY.findall("Any, Any] AnyStr typing.Any _Any Any_ Anything Any") == ["Any"] * 4


def test_lockviz_holds_at_most_45_whole_word_any() -> None:
    counts = any_counts()
    total = sum(counts.values())
    most = ", ".join(f"{path} {n}" for path, n in counts.most_common(5))
    assert total <= MOST_ANY, (
        f"lockviz/ holds {total} whole-word `Any` (at most {MOST_ANY}, issue 20); "
        f"most in: {most}. Type what the module handles instead"
    )


def test_socket_tests_read_with_the_patient_communicator() -> None:
    """Channels' communicator gives up on a message after 1 s, which a loaded CI machine passed
    (tests/communicator.py): every socket test reads with the patient one."""
    direct = re.compile(r"from channels\.testing import .*\bWebsocketCommunicator\b")
    found = [
        path.relative_to(ROOT)
        for path in sorted(ROOT.glob("tests/**/*.py"))
        if path.name != "communicator.py" and direct.search(path.read_text())
    ]
    assert found == []
