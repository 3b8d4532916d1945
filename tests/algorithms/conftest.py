"""What the live tests of the lock clients share: a name of each test's own, so that the tests of
a module, sharing one server, never meet on a key, a lock or an election."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture
def name() -> str:
    """A fresh key, lock or election name (etcd reads it as a path: its keys are below
    ``name + "/"``)."""
    return f"test/{uuid.uuid4().hex[:8]}"
