"""Scenario format 1: the user-facing contract for saved scenarios, imports and replays.

Validation happens here and only here. Every problem is reported with the field that causes it
(``steps[3].ms: must be at most 60000``), never as a traceback, so the same messages serve the
CLI (exit 2), the import form and the WebSocket.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from lockviz.lab import backends

MAX_RUN_MS = 120_000
MAX_CLIENTS = 8
MAX_STEPS = 500

CLIENT_VERBS = {
    "acquire",
    "write",
    "release",
    "extend",
    "pause",
    "crash",
    "clock_jump",
    "clock_rate",
}
LINK_VERBS = {"partition", "heal", "delay"}  # done to the links between a client and servers
NODE_VERBS = {"clock_jump", "crash", "restart"}
RESERVED_VERBS: set[str] = set()
# Each backend: its variants (the first is the default), and why it cannot fence if it cannot.
BACKENDS: dict[str, dict[str, Any]] = {
    "redis": {"variants": ["safe", "unsafe_release", "no_ttl"]},
    "redlock": {
        "variants": ["safe"],
        "no_fencing": "Redlock cannot fence: its lock values are random, so a resource cannot "
        "tell an older holder from a newer one, and there is no counter that a majority of "
        "independent nodes could agree on (Kleppmann, 'How to do distributed locking'). "
        'Set "fencing": false to watch what happens without it.',
    },
    "zookeeper": {"variants": ["recipe", "herd"]},
    "postgres": {"variants": ["session", "xact", "pooled"]},
    "etcd": {"variants": ["lease"]},
}
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,15}$")
SERVER_NAME = re.compile(r"^(redis|zk|pg|etcd)-[0-9]+$")


class ScenarioError(ValueError):
    """A scenario that cannot be run; ``problems`` names each offending field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Expect(_Strict):
    mutual_exclusion: Literal["held", "violated"] | None = None
    stale_writes_accepted: int | None = Field(default=None, ge=0)
    stale_writes_rejected: int | None = Field(default=None, ge=0)
    data_corrupted: bool | None = None
    acquire_failures: int | None = Field(default=None, ge=0)
    liveness: Literal["ok", "stuck"] | None = None
    stuck_clients: list[str] | None = None
    wakeups: int | None = Field(default=None, ge=0)

    def as_dict(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class Ask(_Strict):
    """A predict-then-reveal checkpoint: the walkthrough stops before this step's outcome."""

    question: str = Field(min_length=1, max_length=300)
    choices: list[str] = Field(min_length=2, max_length=6)
    answer: str = Field(min_length=1, max_length=200)
    explain: str = Field(default="", max_length=1500)


class Step(_Strict):
    at_ms: int = Field(ge=0, le=MAX_RUN_MS)
    do: str
    client: str | None = None
    node: str | None = None
    ms: int | None = Field(default=None, ge=-3_600_000, le=3_600_000)
    value: str | None = Field(default=None, max_length=200)
    timeout_ms: int | None = Field(default=None, ge=0, le=MAX_RUN_MS)
    ttl_ms: int | None = Field(default=None, ge=10, le=60_000)
    nodes: list[str] | None = Field(default=None, min_length=1, max_length=8)
    mode: Literal["blackhole", "reset"] | None = None
    jitter_ms: int | None = Field(default=None, ge=0, le=10_000)
    rate: float | None = Field(default=None, ge=0.1, le=10)
    check_lease: bool | None = None  # write: a careful client first checks its lease by its clock
    say: str | None = Field(default=None, max_length=1000)
    ask: Ask | None = None


class Scenario(_Strict):
    format: Literal[1]
    title: str = Field(min_length=1, max_length=120)
    description: str = Field(default="", max_length=2000)
    takeaway: str = Field(default="", max_length=300)  # the lesson's one sentence to remember
    backend: str
    variant: str | None = None
    fencing: bool = True
    ttl_ms: int = Field(ge=100, le=60_000)
    clients: list[str] = Field(min_length=1, max_length=MAX_CLIENTS)
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

    @property
    def nodes(self) -> list[str]:
        """The lock servers of this scenario's backend (the storage comes on top)."""
        if self.backend == "redlock":
            return [f"redis-{i}" for i in range(1, (self.redis_nodes or 5) + 1)]
        if self.backend == "zookeeper":
            return [f"zk-{i}" for i in range(1, (self.zk_nodes or 1) + 1)]
        return {"redis": ["redis-1"], "postgres": ["pg-1"], "etcd": ["etcd-1"]}[self.backend]

    @property
    def duration_ms(self) -> int:
        # Only a pause takes time; a clock jump's or a delay's ms are sizes, not durations.
        return max(
            (step.at_ms + (step.ms or 0 if step.do == "pause" else 0) for step in self.steps),
            default=0,
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, exclude_defaults=False)


def parse(data: Any, allow_empty: bool = False) -> Scenario:
    """A valid :class:`Scenario` from decoded JSON, or :class:`ScenarioError`.

    ``allow_empty`` admits a scenario without steps: a free-play session, whose steps are the
    learner's clicks.
    """
    if not isinstance(data, dict):
        raise ScenarioError(["the scenario must be a JSON object"])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError([_describe(error) for error in exc.errors()]) from None
    problems = _cross_check(scenario)
    if not scenario.steps and not allow_empty:
        problems.insert(0, "steps: a scenario needs at least one step")
    if problems:
        raise ScenarioError(problems)
    return scenario


def check_step(scenario: Scenario, data: Any, at_ms: int = 0) -> Step:
    """One step for a live run of ``scenario`` (a click), validated like a scenario's steps."""
    if not isinstance(data, dict):
        raise ScenarioError(["step: must be a JSON object"])
    try:
        step = Step.model_validate({**data, "at_ms": 0})
    except ValidationError as exc:
        raise ScenarioError([_describe(error) for error in exc.errors()]) from None
    problems = _check_step(step, list(scenario.clients), [*scenario.nodes, "storage"])
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


def _describe(error: Any) -> str:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
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
    problems: list[str] = []
    spec = BACKENDS[s.backend]
    if not backends.available(s.backend):
        problems.append(f"backend: {s.backend!r} is not available in this version of lockviz")
    if s.fencing and "no_fencing" in spec:
        problems.append(f"fencing: {spec['no_fencing']}")
    if s.redis_nodes is not None and s.backend != "redlock":
        problems.append("redis_nodes: only Redlock runs on several Redis nodes")
    if s.node_timeout_ms is not None and s.backend != "redlock":
        problems.append("node_timeout_ms: only Redlock waits for several nodes")
    if s.idle_session_timeout_ms is not None and s.backend != "postgres":
        problems.append("idle_session_timeout_ms: a PostgreSQL server setting")
    if s.zk_nodes is not None and s.backend != "zookeeper":
        problems.append("zk_nodes: only the zookeeper backend has ZooKeeper nodes")
    if s.variant is not None and s.variant not in spec["variants"]:
        problems.append(
            f"variant: {s.backend} has no variant {s.variant!r}; choose from {spec['variants']}"
        )
    for i, name in enumerate(s.clients):
        if not NAME.match(name):
            problems.append(
                f"clients[{i}]: {name!r} is not a client name (a-z, 0-9, - or _, up to 16)"
            )
        elif name in ("lab", "storage") or SERVER_NAME.match(name):
            problems.append(f"clients[{i}]: {name!r} is a server's or the lab's name; pick another")
    if len(set(s.clients)) != len(s.clients):
        problems.append("clients: each client name must appear once")
    nodes = [*s.nodes, "storage"]
    for i, step in enumerate(s.steps):
        problems.extend(f"steps[{i}].{p}" for p in _check_step(step, s.clients, nodes))
    if not problems and s.duration_ms > MAX_RUN_MS:
        problems.append(f"steps: the run would last {s.duration_ms} ms; the most is {MAX_RUN_MS}")
    return problems


_NEEDS: dict[str, set[str]] = {
    "acquire": set(),
    "write": {"value"},
    "release": set(),
    "extend": set(),
    "pause": {"ms"},
    "crash": set(),
    "clock_jump": {"ms"},
    "clock_rate": {"rate"},
    "restart": set(),
}
# The fields each verb takes besides who it is done to (the free-play form reads it too).
VERB_FIELDS: dict[str, set[str]] = {
    "acquire": {"timeout_ms"},
    "write": {"value", "check_lease"},
    "release": set(),
    "extend": {"ttl_ms"},
    "pause": {"ms"},
    "crash": set(),
    "clock_jump": {"ms"},
    "clock_rate": {"rate"},
    "restart": set(),
    "partition": {"nodes", "mode"},
    "heal": {"nodes"},
    "delay": {"nodes", "ms", "jitter_ms"},
}
_OPTIONAL = {
    "ms",
    "value",
    "timeout_ms",
    "ttl_ms",
    "nodes",
    "mode",
    "jitter_ms",
    "rate",
    "check_lease",
}


def _check_link_step(step: Step, clients: list[str], nodes: list[str]) -> list[str]:
    verb, problems = step.do, []
    if step.node is not None:  # cut a server off from its peers: a ZooKeeper ensemble only
        if verb == "delay" or step.client is not None or step.nodes is not None:
            return ["node: only partition and heal can act on a server's links to its peers"]
        if not step.node.startswith("zk-") or sum(n.startswith("zk-") for n in nodes) < 3:
            return ["node: only a server of a ZooKeeper ensemble (zk_nodes: 3) can be cut off"]
        return []
    if step.client is None and verb != "heal":
        problems.append(f"client: required for {verb!r} (whose links?)")
    elif step.client is not None and step.client not in clients:
        problems.append(f"client: {step.client!r} is not one of the scenario's clients {clients}")
    if step.nodes is None and verb != "heal":
        problems.append(f'nodes: required for {verb!r} (which servers, e.g. ["redis-1"])')
    for i, node in enumerate(step.nodes or []):
        if node not in nodes:
            problems.append(f"nodes[{i}]: unknown node {node!r}; this backend has {nodes}")
    given = {f for f in _OPTIONAL if getattr(step, f) is not None}
    if verb == "delay" and step.ms is None:
        problems.append("ms: required for 'delay'")
    if verb == "delay" and step.ms is not None and step.ms < 0:
        problems.append("ms: a delay cannot be negative")
    for field in sorted(given - VERB_FIELDS[verb]):
        problems.append(f"{field}: not used by {verb!r}")
    return problems


def _check_step(step: Step, clients: list[str], nodes: list[str]) -> list[str]:
    verb = step.do
    if verb in RESERVED_VERBS:
        return [f"do: {verb!r} is a network fault; this version of the lab cannot inject it yet"]
    if verb not in CLIENT_VERBS | NODE_VERBS | LINK_VERBS:
        known = ", ".join(sorted(CLIENT_VERBS | NODE_VERBS | LINK_VERBS))
        return [f"do: unknown verb {verb!r}; use one of {known}"]
    problems: list[str] = []
    if step.client is not None and step.node is not None:
        return ["client: give either client or node, not both"]
    if step.ask is not None and step.ask.answer not in step.ask.choices:
        problems.append(f"ask.answer: {step.ask.answer!r} is not one of the choices")
    if verb in LINK_VERBS:
        return problems + _check_link_step(step, clients, nodes)
    if step.client is not None:
        if verb not in CLIENT_VERBS:
            problems.append(f'client: {verb!r} is done to a node; use "node"')
        elif step.client not in clients:
            problems.append(
                f"client: {step.client!r} is not one of the scenario's clients {clients}"
            )
    elif step.node is not None:
        if verb not in NODE_VERBS:
            problems.append(f'node: {verb!r} is done by a client; use "client"')
        elif step.node not in nodes:
            problems.append(f"node: unknown node {step.node!r}; this backend has {nodes}")
        elif verb == "clock_jump" and not (
            step.node.startswith("redis-") or step.node == "storage"
        ):
            problems.append(f"node: clock jumps work on Redis nodes only, not on {step.node!r}")
    else:
        problems.append("client: required field is missing (who does this step?)")
    given = {f for f in _OPTIONAL if getattr(step, f) is not None}
    for field in sorted(_NEEDS[verb] - given):
        problems.append(f"{field}: required for {verb!r}")
    for field in sorted(given - VERB_FIELDS[verb]):
        problems.append(f"{field}: not used by {verb!r}")
    if verb == "pause" and step.ms is not None and step.ms <= 0:
        problems.append("ms: a pause must last more than 0 ms")
    return problems
