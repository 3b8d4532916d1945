"""Scenario format 1, the rules across fields: what no field's type can say alone.

A field's type and bounds are checked by the models of :mod:`lockviz.scenarios.schema`; what
depends on other fields is checked here, once the types hold: a verb's required and unused
fields (from the one vocabulary, :mod:`lockviz.scenarios.verbs`), a client or a node that the
scenario has, a storage kind the lock service can back (:mod:`lockviz.catalogue`), the run's
length. Each problem names its field, like the schema's own.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lockviz.catalogue import (
    BACKENDS,
    OPTIONS,
    STORAGE,
    STORAGE_KINDS,
    STORAGE_REPLICA,
    Backend,
    server_kind,
)
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS, Target, Verb

if TYPE_CHECKING:
    from lockviz.scenarios.schema import Scenario, Step

MAX_RUN_MS = 120_000
NAME = re.compile(r"^[a-z][a-z0-9_-]{0,15}$")


def cross_check(s: Scenario) -> list[str]:
    """Every problem of a scenario whose fields each have the right type."""
    problems = _check_service(s) + _check_clients(s)
    for i, step in enumerate(s.steps):
        problems.extend(
            f"steps[{i}].{p}"
            for p in step_problems(step, s.clients, s.servers, s.lock_service, s.variant)
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
    stored = STORAGE_KINDS[kind]
    if stored.lockless and service.lock:
        return [
            f'storage: {kind!r} takes no lock service: {stored.lockless} Use "backend": "none", '
            "or another storage."
        ]
    if stored.tokens and not service.fencing:
        if field == "fencing":
            return [
                f'fencing: {service.no_fencing} Set "fencing": false to watch what happens '
                "without it."
            ]
        others = (
            '"plain", "cas", "lww" or "crdt"'
            if not service.lock
            else '"plain", "sequencer" or "cas"'
        )
        return [f"storage: {service.no_fencing} Use {others}."]
    if kind == "sequencer" and (why := service.why_no_sequencer(s.variant)):
        others = (
            '"plain", "cas", "lww" or "crdt"' if not service.lock else '"fenced", "plain" or "cas"'
        )
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


def _check_peer_step(step: Step, nodes: list[str], service: Backend | None) -> list[str]:
    """A server cut off from (or healed with) its peers: all of them, or ``nodes`` of them."""
    if VERBS[step.do].name == "delay" or step.client is not None:
        return ["node: only partition and heal can act on a server's links to its peers"]
    peers = [n for n in nodes if n not in (STORAGE, STORAGE_REPLICA)]
    count = sum(server_kind(n) == (service.server if service else None) for n in peers)
    if service is None or not service.grouped(count) or step.node not in peers:
        groups = [
            f"{b.label} ({b.node_count_field}: {b.group_from})" if b.node_count_field else b.label
            for b in BACKENDS.values()
            if b.group_from
        ]
        return [
            "node: only a server whose servers talk to each other can be cut off from them: "
            + ", ".join(groups)
        ]
    others = [n for n in peers if n != step.node]
    return [
        f"nodes[{i}]: {node!r} is not one of {step.node}'s peers {others}"
        for i, node in enumerate(step.nodes or [])
        if node not in others
    ]


def _check_link_step(
    step: Step, clients: list[str], nodes: list[str], service: Backend | None = None
) -> list[str]:
    verb, problems = VERBS[step.do], []
    if step.node is not None:  # a server cut off from its peers: a group's server only
        return _check_peer_step(step, nodes, service)
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


def step_problems(
    step: Step,
    clients: list[str],
    nodes: list[str],
    service: Backend | None = None,
    variant: str | None = None,
) -> list[str]:
    """What is wrong with one step among these clients and servers (a scenario's, or a click)."""
    verb = VERBS.get(step.do)
    if verb is None:
        return [f"do: unknown verb {step.do!r}; use one of {', '.join(sorted(VERBS))}"]
    if verb.lock and service is not None and not service.lock:
        return [
            f'do: {verb.name!r} needs a lock service, and this scenario has "backend": '
            f'"{service.name}"; its clients can only read and write the storage'
        ]
    chosen = service.variant(variant) if service is not None else None
    if verb.election and service is not None and not (chosen and chosen.election):
        elections = [f"{b.name} {v.name}" for b in BACKENDS.values() for v in b.variants
                     if v.election]  # fmt: skip
        return [
            f"do: {verb.name!r} asks who leads an election, and this scenario's lock is not "
            f"one; an election is the variant {' or '.join(elections)}"
        ]
    problems: list[str] = []
    if step.client is not None and step.node is not None:
        return ["client: give either client or node, not both"]
    if step.ask is not None and step.ask.answer not in step.ask.choices:
        problems.append(f"ask.answer: {step.ask.answer!r} is not one of the choices")
    if Target.LINK in verb.targets:
        return problems + _check_link_step(step, clients, nodes, service)
    problems += _check_target(step, verb, clients, nodes)
    given = _given(step)
    problems.extend(f"{f}: required for {verb.name!r}" for f in sorted(verb.required - given))
    problems.extend(f"{f}: not used by {verb.name!r}" for f in sorted(given - verb.fields))
    if verb.name == "pause" and step.ms is not None and step.ms <= 0:
        problems.append("ms: a pause must last more than 0 ms")
    return problems
