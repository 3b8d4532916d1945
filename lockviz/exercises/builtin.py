"""The built-in exercises (``builtin/<slug>.json``), and finding any exercise by reference.

An exercise is referred to as ``<slug>`` (a built-in) or ``saved:<id>`` (a teacher's, in the
library: lockviz.models.SavedExercise, seen by whom :func:`lockviz.library.access.may_see_exercise`
lets see it). The index lists built-ins by kind, then by lock service, in :data:`ORDER`.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lockviz.exercises.definition import Exercise, read

BUILTIN_DIR = Path(__file__).parent / "builtin"
KINDS = {
    "break": "Break it: add faults until the checker finds the damage asked for",
    "fix": "Fix it: change only what you may, until the run is safe and still live",
    "predict": "Predict it: say what the checker will find, before the run",
}


@cache
def builtin() -> dict[str, Exercise]:
    """Every built-in exercise by slug, in the index's order (by kind, then by file name)."""
    found = {
        path.stem: read(path.read_bytes(), f"builtin/{path.name}")
        for path in BUILTIN_DIR.glob("*.json")
    }
    order = list(KINDS)
    return dict(sorted(found.items(), key=lambda item: (order.index(item[1].kind), item[0])))
