"""Habits the code base keeps (issue 8): a long module says at its top why it is long (a test
module from 400 lines: tests repeat more), in Python and in the front end's JavaScript; and the
front end writes each of its facts once (issue 33)."""

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


# The front end (issue 33): the same limits, for its modules and their tests. A module says why
# in the comment it opens with, as a Python module does in its docstring.
def front_end_modules() -> list[tuple[Path, int]]:
    """Every JavaScript module of the front end and of its tests, with how long it may be."""
    found = sorted(ROOT.glob("static/**/*.js"))
    tests = sorted([*ROOT.glob("tests/js/**/*.mjs"), *ROOT.glob("tests/browser/**/*.js")])
    return [(p, LONG) for p in found] + [(p, LONG_TEST) for p in tests]


def opening_comment(text: str) -> str:
    """The comment a JavaScript module opens with: its first lines of ``//`` or ``/* … */``."""
    lines = []
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if inside or stripped.startswith(("//", "/*")):
            lines.append(stripped)
            inside = (inside or stripped.startswith("/*")) and "*/" not in stripped
        elif stripped:
            break
    return "\n".join(lines)


def test_opening_comment_is_the_comment_before_the_code() -> None:
    text = "// one\n//\n/* two\n three */\n\nimport x;\n// not this\n"
    assert opening_comment(text) == "// one\n//\n/* two\nthree */"


def test_every_front_end_module_past_300_lines_says_why_at_its_top() -> None:
    unexplained = []
    for path, most in front_end_modules():
        text = path.read_text()
        if text.count("\n") > most and "~300 lines" not in opening_comment(text):
            unexplained.append(f"{path.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    assert unexplained == [], "long modules without a reason at their top"


# A fact the front end knows, written twice, drifts: the lesson page once drew a run 16,600 ms
# long where the run page drew it 3,300 ms, each from its own sum. The facts every page reads of
# a run (its end, its diagram's duration and its scale) have one owner,
# static/lockviz/run/extent.js, and tests/js/run/extent.test.mjs fails if another module defines
# one of them. Beyond those, what a test can find is a definition written word for word in two
# modules: a function, or a constant given a literal (a number, a string, a list, a set, a
# pattern). Prettier's layout makes such a copy the same text.
TOP_LEVEL_START = re.compile(r"^[^\s/})\]]")
FUNCTION = re.compile(
    r"^(?:export\s+)?(?:async\s+)?function\b"
    r"|^(?:export\s+)?const\s+[\w$]+\s*=\s*(?:async\s+)?(?:\([^)]*\)|[\w$]+)\s*=>"
)
LITERAL_CONSTANT = re.compile(
    r"^(?:export\s+)?const\s+[\w$]+\s*=\s*(?:-?\d|[\"'`\[{/]|new (?:Set|Map)\(|Object\.freeze\()"
)


def top_level_statements(text: str) -> list[str]:
    """A module's statements at its top level, each as one line of text (Prettier starts each
    at the first column and indents what continues it, or closes it there with a bracket)."""
    found: list[list[str]] = []
    for line in text.splitlines():
        if TOP_LEVEL_START.match(line) and not line.startswith("*"):
            found.append([line])
        elif found and (not line or line[0] in " \t})]"):
            found[-1].append(line)
        elif line.startswith(("//", "/*")):
            found.append([])  # a comment ends the statement before it
    return [" ".join(" ".join(lines).split()) for lines in found if lines]


def definitions(text: str) -> list[str]:
    """The functions and literal constants a module defines at its top level."""
    return [s for s in top_level_statements(text) if FUNCTION.match(s) or LITERAL_CONSTANT.match(s)]


def test_definitions_are_a_modules_functions_and_literal_constants() -> None:
    text = (
        'import { x } from "./x.js";\n'
        "const csrf = () => {\n  return 1;\n};\n"
        "export function f(a) {\n  return a;\n}\n"
        'const KINDS = new Set(["a"]);\n'
        "const data = pageData();\n"
        "let started = false;\n"
        "// a comment\n"
        "export class C {}\n"
    )
    assert definitions(text) == [
        "const csrf = () => { return 1; };",
        "export function f(a) { return a; }",
        'const KINDS = new Set(["a"]);',
    ]


def test_no_front_end_definition_is_written_in_two_modules() -> None:
    where: dict[str, list[str]] = {}
    for path in sorted(ROOT.glob("static/**/*.js")):
        for definition in set(definitions(path.read_text())):
            where.setdefault(definition, []).append(str(path.relative_to(ROOT)))
    twice = {d: paths for d, paths in where.items() if len(paths) > 1}
    assert twice == {}, "written in two modules: import it from one instead"


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
