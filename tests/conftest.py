"""Shared fixtures. Live fixtures start real servers through the lab, exactly as runs do."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockviz.lab.servers import LocalLab, ServerSet
from lockviz.scenarios.schema import Scenario, parse

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def lab() -> LocalLab:
    return LocalLab()


@pytest.fixture
def servers(lab: LocalLab) -> Iterator[ServerSet]:
    """A fresh lock node (``redis-1``) and storage node, stopped after the test."""
    with lab.servers(["redis-1", "storage"]) as started:
        yield started


def builtin_json(slug: str) -> dict:
    with open(ROOT / "lockviz" / "scenarios" / "builtin" / f"{slug}.json") as f:
        return json.load(f)


def scenario(**changes: object) -> Scenario:
    """A small valid scenario, with ``changes`` applied on top."""
    data: dict = {
        "format": 1,
        "title": "test",
        "backend": "redis",
        "fencing": True,
        "ttl_ms": 1000,
        "clients": ["alice", "bob"],
        "steps": [{"at_ms": 0, "client": "alice", "do": "acquire"}],
    }
    data.update(changes)
    return parse(data)


def live_processes(names: tuple[str, ...] = ("redis-server", "lockviz.lab.worker")) -> list[int]:
    """Pids of live (not zombie) processes whose command line mentions one of ``names``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("Z", "X") and any(name in cmdline for name in names):
            found.append(int(entry))
    return found
