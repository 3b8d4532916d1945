"""Fixtures the app's tests share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lockviz.narrator import Narrator


@pytest.fixture
def narrations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many events the narrator has said since the test began (a list of one count). The
    narrator is counted, not replaced: every word is still its own."""
    count = [0]
    said = Narrator.said

    def counted(self: Narrator, e: dict[str, object]) -> object:
        count[0] += 1
        return said(self, e)

    monkeypatch.setattr(Narrator, "said", counted)
    yield count
