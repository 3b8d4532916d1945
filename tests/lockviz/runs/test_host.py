"""A lab host takes runs as its lab's self-test goes on, and stops if the test fails."""

from __future__ import annotations

from concurrent.futures import Future

import pytest
from django.test import override_settings

from lockviz.lab.errors import LabError
from lockviz.runs.host import LabHost


@override_settings(LOCKVIZ_CHANNEL_REDIS="redis://127.0.0.1:1/0")  # never reached here
def test_a_host_whose_self_test_failed_beats_never_and_stops_taking_runs() -> None:
    checked: Future[None] = Future()
    checked.set_exception(LabError("redis-server: this redis-server is broken"))
    host = LabHost(checked)
    host._beating()  # returns at once: nothing beats for a lab that does not work
    with pytest.raises(LabError, match="this redis-server is broken"):
        host.demand()  # what the taking loop asks first, each turn
