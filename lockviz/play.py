"""Free play: the form that starts a session, and a click's form fields turned into a step.

A click on a live run arrives as form fields (``do``, ``client``, ``node``, ``nodes``, ``ms``
or ``s`` in seconds, ``mode``, ``value``, ``rate``, ...). :func:`step_from_form` turns them
into the step dict that :func:`lockviz.runs.inject` validates, naming any field that is not a
number where a number is needed. Fields the verb does not use are dropped, because one HTML
form holds the inputs of several buttons (the links form: cut, delay and heal).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django import forms

from lockviz.lab import backends
from lockviz.scenarios.schema import (
    BACKENDS,
    MAX_RUN_MS,
    VERB_FIELDS,
    Scenario,
    ScenarioError,
    parse,
)

CLIENT_NAMES = ["alice", "bob", "carol", "dave", "erin"]
BACKEND_LABELS = {
    "redis": "Redis, one node (SET NX PX)",
    "redlock": "Redlock, five Redis nodes",
    "zookeeper": "ZooKeeper (ephemeral sequential nodes)",
    "postgres": "PostgreSQL advisory locks",
    "etcd": "etcd (lease + revision)",
}
# Why a backend cannot fence, without the schema's advice on what to write in the JSON.
NO_FENCING = {
    name: spec["no_fencing"].split(' Set "fencing"')[0]
    for name, spec in BACKENDS.items()
    if "no_fencing" in spec
}

_WHOLE = ("ms", "timeout_ms", "ttl_ms", "jitter_ms")
_TEXT = ("client", "node", "value", "mode")


def available_backends() -> list[dict[str, Any]]:
    """Every backend, with whether this installation can run it."""
    return [
        {"name": name, "label": label, "available": backends.available(name)}
        for name, label in BACKEND_LABELS.items()
    ]


class PlayForm(forms.Form):
    backend = forms.ChoiceField(choices=list(BACKEND_LABELS.items()), initial="redis")
    clients = forms.TypedChoiceField(
        choices=[(n, n) for n in range(2, len(CLIENT_NAMES) + 1)], coerce=int, initial=2
    )
    fencing = forms.BooleanField(required=False, initial=True)
    ttl_ms = forms.IntegerField(
        min_value=100, max_value=60_000, initial=2000, label="Lease (TTL, ms)"
    )
    fsync = forms.BooleanField(required=False)

    def clean_backend(self) -> str:
        name = str(self.cleaned_data["backend"])
        if not backends.available(name):
            raise forms.ValidationError(f"{name} is not available in this version of lockviz")
        return name

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            data["built"] = session_scenario(
                data["backend"], data["clients"], data["fencing"], data["ttl_ms"], data["fsync"]
            )
        except ScenarioError as exc:
            raise forms.ValidationError(exc.problems) from None
        return data


def session_scenario(
    backend: str, clients: int, fencing: bool, ttl_ms: int, fsync: bool = False
) -> Scenario:
    """The scenario of a free-play session: no steps; the learner's clicks are its steps."""
    fencing = fencing and backend not in NO_FENCING  # Redlock cannot fence: forced off
    names = CLIENT_NAMES[:clients]
    data: dict[str, Any] = {
        "format": 1,
        "title": f"Free play: {backend}, {len(names)} clients",
        "description": "A free-play session: every step is a click of the learner's.",
        "backend": backend,
        "fencing": fencing,
        "ttl_ms": ttl_ms,
        "clients": names,
        "steps": [],
    }
    if fsync:
        data["persistence"] = "fsync"
    return parse(data, allow_empty=True)


