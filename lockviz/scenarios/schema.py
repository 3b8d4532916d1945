"""Scenario format 1: the user-facing contract for saved scenarios, imports and replays.

Validation happens here (:func:`parse`, :func:`check_step`) and nowhere else. Every problem is
reported with the field that causes it (``steps[3].ms: must be at most 60000``), never as a
traceback, so the same messages serve the CLI (exit 2), the import form and the WebSocket.

The models here hold each field's type and bounds; the rules across fields (a verb's fields,
known clients and nodes, what the lock service can back) are in :mod:`lockviz.scenarios.rules`.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from lockviz import plaintext
from lockviz.catalogue import BACKENDS, STORAGE_KINDS, Backend
from lockviz.errors import ScenarioError
from lockviz.jsontypes import JsonObject
from lockviz.scenarios import rules
from lockviz.scenarios.rules import MAX_RUN_MS
from lockviz.scenarios.verbs import VERBS, WORDS, Target

MAX_CLIENTS = 8
MAX_STEPS = 500
PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")
STEP_PATH = re.compile(r"^steps\[(\d+)\]")  # how a problem names a step: steps[3].ms: ...
# Every string and list has a bound: a refusal quotes what it refuses, so it must stay short.
# No name or title holds a control character, no text a NUL (lockviz.plaintext).
Name = Annotated[str, Field(max_length=40), AfterValidator(plaintext.printable)]
Choice = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(plaintext.no_nul)]
Title = Annotated[str, Field(min_length=1, max_length=120), AfterValidator(plaintext.printable)]

# The top-level fields that only tell the story or predict it: not what the servers do.
STORY = frozenset({"format", "title", "description", "takeaway", "expect"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Expect(_Strict):
    mutual_exclusion: Literal["held", "violated", "none"] | None = None
    stale_writes_accepted: int | None = Field(default=None, ge=0)
    stale_writes_rejected: int | None = Field(default=None, ge=0)
    data_corrupted: bool | None = None
    acquire_failures: int | None = Field(default=None, ge=0)
    liveness: Literal["ok", "stuck"] | None = None
    stuck_clients: list[Name] | None = Field(default=None, max_length=MAX_CLIENTS)
    wakeups: int | None = Field(default=None, ge=0)
    lost_updates: int | None = Field(default=None, ge=0)

    def as_dict(self) -> dict[str, object]:
        return self.model_dump(exclude_none=True)


class Ask(_Strict):
    """A predict-then-reveal checkpoint: the walkthrough stops before this step's outcome."""

    question: str = Field(min_length=1, max_length=300)
    choices: list[Choice] = Field(min_length=2, max_length=6)
    answer: str = Field(min_length=1, max_length=200)
    explain: str = Field(default="", max_length=1500)


class Step(_Strict):
    at_ms: int = Field(ge=0, le=MAX_RUN_MS)
    do: Name
    client: Name | None = None
    node: Name | None = None
    ms: int | None = Field(default=None, ge=-3_600_000, le=3_600_000)
    value: str | None = Field(default=None, max_length=200)
    timeout_ms: int | None = Field(default=None, ge=0, le=MAX_RUN_MS)
    ttl_ms: int | None = Field(default=None, ge=10, le=60_000)
    nodes: list[Name] | None = Field(default=None, min_length=1, max_length=8)
    mode: Literal["blackhole", "reset"] | None = None
    jitter_ms: int | None = Field(default=None, ge=0, le=10_000)
    rate: float | None = Field(default=None, ge=0.1, le=10)
    check_lease: bool | None = None  # write: a careful client first checks its lease by its clock
    key: str | None = Field(default=None, min_length=1, max_length=64)  # write: idempotency key
    say: str | None = Field(default=None, max_length=1000)
    ask: Ask | None = None

    @property
    def target(self) -> Target:
        """What the step is done by or to: a client, a server, or the network between them."""
        if VERBS[self.do].targets == {Target.LINK}:
            return Target.LINK
        return Target.NODE if self.node is not None else Target.CLIENT

    @property
    def command(self) -> bool:
        """Whether the client's own process runs it (acquire, write...), not the lab."""
        return VERBS[self.do].command

    def to_json(self) -> JsonObject:
        found: JsonObject = self.model_dump(mode="json", exclude_none=True)
        return found


