"""A fault is recorded at the moment it is done, not when the lab has finished doing it."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from lockviz.lab import events
from lockviz.lab.clients import ClientProcess
from lockviz.lab.engine import RunEngine
from lockviz.lab.faults import Faults
from lockviz.lab.labs import LocalLab
from lockviz.scenarios.library import builtin
from lockviz.scenarios.schema import Step
from tests.lockviz.lab.test_recording import STARTED

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


class Started(dict[str, Any]):
    """The lab's servers, started by it (a node's crash needs them local)."""

    local = True


class ServerSlowToReap:
    """A server whose kill is sent at once and reaped late; ``killed`` is set when it is sent."""

    def __init__(self) -> None:
        self.killed = threading.Event()

    def kill(self) -> None:
        self.killed.set()
        time.sleep(REAPED_S)


def test_what_a_servers_kill_frees_is_told_after_its_crash_never_before() -> None:
    """pg-restart-frees on a loaded CI machine: the watcher saw the killed postmaster's advisory
    lock vanish and told "deleted" while the engine was still reaping the kill, so the story
    freed alice's lock before the server crashed (seq 27 before 28)."""
    told: list[events.Event] = []
    engine = RunEngine(builtin()["pg-restart-frees"], LocalLab(), told.append)
    engine.record("lab", "run_started", STARTED)
    server = ServerSlowToReap()
    faults = Faults(
        servers=cast(Any, Started({"pg-1": server})),
        links=cast(Any, None),
        clients={},
        clocks={},
        record=engine.record,
        timers=cast(Any, None),
        alone=engine.alone,
    )

    def watcher() -> None:  # as lockviz.lab.watchers.postgres does when its server dies
        server.killed.wait(10)
        engine.record("pg-1", "deleted", {"key": 1, "holder": "alice"})

    seeing = threading.Thread(target=watcher)
    seeing.start()
    faults.apply(Step.model_validate({"at_ms": 0, "node": "pg-1", "do": "crash"}))
    seeing.join(10)
    assert [e.kind for e in told[1:]] == ["crashed", "deleted"]
    assert told[1].t_ms <= told[2].t_ms
