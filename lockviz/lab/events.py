"""Every event a run records, each kind with its fields, declared once.

One module past the usual ~300 lines (and past 400), on purpose: it is the one table of every
kind, read whole. About 570 of its lines are the 34 kinds' declarations, one field to a line with
its description, grouped as docs/events.md groups them; the rest, the union and the seams the
lab records through, is a hundred lines. Split by section into a package (tried for issue 33),
a reader looking for a field opened one of six modules instead of searching one, the seams sat
apart from the kinds they list, and the same declaration shapes (``x: T | None = _may("…")``)
counted as nine pairs of repeated code across files instead of one within this file.

Everything that happens (a client's protocol step, a server ending a lease, a fault) is
*recorded* once, where it happens, through a :class:`Record`: the engine gives the event its
``seq`` and its time on the reference clock (the host's CLOCK_MONOTONIC, stamped where the
event happened when ``t_ns`` is given), validates it into its kind's model here, keeps it, and
hands the finished event to the run's :data:`Sink`, which stores and broadcasts it.

Each kind is a frozen pydantic model whose ``kind`` field is a literal; :data:`Event` is their
union, discriminated on ``kind``. What is declared here is all there is: the import check
(:mod:`lockviz.runs.fields`) derives its field checks from these models, ``manage.py events``
writes docs/events.md and static/lockviz/events.schema.json (the JSON Schema the front end's
tests read) from them, and a test fails when either file differs from what they generate.

A model keeps an event's JSON as it was: :func:`as_json` gives back exactly the fields that
were set (a field sent as ``null`` stays ``null``, one never sent stays absent), and numbers
keep their type (``500`` is not turned into ``500.0``). Models forbid fields they do not
declare, so a new field must be declared here before the lab can record it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal, Optional, Protocol, cast, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
)

from lockviz.jsontypes import JsonObject, JsonValue, Number, StrictDict
from lockviz.lab.verdicts import VerdictJson

Key = Annotated[str | int, WithJsonSchema({"type": ["string", "integer"]})]

EventJson = JsonObject  # an event as JSON: what the store keeps, the stream carries, an export has


class StampedJson(StrictDict):
    """A stamped write of a last-write-wins register: who wrote what, stamped when by its own
    clock (ms since the epoch)."""

    writer: str
    value: str
    stamp: int


class BaseEvent(BaseModel):
    """The four fields of every event."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, populate_by_name=True)
    group: ClassVar[str] = ""  # the section of docs/events.md that lists the kind
    recorded_by: ClassVar[str] = ""  # who records it (docs/events.md's "actor" column)

    seq: int = Field(
        ge=1,
        description="1, 2, 3 … in the order the recorder received the events. Unique per run; "
        "a viewer resumes after the last `seq` it has.",
    )
    t_ms: Number = Field(
        description="milliseconds since the run started, on **one reference clock**: the "
        "host's `CLOCK_MONOTONIC`, which every process on the machine shares. It is stamped "
        "where the event happened (in the client process for client events), so a frozen "
        "client's events carry the time it really saw them. Server clock jumps (libfaketime) "
        "never touch it.",
    )
    actor: str = Field(
        description="who did it: a client (`alice`), a server (`redis-1`, `storage`) or `lab` "
        "(the run engine).",
    )
    kind: str = Field(description="what happened (below). All other fields are its details.")


def _is(description: str) -> Any:
    """A field every event of its kind has."""
    return Field(description=description)


def _may(description: str) -> Any:
    """A field only some events of its kind have: absent (or ``null``) otherwise."""
    return Field(default=None, description=description)


# ---- the run ------------------------------------------------------------------------------------


class _Run(BaseEvent):
    group = "Run"
    recorded_by = "`lab`"


