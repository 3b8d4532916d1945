"""Free play: the form that starts a session, and a click's form fields turned into a step.

A click on a live run arrives as form fields (``do``, ``client``, ``node``, ``nodes``, ``ms``
or ``s`` in seconds, ``mode``, ``value``, ``rate``, ...). :func:`step_from_form` turns them
into the step dict that :func:`lockviz.runs.launcher.inject` validates, naming any field that is
not a number where a number is needed. Fields the verb does not use are dropped, because one
HTML form holds the inputs of several buttons (the links form: cut, delay and heal).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Protocol, TypedDict, runtime_checkable

from django import forms
from django.conf import settings

from lockviz.catalogue import BACKENDS, STORAGE_KINDS
from lockviz.errors import ScenarioError
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.lab import labs
from lockviz.lab.errors import LabError
from lockviz.models import Run
from lockviz.scenarios.rules import MAX_RUN_MS
from lockviz.scenarios.schema import Scenario, Step, parse
from lockviz.scenarios.verbs import VERBS

CLIENT_NAMES = ["alice", "bob", "carol", "dave", "erin"]
# Why a backend cannot fence, as the form says it when that backend is chosen.
NO_FENCING = {b.name: b.no_fencing for b in BACKENDS.values() if not b.fencing}

_WHOLE = ("ms", "timeout_ms", "ttl_ms", "jitter_ms")
_TEXT = ("client", "node", "value", "mode", "key")

# A form as posted: a QueryDict, or a dict the server fills (a step row's fields, a link's form:
# lockviz.teaching.editor.form_of). Every reader takes a value as text or as a tick box.
Posted = Mapping[str, str | bool]


@runtime_checkable
class _Repeated(Protocol):
    """A posted form that holds a field more than once (a QueryDict)."""

    def getlist(self, key: str) -> list[str]: ...


class Backend(TypedDict):
    """A backend as the free-play form offers it."""

    name: str
    label: str
    available: bool
    why: str  # why this installation cannot run it ('' when it can)


def unavailable(backend: str) -> str:
    """Why this installation cannot run ``backend`` ('' when it can)."""
    service = BACKENDS[backend]
    try:
        labs.checking(settings.LOCKVIZ_SERVERS).check(service.nodes())
    except LabError as exc:
        return str(exc)
    return ""


def available_backends() -> list[Backend]:
    """Every backend, with why this installation cannot run it (if it cannot)."""
    found = []
    for b in BACKENDS.values():
        why = unavailable(b.name)
        found.append(Backend(name=b.name, label=b.summary, available=not why, why=why))
    return found


class PlayForm(forms.Form):
    """A session's settings. Each lock service's variant is its own field, ``variant_<backend>``
    (as in the scenario editor), so a page without its script still sends the chosen one; the
    storage is the fencing box's (fenced or plain) unless another kind is chosen."""

    backend = forms.ChoiceField(
        choices=[(b.name, b.summary) for b in BACKENDS.values()], initial="redis"
    )
    storage = forms.ChoiceField(
        choices=[
            ("", "as the fencing box says"),
            *((k.name, k.label) for k in STORAGE_KINDS.values()),
        ],
        required=False,
    )
    clients = forms.TypedChoiceField(
        choices=[(n, n) for n in range(2, len(CLIENT_NAMES) + 1)], coerce=int, initial=2
    )
    fencing = forms.BooleanField(required=False, initial=True)
    ttl_ms = forms.IntegerField(
        min_value=100, max_value=60_000, initial=2000, label="Lease (TTL, ms)"
    )
    fsync = forms.BooleanField(required=False)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for b in BACKENDS.values():
            if len(b.variants) > 1:
                self.fields[f"variant_{b.name}"] = forms.ChoiceField(
                    choices=[(v.name, v.label) for v in b.variants], required=False
                )

    def variants(self) -> list[tuple[str, forms.BoundField]]:
        """Each lock service with a choice of variants, and its field (for the template)."""
        return [(name[8:], self[name]) for name in self.fields if name.startswith("variant_")]

    def clean_backend(self) -> str:
        name = str(self.cleaned_data["backend"])
        why = unavailable(name)
        if why:
            raise forms.ValidationError(f"{BACKENDS[name].label} cannot run here: {why}")
        return name

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if self.errors:
            return data
        variant = data.get(f"variant_{data['backend']}") or None
        try:
            data["built"] = session_scenario(
                data["backend"], data["clients"], data["fencing"], data["ttl_ms"], data["fsync"],
                variant=variant, storage=data.get("storage") or None,
            )  # fmt: skip
        except ScenarioError as exc:
            raise forms.ValidationError(exc.problems) from None
        return data