class Scenario(_Strict):
    format: Literal[1]
    title: Title
    description: str = Field(default="", max_length=2000)
    takeaway: str = Field(default="", max_length=300)  # the lesson's one sentence to remember
    backend: Name
    variant: Name | None = None
    fencing: bool = True  # the older spelling: true is "storage": "fenced", false "plain"
    storage: Name | None = None  # what the storage checks (STORAGE_KINDS); parse() fills it
    ttl_ms: int = Field(ge=100, le=60_000)
    clients: list[Name] = Field(min_length=1, max_length=MAX_CLIENTS)
    steps: list[Step] = Field(max_length=MAX_STEPS)  # empty only for a free-play session
    expect: Expect | None = None
    redis_nodes: Literal[3, 5, 7] | None = None  # Redlock only; 5 by default
    zk_nodes: Literal[1, 3] | None = None  # ZooKeeper only; a standalone server by default
    etcd_nodes: Literal[1, 3] | None = None  # etcd only; one member by default
    node_timeout_ms: int | None = Field(default=None, ge=5, le=10_000)  # Redlock: per node
    idle_session_timeout_ms: int | None = Field(default=None, ge=100, le=60_000)  # PostgreSQL
    renew: bool = False  # a watchdog thread extends the lease every ttl/3
    persistence: Literal["none", "fsync"] = "none"  # Redis nodes: appendonly + fsync always

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, backend: str) -> str:
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose from {sorted(BACKENDS)}")
        return backend

    @field_validator("storage")
    @classmethod
    def _known_storage(cls, storage: str | None) -> str | None:
        if storage is not None and storage not in STORAGE_KINDS:
            raise ValueError(f"unknown storage {storage!r}; choose from {list(STORAGE_KINDS)}")
        return storage

    @property
    def lock_service(self) -> Backend:
        return BACKENDS[self.backend]

    @property
    def storage_kind(self) -> str:
        """What the storage checks: the ``storage`` given, else what ``fencing`` means."""
        if self.storage is not None:
            return self.storage
        return "fenced" if self.fencing else "plain"

    @property
    def node_count(self) -> int | None:
        field = self.lock_service.node_count_field
        return getattr(self, field) if field else None

    @property
    def nodes(self) -> list[str]:
        """The lock servers of this scenario's backend (the storage comes on top)."""
        return self.lock_service.nodes(self.node_count)

    @property
    def storages(self) -> list[str]:
        """The storage's servers: ``storage``, and its second replica when it has one."""
        return list(STORAGE_KINDS[self.storage_kind].replicas)

    @property
    def servers(self) -> list[str]:
        """Every server a run of this scenario needs: the lock servers and the storage."""
        return [*self.nodes, *self.storages]

    @property
    def duration_ms(self) -> int:
        # Only a pause takes time; a clock jump's or a delay's ms are sizes, not durations.
        return max(
            (step.at_ms + (step.ms or 0 if step.do == "pause" else 0) for step in self.steps),
            default=0,
        )

    def to_json(self) -> JsonObject:
        found: JsonObject = self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
        return found

    def script(self) -> JsonObject:
        """What a run of it does on the servers: the scenario without its words."""
        data = {k: v for k, v in self.to_json().items() if k not in STORY}
        data["steps"] = [
            {k: v for k, v in step.to_json().items() if k not in WORDS} for step in self.steps
        ]
        return data


NO_STEPS = "steps: a scenario needs at least one step"


def parse(data: object, allow_empty: bool = False) -> Scenario:
    """A valid :class:`Scenario` from decoded JSON, or :class:`ScenarioError`.

    ``allow_empty`` admits a scenario without steps: a free-play session, whose steps are the
    learner's clicks.
    """
    if not isinstance(data, dict):
        raise ScenarioError(["scenario: must be a JSON object"])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError([describe(error) for error in exc.errors()]) from None
    problems = rules.cross_check(scenario)
    if not scenario.steps and not allow_empty:
        problems.insert(0, NO_STEPS)
    if problems:
        raise ScenarioError(problems)
    # Both spellings, always: "fencing" keeps its meaning (the storage checks tokens) for every
    # reader that knows only it, and "storage" says which kind.
    kind = scenario.storage_kind
    return scenario.model_copy(update={"storage": kind, "fencing": kind == "fenced"})


def startable(scenario: Scenario, open_ended: bool) -> Scenario:
    """``scenario`` parsed with steps allowed to be none, if it may start so: only as a free-play
    session (``open_ended``); otherwise :class:`ScenarioError`, as :func:`parse` says it."""
    if not scenario.steps and not open_ended:
        raise ScenarioError([NO_STEPS])
    return scenario


def check_step(scenario: Scenario, data: object, at_ms: int = 0) -> Step:
    """One step for a live run of ``scenario`` (a click), validated like a scenario's steps."""
    if not isinstance(data, dict):
        raise ScenarioError(["step: must be a JSON object"])
    try:
        step = Step.model_validate({**data, "at_ms": 0})
    except ValidationError as exc:
        raise ScenarioError([describe(error) for error in exc.errors()]) from None
    problems = rules.step_problems(
        step, list(scenario.clients), scenario.servers, scenario.lock_service, scenario.variant
    )
    if problems:
        raise ScenarioError(problems)
    return step.model_copy(update={"at_ms": at_ms})


def loads(text: str | bytes) -> Scenario:
    """Parse scenario JSON text; malformed JSON names its line and column."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
        ) from None
    except UnicodeDecodeError:
        raise ScenarioError(["not valid JSON: the file is not UTF-8 text"]) from None
    return parse(data)


def _part(part: int | str) -> str:
    """One step of a field's path; a key that is no plain name (an unknown field called
    ``"a: b"`` or a thousand characters long) is quoted and cut short, so the path stays one
    short token that a reader, and the import page, can tell from the message."""
    if isinstance(part, int):
        return f"[{part}]"
    if PLAIN_KEY.match(part):
        return f".{part}"
    return f"[{json.dumps(part if len(part) <= 40 else part[:39] + '…')}]"


def describe(error: ErrorDetails) -> str:
    """One of pydantic's errors as a problem named by its field (``steps[3].ms: ...``)."""
    where = "".join(_part(part) for part in error["loc"])
    where = where.lstrip(".") or "scenario"
    kind, message = error["type"], error["msg"]
    if kind == "extra_forbidden":
        message = "unknown field"
    elif kind == "missing":
        message = "required field is missing"
    elif kind == "literal_error" and where == "format":
        message = 'only format 1 exists; set "format": 1'
    elif message.startswith("Value error, "):
        message = message.removeprefix("Value error, ")
    return f"{where}: {message}"
