"""What the docs and the docstrings point at exists: a module path (``lockviz.lab.forkserver``,
``algorithms.clock.ClockFile``) imports and has that name, a file path (``lockviz/lab/procs.py``,
``lab/engine.py:inject``) is a file of the checkout that defines that name. Moves leave such
references behind, and nothing else notices."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import ROOT

DOTTED = re.compile(r"(?<![\w./-])((?:lockviz|algorithms|bench)(?:\.[A-Za-z_]\w*)+)")
FILE = re.compile(
    r"(?<![\w./<>-])((?:[\w-]+/)+[\w.-]+\.(?:py|md|js|html|css|sh|json|toml))\b(?::(\w+))?"
)
# Short paths in the docs are written from where the reader already is.
BASES = [
    "",
    "lockviz/",
    "lockviz/lab/",
    "tests/",
    "tests/lockviz/lab/",
    "templates/",
    "static/",
    "static/lockviz/",
]
NOT_MODULES = {
    "lockviz.sqlite3": "the default database file",
    "lockviz.pooler": "the PostgreSQL setting where the lab publishes PgBouncer's address",
}


def texts() -> Iterator[tuple[Path, str]]:
    """Every doc, and every docstring and comment of the Python code."""
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        yield doc, doc.read_text()
    for folder in ("algorithms", "lockviz", "bench", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            source = path.read_text()
            for node in ast.walk(ast.parse(source)):
                if isinstance(
                    node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
                ) and (docstring := ast.get_docstring(node, clean=False)):
                    yield path, docstring
            for token in tokenize.generate_tokens(io.StringIO(source).readline):
                if token.type == tokenize.COMMENT:
                    yield path, token.string


def module_path_exists(name: str) -> bool:
    """A module, or a name in one: each part a submodule while there is one, then attributes
    (a dataclass's fields count, though only those with defaults are class attributes)."""
    first, *rest = name.split(".")
    found: object = importlib.import_module(first)
    prefix = first
    for part in rest:
        prefix += f".{part}"
        if hasattr(found, "__path__") and importlib.util.find_spec(prefix) is not None:
            found = importlib.import_module(prefix)
        elif hasattr(found, part) or part in getattr(found, "__dataclass_fields__", {}):
            found = getattr(found, part, None)
        else:
            return False
    return True


def file_path_exists(path: str, name: str | None) -> bool:
    for base in BASES:
        found = ROOT / base / path
        if found.is_file():
            definition = rf"^\s*(?:async def|def|class)\s+{name}\b|^\s*{name}\s*[:=]"
            return (
                not name
                or found.suffix != ".py"
                or bool(re.search(definition, found.read_text(), re.M))
            )
    return False


def test_every_module_and_file_the_docs_name_exists() -> None:
    stale = set()
    for where, text in texts():
        for match in DOTTED.finditer(text):
            name = match[1].rstrip(".")
            if name not in NOT_MODULES and not module_path_exists(name):
                stale.add(f"{where.relative_to(ROOT)}: {name}")
        for match in FILE.finditer(text):
            placeholder = "<" in match[1] or match[1].startswith("path/to/")
            if not placeholder and not file_path_exists(match[1], match[2]):
                stale.add(f"{where.relative_to(ROOT)}: {match[0]}")
    assert sorted(stale) == []
