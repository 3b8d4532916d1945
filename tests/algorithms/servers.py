"""A test module's servers: started by the lab once for the module's tests, stopped after."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from lockviz.lab.labs import LocalLab, ServerSet


def started(*names: str) -> Callable[[], Iterator[ServerSet]]:
    """A module-scoped fixture giving the lab's servers ``names`` (``lab = started("zk-1")``:
    the fixture takes the name it is given)."""

    @pytest.fixture(scope="module")
    def servers() -> Iterator[ServerSet]:
        with LocalLab().servers(list(names)) as running:
            yield running

    return servers