def session_scenario(
    backend: str,
    clients: int,
    fencing: bool,
    ttl_ms: int,
    fsync: bool = False,
    *,
    variant: str | None = None,
    storage: str | None = None,
) -> Scenario:
    """The scenario of a free-play session: no steps; the learner's clicks are its steps. The
    storage is ``storage`` when given, else what ``fencing`` says."""
    fencing = fencing and BACKENDS[backend].fencing  # Redlock cannot fence: forced off
    names = CLIENT_NAMES[:clients]
    data: JsonObject = {
        "format": 1,
        "title": f"Free play: {backend}, {len(names)} clients",
        "description": "A free-play session: every step is a click of the learner's.",
        "backend": backend,
        "fencing": fencing,
        "ttl_ms": ttl_ms,
        "clients": [*names],
        "steps": [],
    }
    if fsync:
        data["persistence"] = "fsync"
    if variant:
        data["variant"] = variant
    if storage:
        data.pop("fencing")
        data["storage"] = storage
    return parse(data, allow_empty=True)


def step_from_form(form: Posted) -> JsonObject:
    """The step dict of a click, or ScenarioError naming each field that is not a number.

    ``form`` is a QueryDict (``getlist`` gives ``nodes`` as repeated fields) or a plain dict.
    """
    get = form.get
    problems: list[str] = []
    step: JsonObject = {}
    verb = str(get("do") or "").strip()
    if not verb:
        raise ScenarioError(["do: say what to do (acquire, pause, partition, ...)"])
    step["do"] = verb
    step.update(_names(form))
    for name, (read, problem) in _NUMBERS.items():
        raw = str(get(name) or "").strip()
        if raw:
            value = read(raw)
            if value is None:
                quoted = repr(raw) if len(raw) <= 20 else f"{raw[:20]!r}…"  # a refusal stays short
                problems.append(f"{name}: {quoted} {problem}")
            else:
                step["ms" if name == "s" else name] = value
    if str(get("check_lease") or "") in ("on", "true", "1"):
        step["check_lease"] = True
    if problems:
        raise ScenarioError(problems)
    known = VERBS.get(verb)  # anything else in the form is dropped
    if known is None:
        return step  # an unknown verb: the schema names it
    keep = {"do", "client", "node"} | known.fields
    return {k: v for k, v in step.items() if k in keep}


def _names(form: Posted) -> JsonObject:
    """The click's words: who (client, node), which servers (nodes), its value, mode and key."""
    found: JsonObject = {}
    for name in _TEXT:
        text = str(form.get(name) or "").strip()
        if text:
            found[name] = text
    nodes = _nodes(form)
    if nodes:
        found["nodes"] = [*nodes]
    return found


def _whole(raw: str) -> int | None:
    number = _number(raw)
    return int(number) if number is not None and number == int(number) else None


def _seconds(raw: str) -> int | None:
    """Seconds as milliseconds: a pause of "1.5" s is 1500 ms."""
    number = _number(raw)
    return round(number * 1000) if number is not None and abs(number) <= 3600 else None


# Each number a click may carry: how to read it, and what to say when it is not one.
_NUMBERS: dict[str, tuple[Callable[[str], float | int | None], str]] = {
    **{name: (_whole, "is not a whole number of milliseconds") for name in _WHOLE},
    "s": (_seconds, "is not a number of seconds (at most 3600)"),
    "rate": (lambda raw: _number(raw), "is not a number (0.25 runs at a quarter speed)"),
}


def _nodes(form: Posted) -> list[str]:
    given = form.getlist("nodes") if isinstance(form, _Repeated) else form.get("nodes", [])
    raw = given if isinstance(given, list) else [given] if given else []
    return [n.strip() for item in raw for n in str(item).split(",") if n.strip()]


def _number(text: str) -> float | None:
    try:
        number = float(text.replace("\u2212", "-").replace(",", "."))
    except ValueError:
        return None
    return number if math.isfinite(number) else None


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


def scenario_from_run(run: Run) -> JsonObject:
    """The steps a run actually took (a free-play session's clicks), as a scenario to replay.

    Each ``step`` event is the validated step itself, so every field of every verb is kept.
    """
    steps: list[JsonValue] = []
    for event in run.events.filter(kind="step").order_by("seq"):
        step = {k: v for k, v in event.data.items() if k in Step.model_fields}
        step["at_ms"] = int(round(step.get("at_ms", event.data["t_ms"]) / 10) * 10)
        steps.append(step)
    scenario = {k: v for k, v in run.scenario.items() if k not in ("steps", "expect")}
    return {**scenario, "steps": steps}
