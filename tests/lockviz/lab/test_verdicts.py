"""The verdict's JSON (lockviz/lab/verdicts.py) and the checker's values (algorithms/verdict.py,
algorithms/writes.py, algorithms/lost_updates.py) name the same fields on the two sides of the
wall that keeps Django out of algorithms/: the checker makes the values, the app checks JSON
from outside against the TypedDicts. A field added to one side only fails here."""

from __future__ import annotations

from dataclasses import fields

import pytest

from algorithms.lost_updates import LostUpdate
from algorithms.verdict import Interval, Overlap, Verdict
from algorithms.writes import Write
from lockviz.lab.verdicts import HolderJson, LostJson, OverlapJson, VerdictJson, WriteJson

PAIRS = [
    (Verdict, VerdictJson),
    (Overlap, OverlapJson),
    (Write, WriteJson),
    (Interval, HolderJson),
    (LostUpdate, LostJson),
]


@pytest.mark.parametrize(("value", "json"), PAIRS, ids=[v.__name__ for v, _ in PAIRS])
def test_each_value_of_the_checker_and_its_json_name_the_same_fields(
    value: type, json: type
) -> None:
    declared = json.__required_keys__ | json.__optional_keys__  # type: ignore[attr-defined]
    assert {f.name for f in fields(value)} == set(declared)