def step_from_form(form: Mapping[str, Any]) -> dict[str, Any]:
    """The step dict of a click, or ScenarioError naming each field that is not a number.

    ``form`` is a QueryDict (``getlist`` gives ``nodes`` as repeated fields) or a plain dict.
    """
    get = form.get
    problems: list[str] = []
    step: dict[str, Any] = {}
    verb = str(get("do") or "").strip()
    if not verb:
        raise ScenarioError(["do: say what to do (acquire, pause, partition, ...)"])
    step["do"] = verb
    for name in _TEXT:
        text = str(get(name) or "").strip()
        if text:
            step[name] = text
    nodes = _nodes(form)
    if nodes:
        step["nodes"] = nodes
    for name in _WHOLE:
        raw = str(get(name) or "").strip()
        if raw:
            number = _number(raw)
            if number is None or number != int(number):
                problems.append(f"{name}: {raw!r} is not a whole number of milliseconds")
            else:
                step[name] = int(number)
    seconds = str(get("s") or "").strip()
    if seconds:
        number = _number(seconds)
        if number is None or abs(number) > 3600:
            problems.append(f"s: {seconds!r} is not a number of seconds (at most 3600)")
        else:
            step["ms"] = round(number * 1000)
    rate = str(get("rate") or "").strip()
    if rate:
        number = _number(rate)
        if number is None:
            problems.append(f"rate: {rate!r} is not a number (0.25 runs at a quarter speed)")
        else:
            step["rate"] = number
    if str(get("check_lease") or "") in ("on", "true", "1"):
        step["check_lease"] = True
    if problems:
        raise ScenarioError(problems)
    uses = VERB_FIELDS.get(verb)  # anything else in the form is dropped
    if uses is None:
        return step  # an unknown verb: the schema names it
    keep = {"do", "client", "node"} | uses
    return {k: v for k, v in step.items() if k in keep}


def _nodes(form: Mapping[str, Any]) -> list[str]:
    raw = form.getlist("nodes") if hasattr(form, "getlist") else form.get("nodes", [])
    if isinstance(raw, str):
        raw = [raw]
    return [n.strip() for item in raw for n in str(item).split(",") if n.strip()]


def _number(text: str) -> float | None:
    try:
        number = float(text.replace("\u2212", "-").replace(",", "."))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def describe(step: Mapping[str, Any]) -> str:
    """A click in words, for the "done: ..." line."""
    who = step.get("client") or step.get("node") or "?"
    verb, ms = step.get("do"), step.get("ms")
    links = f"{who} \u21f9 {', '.join(step.get('nodes') or []) or 'every server'}"
    words = {
        "acquire": f"{who} asks for the lock",
        "write": f"{who} writes {step.get('value', '')!r} to the storage",
        "release": f"{who} releases the lock",
        "extend": f"{who} extends its lease",
        "pause": f"{who} paused for {ms} ms (SIGSTOP)",
        "crash": f"{who} killed (kill -9)" if step.get("node") else f"{who} crashed (SIGKILL)",
        "restart": f"{who} restarted",
        "clock_jump": f"{who}'s clock jumped {_signed(ms or 0)}",
        "clock_rate": f"{who}'s clock runs \u00d7{step.get('rate')}",
        "partition": f"{links} cut ({step.get('mode') or 'blackhole'})",
        "heal": f"{links} healed",
        "delay": f"{links} delayed {ms} ms",
    }
    return words.get(str(verb), str(verb))


def _signed(ms: int) -> str:
    sign = "\u2212" if ms < 0 else "+"
    return f"{sign}{abs(ms) / 1000:g} s" if abs(ms) >= 1000 else f"{sign}{abs(ms)} ms"


def replay_problems(problems: list[str]) -> list[str]:
    """Why a session cannot be run again as a scenario, in the learner's terms."""
    if problems == ["steps: a scenario needs at least one step"]:
        return ["Nothing to run again: this session has no clicks yet."]
    if any(".at_ms" in p or p.startswith("steps: the run would last") for p in problems):
        limit = MAX_RUN_MS // 1000
        head = (
            f"A scenario may last at most {limit} s and this session went on longer. Save it "
            "as a scenario and move or drop the late steps:"
        )
        return [head, *problems]
    return problems
