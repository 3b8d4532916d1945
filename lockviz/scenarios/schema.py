"""Scenario format 1: the user-facing contract for saved scenarios, imports and replays.

Validation happens here and only here. Every problem is reported with the field that causes it
(``steps[3].ms: must be at most 60000``), never as a traceback, so the same messages serve the
CLI (exit 2), the import form and the WebSocket.

Longer than most modules because it is one contract: the format and every rule of it, so that
one file answers "is this a valid scenario, and if not, why".

One module past the usual ~300 lines, on purpose: every rule of the scenario format, and every
message that names a field, is here, so an author's error and the rule behind it are found in one
place.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lockviz.catalogue import BACKENDS, OPTIONS, STORAGE, STORAGE_KINDS, Backend, server_kind
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS, WORDS, Target, Verb

MAX_RUN_MS = 120_000
MAX_CLIENTS = 8
MAX_STEPS = 500
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,15}$")
PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,39}$")
# Every string and list has a bound: a refusal quotes what it refuses, so it must stay short.
Name = Annotated[str, Field(max_length=40)]
Choice = Annotated[str, Field(min_length=1, max_length=200)]

# The top-level fields that only tell the story or predict it: not what the servers do.
STORY = frozenset({"format", "title", "description", "takeaway", "expect"})


class ScenarioError(ValueError):
    """A scenario that cannot be run; ``problems`` names each offending field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


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

    def as_dict(self) -> dict[str, Any]:
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

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


class Scenario(_Strict):
    format: Literal[1]
    title: str = Field(min_length=1, max_length=120)
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
    def servers(self) -> list[str]:
        """Every server a run of this scenario needs: the lock servers and the storage."""
        return [*self.nodes, STORAGE]

    @property
    def duration_ms(self) -> int:
        # Only a pause takes time; a clock jump's or a delay's ms are sizes, not durations.
        return max(
            (step.at_ms + (step.ms or 0 if step.do == "pause" else 0) for step in self.steps),
            default=0,
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)

    def script(self) -> dict[str, Any]:
        """What a run of it does on the servers: the scenario without its words."""
        data = {k: v for k, v in self.to_json().items() if k not in STORY}
        data["steps"] = [{k: v for k, v in st.items() if k not in WORDS} for st in data["steps"]]
        return data


def parse(data: Any, allow_empty: bool = False) -> Scenario:
    """A valid :class:`Scenario` from decoded JSON, or :class:`ScenarioError`.

    ``allow_empty`` admits a scenario without steps: a free-play session, whose steps are the
    learner's clicks.
    """
    if not isinstance(data, dict):
        raise ScenarioError(["scenario: must be a JSON object"])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError([_describe(error) for error in exc.errors()]) from None
    problems = _cross_check(scenario)
    if not scenario.steps and not allow_empty:
        problems.insert(0, "steps: a scenario needs at least one step")
    if problems:
        raise ScenarioError(problems)
    # Both spellings, always: "fencing" keeps its meaning (the storage checks tokens) for every
    # reader that knows only it, and "storage" says which kind.
    kind = scenario.storage_kind
    return scenario.model_copy(update={"storage": kind, "fencing": kind == "fenced"})


def check_step(scenario: Scenario, data: Any, at_ms: int = 0) -> Step:
    """One step for a live run of ``scenario`` (a click), validated like a scenario's steps."""
    if not isinstance(data, dict):
        raise ScenarioError(["step: must be a JSON object"])
    try:
        step = Step.model_validate({**data, "at_ms": 0})
    except ValidationError as exc:
        raise ScenarioError([_describe(error) for error in exc.errors()]) from None
    problems = _check_step(step, list(scenario.clients), scenario.servers, scenario.lock_service)
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


def _describe(error: Any) -> str:
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


def _cross_check(s: Scenario) -> list[str]:
    problems = _check_service(s) + _check_clients(s)
    for i, step in enumerate(s.steps):
        problems.extend(
            f"steps[{i}].{p}" for p in _check_step(step, s.clients, s.servers, s.lock_service)
        )
    if not problems and s.duration_ms > MAX_RUN_MS:
        problems.append(f"steps: the run would last {s.duration_ms} ms; the most is {MAX_RUN_MS}")
    return problems


def _check_service(s: Scenario) -> list[str]:
    """The backend's settings: fencing, its own options, node counts, variant."""
    problems = _check_storage(s)
    service = s.lock_service
    for option, takers in OPTIONS.items():
        if getattr(s, option) is not None and s.backend not in takers:
            names = " and ".join(BACKENDS[b].label for b in takers)
            problems.append(f"{option}: only {names} takes this setting, not {service.label}")
    if s.node_count is not None and s.node_count not in service.node_counts:
        counts = ", ".join(map(str, service.node_counts))
        problems.append(f"{service.node_count_field}: {service.label} runs on {counts} nodes")
    if service.variant(s.variant) is None:
        known = [v.name for v in service.variants]
        problems.append(f"variant: {s.backend} has no variant {s.variant!r}; choose from {known}")
    return problems