class RunStarted(_Run):
    """The servers are up and watched, the clients ready: the schedule starts now."""

    kind: Literal["run_started"]
    title: str = _is("the scenario's title")
    backend: str = _is("the lock service (`none`: no lock service)")
    variant: str | None = _is("the backend's variant")
    fencing: bool = _is("whether the storage checks fencing tokens (the older spelling)")
    storage_kind: str = _may(
        "what the storage checks: `plain`, `fenced`, `fenced_reads`, `sequencer`, `cas`, `lww` "
        "or `crdt`"
    )
    ttl_ms: int = _is("the lease clients ask for")
    clients: list[str] = _is("the clients, in order")
    nodes: list[str] = _is("the lock servers (empty without a lock service)")
    storage: str = _is('the storage node\'s name (`"storage"`)')
    replicas: list[str] | None = _may(
        "a replicated storage's replicas (`lww`, `crdt`): `storage` and `storage-2`"
    )
    servers: dict[str, str] = _is('every server\'s address: `{name: "127.0.0.1:port"}`')
    roles: dict[str, str] | None = _may(
        "a group's servers as they start: each one's part (`primary`, `replica` or `sentinel` "
        "for Redis with Sentinel, `leader`/`follower` for a ZooKeeper ensemble or an etcd "
        "cluster)"
    )
    homes: dict[str, str] | None = _may(
        "a ZooKeeper ensemble's clients: the server each one's session opens on, as the "
        "scenario's story has it (listed first in its connection string)"
    )
    duration_ms: int = _is("the schedule's length")
    lab: str = _is(
        "`embedded`: servers started for this run; `external`: shared servers from "
        "`LOCKVIZ_SERVERS`"
    )


class Step(_Run):
    """The engine dispatched step `index` of the scenario: the validated step itself (its
    fields are the verb's, `lockviz/scenarios/verbs.py`). A checkpoint's `ask` stays in the
    scenario: its answer never travels on the stream."""

    kind: Literal["step"]
    index: int = _is("the step's place in the script, from 0")
    at_ms: int | None = _may("when the script schedules it (older runs lack it)")
    do: str = _is("the verb")
    client: str | None = _may("the client it is done by or to")
    node: str | None = _may("the server it is done to")
    ms: int | None = _may("a pause's, a clock jump's or a delay's size")
    value: str | None = _may("a write's value")
    timeout_ms: int | None = _may("how long an acquire waits")
    ttl_ms: int | None = _may("an extend's new lease")
    nodes: list[str] | None = _may("the servers whose links a link verb changes")
    mode: str | None = _may("a partition's mode: `blackhole` or `reset`")
    jitter_ms: int | None = _may("a delay's jitter")
    rate: float | None = _may("a clock's new rate")
    check_lease: bool | None = _may("a careful write: its client first checks its lease")
    key: str | None = _may("a write's idempotency key")
    say: str | None = _may("its narration")
    late_ms: Number | None = _may(
        "how late it began (executed − scheduled, on the schedule as shifted so far)"
    )
    shift_ms: Number | None = _may("the schedule's whole shift, once it has shifted")


class ScheduleShifted(_Run):
    """The machine fell behind: `what` began `late_ms` after it was due, more than the
    tolerance (50 ms), so everything still pending moves `late_ms` later. Or (`reply: true`)
    a server's reply came `late_ms` after its request with no fault in the way, across a point
    of the story; nothing moves. The first `kept: false` makes the verdict inconclusive
    (docs/reliability.md)."""

    kind: Literal["schedule_shifted"]
    what: str = _is(
        'what was late: a step, a thaw (`"alice\'s thaw"`), a step as its client took it '
        '(`"step 3 (acquire), as bob took it"`), or a step its client ran late '
        '(`"step 3 (acquire), as bob ran it"`: its process waited that long for a core '
        "while it ran it)"
    )
    due_ms: Number = _is("when it was due")
    late_ms: Number = _is("how late it began")
    shift_ms: Number = _is("the schedule's whole shift now")
    kept: bool = _is("whether the story survived the shift")
    index: int | None = _may("the late step's index")
    fixed: str | None = _may(
        "when `kept` is false, what stayed where it was: `lease`, `wait`, `step`, or "
        "`timeout` (the client's own for a reply that never came)"
    )
    fixed_by: str | None = _may("whose lease or wait, or which step")
    fixed_ms: Number | None = _may("when it stayed")
    moved: str | None = _may("what moved across it")
    moved_from_ms: Number | None = _may("where that was due")
    moved_to_ms: Number | None = _may("where it comes now")
    reply: bool | None = _may(
        "a late reply, not a late step: `what` is the call, `due_ms` when it was sent"
    )
    own_ms: Number | None = _may(
        "how much of `late_ms` was the step's own time, not the machine falling behind: a "
        "server booting after a restart, as it does on any machine"
    )


class RunFinished(_Run):
    """The run is over and judged."""

    kind: Literal["run_finished"]
    verdict: VerdictJson = _is(
        "the checker's verdict (`inconclusive` says why the run could not keep its story)"
    )
    expect_met: bool | None = _is(
        "whether the verdict met the scenario's `expect`; null: no `expect`, or an inconclusive "
        "run's, not judged"
    )
    mismatches: list[str] = _is("how the verdict missed `expect`, one sentence each")


