"""Which of pyproject.toml's requirements this Python lacks: one per line, nothing when all are
there (scripts/bootstrap.sh installs only those). ``--extra dev``: the tests' too.

Run by the venv's own Python, so it reads what that venv has installed. The first line says
``-e .`` when lockviz itself is not installed (editable) there.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import tomllib
from pathlib import Path

try:
    from packaging.requirements import Requirement
except ImportError:  # a venv without it still has pip's own copy
    from pip._vendor.packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def missing(extras: list[str]) -> list[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = list(project["dependencies"])
    for extra in extras:
        wanted += project["optional-dependencies"][extra]
    lacking = [] if installed(Requirement(project["name"])) else ["-e ."]
    return lacking + [line for line in wanted if not installed(Requirement(line))]


def installed(requirement: Requirement, extra: str = "") -> bool:
    """Whether ``requirement`` is met here, with what its own extras ask for."""
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": extra}):
        return True  # not for this Python, or not for this extra
    try:
        version = importlib.metadata.version(requirement.name)
    except importlib.metadata.PackageNotFoundError:
        return False
    if not requirement.specifier.contains(version, prereleases=True):
        return False
    needs = importlib.metadata.requires(requirement.name) or []
    return all(
        installed(Requirement(need), extra=wanted)
        for wanted in requirement.extras
        for need in needs
        if "extra" in need  # only what the extra adds (the rest came with the package)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", action="append", default=[])
    for lacking in missing(parser.parse_args().extra):
        print(lacking)
