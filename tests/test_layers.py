"""The tiers are in the tree (issue 33): the root of lockviz/ holds Django's own modules and the
shared vocabulary only, every package has a place in the layers `make lint` holds
(`.importlinter`, run by lint-imports), and docs/architecture.md's layer table names it."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
LOCKVIZ = ROOT / "lockviz"
# Django's own (what it and Daphne load by name) and the vocabulary every layer reads; the
# tables (lockviz/models/) and the catalogue (lockviz/catalogue/) are packages of their own.
DJANGOS = {"__init__", "admin", "apps", "asgi", "routing", "settings", "urls"}
VOCABULARY = {"errors", "jsontext", "jsontypes", "plaintext"}


def packages() -> set[str]:
    """Every package directly under lockviz/, but the migrations (Django's, not a layer)."""
    return {
        p.name for p in LOCKVIZ.iterdir() if (p / "__init__.py").exists() and p.name != "migrations"
    }


def layered() -> set[str]:
    """Every module a layer of the layers contract names, without ``lockviz.``."""
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    text = config["importlinter:contract:layers"]["layers"]
    return {name.removeprefix("lockviz.") for name in re.findall(r"lockviz\.[\w.]+", text)}


def test_the_root_of_lockviz_holds_djangos_modules_and_the_vocabulary_only() -> None:
    root = {p.stem for p in LOCKVIZ.glob("*.py")}
    assert root == DJANGOS | VOCABULARY
    assert len(root) <= 13


def test_every_package_and_root_module_has_its_layer() -> None:
    names = layered()
    placed = {name.split(".")[0] for name in names}
    assert packages() - placed == set(), "a package no layer names: give it one in .importlinter"
    assert (DJANGOS | VOCABULARY) - {"__init__"} - names == set()


def test_the_architecture_docs_table_names_every_package() -> None:
    docs = (ROOT / "docs" / "architecture.md").read_text()
    table = docs[docs.index("| layer | folder |") : docs.index("### The models to copy")]
    named = set(re.findall(r"`(?:lockviz/)?(\w+)/", table))
    assert packages() - named == set()
