"""The run's own events, recorded by the lab: its start, each step, a shift of the schedule,
its end."""

from __future__ import annotations

from typing import Literal

from lockviz.jsontypes import Number
from lockviz.lab.events.base import BaseEvent, is_, may
from lockviz.lab.verdicts import VerdictJson


class _Run(BaseEvent):
    group = "Run"
    recorded_by = "`lab`"


class RunStarted(_Run):
    """The servers are up and watched, the clients ready: the schedule starts now."""

    kind: Literal["run_started"]
    title: str = is_("the scenario's title")
    backend: str = is_("the lock service (`none`: no lock service)")
    variant: str | None = is_("the backend's variant")
    fencing: bool = is_("whether the storage checks fencing tokens (the older spelling)")
    storage_kind: str = may(
        "what the storage checks: `plain`, `fenced`, `fenced_reads`, `sequencer`, `cas`, `lww` "
        "or `crdt`"
    )
    ttl_ms: int = is_("the lease clients ask for")
    clients: list[str] = is_("the clients, in order")
    nodes: list[str] = is_("the lock servers (empty without a lock service)")
    storage: str = is_('the storage node\'s name (`"storage"`)')
    replicas: list[str] | None = may(
        "a replicated storage's replicas (`lww`, `crdt`): `storage` and `storage-2`"
    )
    servers: dict[str, str] = is_('every server\'s address: `{name: "127.0.0.1:port"}`')
    roles: dict[str, str] | None = may(
        "a group's servers as they start: each one's part (`primary`, `replica` or `sentinel` "
        "for Redis with Sentinel, `leader`/`follower` for a ZooKeeper ensemble or an etcd "
        "cluster)"
    )
    homes: dict[str, str] | None = may(
        "a ZooKeeper ensemble's clients: the server each one's session opens on, as the "
        "scenario's story has it (listed first in its connection string)"
    )
    duration_ms: int = is_("the schedule's length")
    lab: str = is_(
        "`embedded`: servers started for this run; `external`: shared servers from "
        "`LOCKVIZ_SERVERS`"
    )


class Step(_Run):
    """The engine dispatched step `index` of the scenario: the validated step itself (its
    fields are the verb's, `lockviz/scenarios/verbs.py`). A checkpoint's `ask` stays in the
    scenario: its answer never travels on the stream."""

    kind: Literal["step"]
    index: int = is_("the step's place in the script, from 0")
    at_ms: int | None = may("when the script schedules it (older runs lack it)")
    do: str = is_("the verb")
    client: str | None = may("the client it is done by or to")
    node: str | None = may("the server it is done to")
    ms: int | None = may("a pause's, a clock jump's or a delay's size")
    value: str | None = may("a write's value")
    timeout_ms: int | None = may("how long an acquire waits")
    ttl_ms: int | None = may("an extend's new lease")
    nodes: list[str] | None = may("the servers whose links a link verb changes")
    mode: str | None = may("a partition's mode: `blackhole` or `reset`")
    jitter_ms: int | None = may("a delay's jitter")
    rate: float | None = may("a clock's new rate")
    check_lease: bool | None = may("a careful write: its client first checks its lease")
    key: str | None = may("a write's idempotency key")
    say: str | None = may("its narration")
    late_ms: Number | None = may(
        "how late it began (executed − scheduled, on the schedule as shifted so far)"
    )
    shift_ms: Number | None = may("the schedule's whole shift, once it has shifted")


class ScheduleShifted(_Run):
    """The machine fell behind: `what` began `late_ms` after it was due, more than the
    tolerance (50 ms), so everything still pending moves `late_ms` later. Or (`reply: true`)
    a server's reply came `late_ms` after its request with no fault in the way, across a point
    of the story; nothing moves. The first `kept: false` makes the verdict inconclusive
    (docs/reliability.md)."""

    kind: Literal["schedule_shifted"]
    what: str = is_(
        'what was late: a step, a thaw (`"alice\'s thaw"`), a step as its client took it '
        '(`"step 3 (acquire), as bob took it"`), or a step its client ran late '
        '(`"step 3 (acquire), as bob ran it"`: its process waited that long for a core '
        "while it ran it)"
    )
    due_ms: Number = is_("when it was due")
    late_ms: Number = is_("how late it began")
    shift_ms: Number = is_("the schedule's whole shift now")
    kept: bool = is_("whether the story survived the shift")
    index: int | None = may("the late step's index")
    fixed: str | None = may(
        "when `kept` is false, what stayed where it was: `lease`, `wait`, `step`, or "
        "`timeout` (the client's own for a reply that never came)"
    )
    fixed_by: str | None = may("whose lease or wait, or which step")
    fixed_ms: Number | None = may("when it stayed")
    moved: str | None = may("what moved across it")
    moved_from_ms: Number | None = may("where that was due")
    moved_to_ms: Number | None = may("where it comes now")
    reply: bool | None = may(
        "a late reply, not a late step: `what` is the call, `due_ms` when it was sent"
    )
    own_ms: Number | None = may(
        "how much of `late_ms` was the step's own time, not the machine falling behind: a "
        "server booting after a restart, as it does on any machine"
    )


class RunFinished(_Run):
    """The run is over and judged."""

    kind: Literal["run_finished"]
    verdict: VerdictJson = is_(
        "the checker's verdict (`inconclusive` says why the run could not keep its story)"
    )
    expect_met: bool | None = is_(
        "whether the verdict met the scenario's `expect`; null: no `expect`, or an inconclusive "
        "run's, not judged"
    )
    mismatches: list[str] = is_("how the verdict missed `expect`, one sentence each")


class RunFailed(_Run):
    """The lab could not run it, or the watchdog failed it (it overran its time limit, or a
    step never returned): no verdict."""

    kind: Literal["run_failed"]
    error: str = is_("a sentence for the user")


class Ending(_Run):
    """The run ends early and is judged: Finish was pressed, or a free-play session was idle
    too long or reached its limit. What was due later is dropped and pauses end at once."""

    kind: Literal["ending"]
    why: str = is_("why it ends now")


class StepRefused(_Run):
    """A command the client could not take: its queue was full (a frozen client that kept
    being sent work) or it had crashed."""

    recorded_by = "client"
    kind: Literal["step_refused"]
    index: int = is_("the step's index")
    why: str = is_("why the client could not take it")


class RunInterrupted(_Run):
    """Appended after the fact: the app that ran it stopped before it ended; no verdict."""

    kind: Literal["run_interrupted"]
    why: str = is_("what happened to the app")


class RunCancelled(_Run):
    """It waited for the lab with nobody watching, and was dropped before it started."""

    kind: Literal["run_cancelled"]
    why: str = is_("why it was dropped")