class RunFailed(_Run):
    """The lab could not run it, or the watchdog failed it (it overran its time limit, or a
    step never returned): no verdict."""

    kind: Literal["run_failed"]
    error: str = _is("a sentence for the user")


class Ending(_Run):
    """The run ends early and is judged: Finish was pressed, or a free-play session was idle
    too long or reached its limit. What was due later is dropped and pauses end at once."""

    kind: Literal["ending"]
    why: str = _is("why it ends now")


class StepRefused(_Run):
    """A command the client could not take: its queue was full (a frozen client that kept
    being sent work) or it had crashed."""

    recorded_by = "client"
    kind: Literal["step_refused"]
    index: int = _is("the step's index")
    why: str = _is("why the client could not take it")


class RunInterrupted(_Run):
    """Appended after the fact: the app that ran it stopped before it ended; no verdict."""

    kind: Literal["run_interrupted"]
    why: str = _is("what happened to the app")


class RunCancelled(_Run):
    """It waited for the lab with nobody watching, and was dropped before it started."""

    kind: Literal["run_cancelled"]
    why: str = _is("why it was dropped")


# ---- protocol messages (drawn as arrows) --------------------------------------------------------


class _Message(BaseEvent):
    group = "Protocol messages (drawn as arrows)"
    recorded_by = "client, or `storage`"


class Request(_Message):
    """A message to a server. With sequencer storage the storage service asks the lock service
    whether a writer's lock is still current (`op: "check"`), recorded as the storage's own
    request: drawn storage → lock node, between the write and its reply."""

    kind: Literal["request"]
    to: str = _is("the server")
    call: int = _is("the call's id, unique per actor (its reply has the same)")
    op: str = _is(
        "`acquire`, `release`, `extend`, `read`, `write`, each backend's own calls, `check` "
        "for the storage"
    )
    holder: str | None = _may("a check's writer")
    ttl_ms: int | None = _may("the lease asked for (null: no lease)")
    value: str | None = _may("a write's value; a check's random value (Redis, Redlock)")
    token: int | None = _may("a write's token (the writer's latest); a check's grant")
    read: int | None = _may("the version the writer last read, when it read")
    key: Key | None = _may(
        "a write's idempotency key; the lock key (a PostgreSQL advisory lock's is a number)"
    )
    unsafe: bool | None = _may("a release by plain `DEL`, without checking the value")
    wait_ms: int | None = _may("how long the server may queue the request")
    sql: str | None = _may("how a PostgreSQL lock is released")
    path: str | None = _may("a ZooKeeper node")
    mode: str | None = _may("how a ZooKeeper node is created")
    watch: bool | None = _may("the listing leaves a watch (the herd variant)")
    why: str | None = _may("why the client sends it")
    lease: str | None = _may("an etcd lease")
    session: int | None = _may("a check's PostgreSQL backend pid")
    stamp: int | None = _may(
        "a last-write-wins or CRDT write's stamp: its writer's wall clock, ms since the epoch"
    )
    holds: StampedJson | None = _may("a last-write-wins merge: the write sent to the replica")
    values: list[str] | None = _may("a CRDT merge: the set sent to the replica")
    numreplicas: int | None = _may("`WAIT`: how many replicas must acknowledge the writes so far")