def _check_storage(s: Scenario) -> list[str]:
    """``storage`` and ``fencing`` agree, and the lock service can back the storage's check."""
    service, kind = s.lock_service, s.storage_kind
    explicit_fencing = "fencing" in s.model_fields_set
    if s.storage is not None and explicit_fencing and s.fencing != (kind == "fenced"):
        means = "fenced" if s.fencing else "plain"
        return [
            f'storage: {kind!r} contradicts "fencing": {str(s.fencing).lower()}, which means '
            f'"storage": {means!r}; give only one of them'
        ]
    # Blame the field the author wrote; when neither is written, the default's own field.
    field = "storage" if s.storage is not None else "fencing"
    if s.storage is None and not explicit_fencing and not service.lock:
        field = "storage"
    if kind == "fenced" and not service.fencing:
        if field == "fencing":
            return [
                f'fencing: {service.no_fencing} Set "fencing": false to watch what happens '
                "without it."
            ]
        others = '"plain" or "cas"' if not service.lock else '"plain", "sequencer" or "cas"'
        return [f"storage: {service.no_fencing} Use {others}."]
    if kind == "sequencer" and (why := service.why_no_sequencer(s.variant)):
        others = '"plain" or "cas"' if not service.lock else '"fenced", "plain" or "cas"'
        return [f"storage: {why} Use {others}."]
    return []


def _check_clients(s: Scenario) -> list[str]:
    problems: list[str] = []
    for i, name in enumerate(s.clients):
        if not NAME.match(name):
            problems.append(
                f"clients[{i}]: {name!r} is not a client name (a-z, 0-9, - or _, up to 16)"
            )
        elif name == "lab" or server_kind(name) is not None:
            problems.append(f"clients[{i}]: {name!r} is a server's or the lab's name; pick another")
    if len(set(s.clients)) != len(s.clients):
        problems.append("clients: each client name must appear once")
    return problems


def _given(step: Step) -> set[str]:
    return {f for f in VERB_FIELDS if getattr(step, f) is not None}


def _check_link_step(step: Step, clients: list[str], nodes: list[str]) -> list[str]:
    verb, problems = VERBS[step.do], []
    if step.node is not None:  # cut a server off from its peers: an ensemble's server only
        if verb.name == "delay" or step.client is not None or step.nodes is not None:
            return ["node: only partition and heal can act on a server's links to its peers"]
        kind = server_kind(step.node)
        if kind is None or not kind.peers or sum(server_kind(n) == kind for n in nodes) < 3:
            return ["node: only a server of a ZooKeeper ensemble (zk_nodes: 3) can be cut off"]
        return []
    if step.client is None and "nodes" in verb.required:
        problems.append(f"client: required for {verb.name!r} (whose links?)")
    elif step.client is not None and step.client not in clients:
        problems.append(f"client: {step.client!r} is not one of the scenario's clients {clients}")
    if step.nodes is None and "nodes" in verb.required:
        problems.append(f'nodes: required for {verb.name!r} (which servers, e.g. ["redis-1"])')
    for i, node in enumerate(step.nodes or []):
        if node not in nodes:
            problems.append(f"nodes[{i}]: unknown node {node!r}; this backend has {nodes}")
    given = _given(step)
    problems.extend(
        f"{f}: required for {verb.name!r}" for f in sorted(verb.required - given - {"nodes"})
    )
    if verb.name == "delay" and step.ms is not None and step.ms < 0:
        problems.append("ms: a delay cannot be negative")
    problems.extend(f"{f}: not used by {verb.name!r}" for f in sorted(given - verb.fields))
    return problems


def _check_target(step: Step, verb: Verb, clients: list[str], nodes: list[str]) -> list[str]:
    """Who does, or undergoes, a client or node step."""
    if step.client is not None:
        if Target.CLIENT not in verb.targets:
            return [f'client: {verb.name!r} is done to a node; use "node"']
        if step.client not in clients:
            return [f"client: {step.client!r} is not one of the scenario's clients {clients}"]
        return []
    if step.node is None:
        return ["client: required field is missing (who does this step?)"]
    kind = server_kind(step.node)
    if Target.NODE not in verb.targets:
        return [f'node: {verb.name!r} is done by a client; use "client"']
    if step.node not in nodes:
        return [f"node: unknown node {step.node!r}; this backend has {nodes}"]
    if verb.name == "clock_jump" and (kind is None or not kind.clock_jumps):
        return [f"node: clock jumps work on Redis nodes only, not on {step.node!r}"]
    return []


def _check_step(
    step: Step, clients: list[str], nodes: list[str], service: Backend | None = None
) -> list[str]:
    verb = VERBS.get(step.do)
    if verb is None:
        return [f"do: unknown verb {step.do!r}; use one of {', '.join(sorted(VERBS))}"]
    if verb.lock and service is not None and not service.lock:
        return [
            f'do: {verb.name!r} needs a lock service, and this scenario has "backend": '
            f'"{service.name}"; its clients can only read and write the storage'
        ]
    problems: list[str] = []
    if step.client is not None and step.node is not None:
        return ["client: give either client or node, not both"]
    if step.ask is not None and step.ask.answer not in step.ask.choices:
        problems.append(f"ask.answer: {step.ask.answer!r} is not one of the choices")
    if Target.LINK in verb.targets:
        return problems + _check_link_step(step, clients, nodes)
    problems += _check_target(step, verb, clients, nodes)
    given = _given(step)
    problems.extend(f"{f}: required for {verb.name!r}" for f in sorted(verb.required - given))
    problems.extend(f"{f}: not used by {verb.name!r}" for f in sorted(given - verb.fields))
    if verb.name == "pause" and step.ms is not None and step.ms <= 0:
        problems.append("ms: a pause must last more than 0 ms")
    return problems
