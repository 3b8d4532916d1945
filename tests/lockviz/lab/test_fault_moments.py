"""A fault is recorded at the moment it is done, not when the lab has finished doing it."""

from __future__ import annotations

import time
from typing import Any, cast

from lockviz.lab.clients import ClientProcess
from lockviz.lab.faults import Faults
from lockviz.scenarios.schema import Step

REAPED_S = 0.3


class SlowToReap:
    """A client whose kill is sent at once and reaped late, as on a loaded machine (the kill
    itself is tested on live clients in test_engine)."""

    crashed = False
    killed_ns = 0

    def crash(self) -> None:
        self.killed_ns = time.monotonic_ns()
        time.sleep(REAPED_S)
        self.crashed = True


def test_a_crash_is_stamped_when_the_kill_is_sent_not_when_it_is_reaped() -> None:
    """pg-crash-frees on a loaded CI machine: Alice's session ended with her socket, Bob's poll
    got the lock, and only then was Alice's reaping over and her crash recorded: the checker
    saw two holders and said mutual exclusion was violated."""
    client = SlowToReap()
    recorded: list[tuple[str, str, int | None]] = []

    def record(actor: str, kind: str, details: Any, t_ns: int | None = None) -> None:
        recorded.append((actor, kind, t_ns))

    faults = Faults(
        servers=cast(Any, None),
        links=cast(Any, None),
        clients={"alice": cast(ClientProcess, client)},
        clocks={},
        record=record,
        timers=cast(Any, None),
    )
    faults.apply(Step.model_validate({"at_ms": 0, "client": "alice", "do": "crash"}))
    [(actor, kind, t_ns)] = recorded
    assert (actor, kind) == ("alice", "crashed")
    assert t_ns is not None and t_ns <= client.killed_ns
    assert client.killed_ns - t_ns < REAPED_S * 1e9 / 2  # stamped before the reaping, not after