class Reply(_Message):
    """A server's answer. A write's says what the storage did: a rejected write has
    `accepted: false` and a `reason` (`"33 < 34"` fenced, `"read v0, now v1"`
    compare-and-set, or the lock service's answer); a repeated idempotency key's is the first
    write's result with `duplicate: true`. A fenced read (`fenced_reads`) refused has
    `accepted: false` too. A replicated storage's replica says what it holds: a last-write-wins
    one the write it keeps and the one it dropped (`holds`, `dropped`), a CRDT its set
    (`values`)."""

    kind: Literal["reply"]
    frm: str = Field(alias="from", description="the server")
    call: int = _is("the request's id")
    op: str = _is("the request's op")
    ok: bool = _is("whether the server did what was asked (a check: it answered)")
    path: str | None = _may("the ZooKeeper node created")
    value: str | None = _may("a read's value (null before any write); an etcd lock's key")
    accepted: bool | None = _may("whether the storage applied the write")
    token: int | None = _may("the fencing token granted, or the writer's")
    highest: int | None = _may("the highest token the storage had seen before this write")
    found: int | None = _may("the version the write found")
    version: int | None = _may("the version after it (a read: the version read)")
    duplicate: bool | None = _may("a repeated idempotency key: nothing was applied")
    current: bool | None = _may("a check: whether the writer's lock is still current")
    error: str | None = _may("the call failed: no answer, or the client library's error")
    reason: str | None = _may("why the server said no")
    why: str | None = _may("a check: why the lock is not current")
    children: list[str] | None = _may("a ZooKeeper listing")
    exists: bool | None = _may("whether a watched ZooKeeper node exists")
    lease: str | None = _may("the etcd lease granted")
    ttl_ms: int | None = _may("the lease's time to live")
    kept: bool | None = _may(
        "last-write-wins: whether the replica now holds the incoming write (false: it kept a "
        "write with a higher stamp, and dropped the incoming one although it said OK)"
    )
    holds: StampedJson | None = _may("last-write-wins: the write the replica holds after this")
    dropped: StampedJson | None = _may("last-write-wins: the write the replica dropped")
    values: list[str] | None = _may("a CRDT: the set's elements after this")
    added: list[str] | None = _may("a CRDT merge: the elements new to this replica")
    primary: str | None = _may("a Sentinel's answer: the node it names as the primary")
    acked: int | None = _may("`WAIT`: how many replicas acknowledged")


# ---- what a client believes ---------------------------------------------------------------------


class _Belief(BaseEvent):
    group = "What a client believes"
    recorded_by = "client"


class Granted(_Belief):
    """The client now believes it holds the lock."""

    kind: Literal["granted"]
    node: str = _is("the server that granted it (Redlock: those that said yes, joined by `,`)")
    nodes: list[str] | None = _may("Redlock: the servers that said yes")
    token: int | None = _is("the fencing token (Redlock: null, it has none)")
    ttl_ms: int | None = _is("the lease (PostgreSQL: null, no lease)")
    validity_ms: int | None = _may("Redlock: how long the lock is valid")
    value: str = _is("what identifies the grant: the random value, the node, the key")


class AcquireFailed(_Belief):
    """The client gave up acquiring."""

    kind: Literal["acquire_failed"]
    reason: str = _is('why (e.g. `"timed out after 5000 ms"`)')
    waited_ms: int | None = _may("how long it waited")


class Releasing(_Belief):
    """The client's code is done with the lock and sends its release: from here on it no
    longer acts as the holder (the server's answer may arrive after the next holder's grant)."""

    kind: Literal["releasing"]


class Released(_Belief):
    """The release's outcome."""

    kind: Literal["released"]
    ok: bool = _is("false: the server said the lock was no longer ours")
    nodes: list[str] | None = _may("Redlock: the servers that released it")
    reason: str | None = _may("why not")


class Extended(_Belief):
    """An extend's outcome."""

    kind: Literal["extended"]
    ok: bool = _is("whether the lease was prolonged")
    ttl_ms: int | None = _is("the new lease")
    validity_ms: int | None = _may("Redlock: the new validity")
    nodes: list[str] | None = _may("Redlock: the servers that said yes")


class Lost(_Belief):
    """The client learned its lock is gone (an extend failed, a session was lost, its own clock
    says the lease ran out)."""

    kind: Literal["lost"]
    reason: str = _is("how it learned")


class Session(_Belief):
    """ZooKeeper's view of the client's session changed, as its client library tells it:
    `SUSPENDED` (the connection dropped: the session may or may not live), `RECONNECTED` (the
    same session, on a server again), `LOST` (the session expired: its ephemeral nodes are
    gone), `CONNECTED` (a new session, after a lost one)."""

    kind: Literal["session"]
    state: str = _is("`SUSPENDED`, `RECONNECTED`, `LOST` or `CONNECTED`")
    server: str | None = _may("the server it is connected to again")
    keeps: bool | None = _may("SUSPENDED: whether the client keeps acting as the lock's holder")


class Woken(_Belief):
    """A waiting client was woken to re-check (the checker counts them: `wakeups`)."""

    kind: Literal["woken"]
    by: str = _is("what woke it")


class RenewalStarted(_Belief):
    """The watchdog thread will extend the lease every ttl/3."""

    kind: Literal["renewal_started"]
    interval_ms: int = _is("how often")


class Note(_Belief):
    """Something the client noticed (a failed Redlock attempt, a command it ignored)."""

    kind: Literal["note"]
    text: str = _is("what")


# ---- faults (reported by the engine, which performs them) ---------------------------------------


