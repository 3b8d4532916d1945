"""Tests of the lab (lockviz/lab/): its servers, links, clients, faults and the run engine."""

from __future__ import annotations

from lockviz.lab.engine import RunEngine
from lockviz.lab.provision import Provisioned


def lab_of(engine: RunEngine) -> Provisioned:
    """The lab ``engine`` played against (kept after the run, for tests to check it was undone)."""
    assert isinstance(engine.stage, Provisioned), "the run was never provisioned"
    return engine.stage