class _Fault(BaseEvent):
    group = "Faults (reported by the engine, which performs them)"
    recorded_by = "client"


class Paused(_Fault):
    """SIGSTOP sent: the whole process, timers and heartbeats included, is frozen."""

    kind: Literal["paused"]
    ms: int = _is("for how long")


class Resumed(_Fault):
    """SIGCONT sent."""

    kind: Literal["resumed"]
    why: str | None = _may("when it came early because the run was ending")
    late_ms: Number | None = _may("when it came on its timer: how late")


class Crashed(_Fault):
    """SIGKILL sent to a client, or kill -9 to a server."""

    recorded_by = "client or node"
    kind: Literal["crashed"]


class ClockJumped(_Fault):
    """A client's own wall clock, or a server's, moved."""

    recorded_by = "client or node"
    kind: Literal["clock_jumped"]
    ms: int = _is("this jump")
    offset_ms: Number = _is("the clock's total offset now")


class ClockRate(_Fault):
    """The client's own clock now runs at another speed."""

    kind: Literal["clock_rate"]
    rate: float = _is("the speed (0.25 = four times slow)")


class Link(_Fault):
    """The proxy on the link between this client and that server changed, or a server was cut
    off from its peers (a ZooKeeper ensemble)."""

    recorded_by = "client, or node"
    kind: Literal["link"]
    node: str | None = _may("the server at the link's other end")
    peers: list[str] | None = _may("a server's peers, when it is the one cut off")
    mode: str = _is("`pass`, `blackhole`, `reset` or `delay`")
    ms: Number | None = _may("a delay")
    jitter_ms: Number | None = _may("a delay's jitter")


# ---- what the servers did (observed by the lab's watchers) --------------------------------------


class _Server(BaseEvent):
    group = "What the servers did (observed by the lab's watchers)"
    recorded_by = "node"


class Expired(_Server):
    """The server expired the holder's lease (or session)."""

    kind: Literal["expired"]
    key: Key = _is("the lock's key, or ZooKeeper node")
    holder: str | None = _is("whose it was")
    holding: bool | None = _may("ZooKeeper: whether it was the node holding the lock")


class Deleted(_Server):
    """The key was deleted (a release, or someone else's plain `DEL`)."""

    kind: Literal["deleted"]
    key: Key = _is("the lock's key (a PostgreSQL advisory lock's is a number), or node")
    holder: str | None = _is("whose it was")
    holding: bool | None = _may("ZooKeeper: whether it was the node holding the lock")


class Restarted(_Server):
    """The server was started again."""

    kind: Literal["restarted"]
    persistence: str | None = _is("`none`: it comes back empty; `fsync`: it replays its log")
    boot_ms: Number | None = _may("how long it took to answer again (older runs lack it)")
    starved_ms: Number | None = _may(
        "how much of that its process waited for a core: the busy machine's part of the boot"
    )


class Role(_Server):
    """A server of a group took a new part: a replica promoted to primary by Sentinel (or an
    old primary turned into a replica), a new etcd leader, or a ZooKeeper leader elected. The
    parts as the run starts are in `run_started`'s `roles`."""

    kind: Literal["role"]
    role: str = _is("`primary`, `replica`, `leader` or `follower`")
    previous: str | None = _may("the server that had the part before")
    of: str | None = _may("a replica's primary")
    by: str | None = _may("the Sentinel that made the change (elected by the others' votes)")
    term: int | None = _may("the Sentinel configuration epoch, or the Raft term, of the change")
    leases: dict[str, int] | None = _may(
        "etcd: each lock holder's lease as the new leader has it (ms to live)"
    )


class Voted(_Server):
    """A Sentinel voted for the Sentinel that should lead a failover (one vote per epoch; the
    first to ask gets it; a majority of the Sentinels elects)."""

    recorded_by = "Sentinel"
    kind: Literal["voted"]
    leader: str = _is("the Sentinel it voted for (itself, when it asks for votes)")
    term: int = _is("the epoch of the vote")


class Suspected(_Server):
    """A Sentinel thinks a node is down: no valid answer for `down-after-milliseconds`
    (`objective: false`, SDOWN), or a quorum of Sentinels agree (`objective: true`, ODOWN: a
    failover may start); `cleared: true` when it thinks so no more."""

    recorded_by = "Sentinel"
    kind: Literal["suspected"]
    node: str = _is("the node it thinks is down")
    objective: bool = _is("whether a quorum agrees (ODOWN)")
    cleared: bool | None = _may("it answers again")
    quorum: str | None = _may("how many Sentinels agree, of how many are needed (`2/2`)")


class Replicated(_Server):
    """A replica received a lock key from its primary (asynchronous replication: after the
    primary answered the client)."""

    kind: Literal["replicated"]
    key: Key = _is("the lock's key")
    holder: str | None = _is("whose it is")


# ---- the union, and the seams the lab records through -------------------------------------------

Event = Annotated[
    RunStarted | Step | ScheduleShifted | RunFinished | RunFailed | Ending | StepRefused
    | RunInterrupted | RunCancelled | Request | Reply | Granted | AcquireFailed | Releasing
    | Released | Extended | Lost | Session | Woken | RenewalStarted | Note | Paused | Resumed
    | Crashed | ClockJumped | ClockRate | Link | Expired | Deleted | Restarted | Role | Voted
    | Suspected | Replicated,
    Field(discriminator="kind"),
]  # fmt: skip
EVENT: TypeAdapter[Event] = TypeAdapter(Event)


def _kinds() -> dict[str, type[BaseEvent]]:
    union = get_args(get_args(Event)[0])
    return {get_args(model.model_fields["kind"].annotation)[0]: model for model in union}


KINDS: dict[str, type[BaseEvent]] = _kinds()  # every kind's model, by its name


def parse(data: Mapping[str, object]) -> Event:
    """The event's model, or :class:`pydantic.ValidationError` naming what does not fit."""
    return EVENT.validate_python(data)


def _lenient(model: type[BaseEvent], extra: str = "forbid") -> type[BaseEvent]:
    """``model`` with every field but ``kind`` optional: absent is ``None`` (``actor``: ``"?"``),
    and a field that is there is checked as strictly as ever (``extra``: what an undeclared
    field does)."""
    fields = {name: info for name, info in model.model_fields.items() if name != "kind"}
    namespace: dict[str, object] = {
        "__module__": __name__,
        "model_config": {**model.model_config, "extra": extra},
        "__annotations__": {
            name: Optional[info.annotation]  # noqa: UP045 (a type made at run time)
            for name, info in fields.items()
        },
        **{
            name: Field(default="?" if name == "actor" else None, alias=info.alias)
            for name, info in fields.items()
        },
    }
    return cast("type[BaseEvent]", type(model.__name__, (model,), namespace))


_SAID: dict[str, type[BaseEvent]] = {kind: _lenient(model) for kind, model in KINDS.items()}
_OTHER = _lenient(BaseEvent, extra="ignore")  # a kind not declared here: only the four fields


def lenient(data: Mapping[str, object]) -> BaseEvent | None:
    """The event as the narrator reads it: its kind's model (a kind not declared here: a
    :class:`BaseEvent`), or None when it does not fit.

    The narrator says any JSON (an imported run's, a test's ``{"kind": "crashed", "actor":
    "redis-2"}`` without ``seq`` or ``t_ms``), so here every field but ``kind`` may be missing:
    a missing one reads as ``None`` (the actor as ``"?"``), whatever its declared type, and
    ``model_fields_set`` tells it from one sent as ``null``. A field that is there must have
    its declared type; a field its kind does not declare, or a ``kind`` that is not a string,
    gives None: the narrator then says the event plainly."""
    kind = data.get("kind")
    if not isinstance(kind, str):
        return None
    try:
        return _SAID.get(kind, _OTHER).model_validate(data)
    except ValidationError:
        return None


def as_json(event: BaseEvent) -> EventJson:
    """The event as JSON has it: exactly the fields that were set, ``from`` by its name."""
    data: EventJson = event.model_dump(mode="json", by_alias=True, exclude_unset=True)
    return data


def json_schema() -> dict[str, JsonValue]:
    """The JSON Schema of every event (static/lockviz/events.schema.json)."""
    schema: dict[str, JsonValue] = EVENT.json_schema(by_alias=True)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "lockviz event",
        "description": "One event of a run, as the store keeps it and the stream carries it "
        "(generated from lockviz/lab/events.py by `manage.py events --schema`).",
        **schema,
    }


Sink = Callable[[Event], None]  # where finished events go (the store and the viewers)


class Record(Protocol):
    def __call__(
        self, actor: str, kind: str, details: Mapping[str, object], t_ns: int | None = None
    ) -> None:
        """Record that ``actor`` did or saw ``kind`` (stamped now, or at ``t_ns``)."""
