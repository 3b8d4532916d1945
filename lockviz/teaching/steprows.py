"""The step row editor: one step of a scenario as a row of form fields, shared by every page
that edits steps (What if…? forks, :mod:`lockviz.teaching.forks`; New scenario,
:mod:`lockviz.teaching.editor`).

A row is ``at_ms_<i>``, ``do_<i>``, ``who_<i>`` (a client or a server) and one input for each
field a verb may take. Which verb takes which field is the step vocabulary's
(:mod:`lockviz.scenarios.verbs`): :func:`verb_fields` hands it to the page's script, which shows
a row only the inputs its verb takes (static/lockviz/editor/step-rows.js), and :func:`step_of` keeps
only those. What is written here is how each field is *entered*: :data:`INPUTS` says whether it
is a number, a text, a choice or a tick box, and a test holds it to exactly the vocabulary's
fields. Numbers are read by free play's :func:`lockviz.teaching.play.step_from_form`, so a row
and a click say the same thing about a field that is not a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypedDict, get_args

from lockviz.errors import ScenarioError
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.scenarios.verbs import VERB_FIELDS, VERBS
from lockviz.teaching.play import Posted, step_from_form

# A row's form fields but its tick box, in the page's order (INPUTS' order after at, do, who).
Text = Literal[
    "at_ms", "do", "who", "ms", "value", "nodes", "timeout_ms", "ttl_ms", "jitter_ms", "rate",
    "key", "mode",
]  # fmt: skip
Field = Literal[Text, "check_lease"]


@dataclass(frozen=True)
class Input:
    """How a row enters one of a verb's fields."""

    name: Field  # the step's field
    label: str  # the words before the input
    kind: str  # "number", "text", "choice" or "check"
    unit: str = ""  # the words after it ("ms")
    choices: tuple[str, ...] = ()  # a choice's options (a blank one comes first)
    hint: str = ""  # a text's placeholder
    size: int = 6
    maxlength: int = 200


INPUTS: tuple[Input, ...] = (
    Input("ms", "ms", "number", "ms"),
    Input("value", "value", "text", size=4),
    Input("nodes", "nodes", "text", hint="redis-1, storage", size=10),
    Input("timeout_ms", "timeout", "number", "ms"),
    Input("ttl_ms", "new lease", "number", "ms"),
    Input("jitter_ms", "jitter", "number", "ms"),
    Input("rate", "clock rate", "text", "×", hint="0.5", size=4, maxlength=12),
    Input("key", "key", "text", size=6, maxlength=64),
    Input("mode", "mode", "choice", choices=("blackhole", "reset")),
    Input("check_lease", "checks its lease first", "check"),
)
EDITED = frozenset(i.name for i in INPUTS)  # a verb's own fields that a row can edit
assert EDITED == VERB_FIELDS, "every field a verb takes has its input here, and no other"
TEXTS: tuple[Text, ...] = get_args(Text)
FIELDS: tuple[Field, ...] = get_args(Field)  # a row's form fields, in order
assert ("at_ms", "do", "who", *(i.name for i in INPUTS)) == FIELDS, "a row's fields are INPUTS'"


class Cell(TypedDict):
    """One of a row's inputs with its value, as templates/lockviz/_step_row.html shows it."""

    input: Input
    value: JsonValue


class Row(TypedDict):
    """A step as a row of the form: each field as the step held it (a posted row: as text)."""

    at_ms: JsonValue
    do: JsonValue
    who: JsonValue
    ms: JsonValue
    value: JsonValue
    nodes: JsonValue  # the servers, comma-separated
    timeout_ms: JsonValue
    ttl_ms: JsonValue
    jitter_ms: JsonValue
    rate: JsonValue
    key: JsonValue
    mode: JsonValue
    check_lease: bool
    cells: list[Cell]  # :func:`shown`


def verb_fields() -> dict[str, list[str]]:
    """Each verb with the fields its row shows: what the page hands its script."""
    return {name: sorted(verb.fields) for name, verb in VERBS.items()}


def blank() -> Row:
    """A row with nothing in it: a step to add."""
    return shown(
        Row(at_ms="", do="", who="", ms="", value="", nodes="", timeout_ms="", ttl_ms="",
            jitter_ms="", rate="", key="", mode="", check_lease=False, cells=[])
    )  # fmt: skip


def shown(row: Row) -> Row:
    """The row with its ``cells``: each field's input and value, in the order the page shows
    them (templates/lockviz/_step_row.html)."""
    row["cells"] = [Cell(input=entry, value=row[entry.name]) for entry in INPUTS]
    return row


def row_of(step: Mapping[str, JsonValue]) -> Row:
    """A step's row, as the form shows it."""
    row = blank()
    for name in TEXTS:
        if name in step:
            row[name] = step[name]
    row["who"] = step.get("client") or step.get("node") or ""
    nodes = step.get("nodes") or []
    row["nodes"] = ", ".join(str(n) for n in nodes) if isinstance(nodes, list) else str(nodes)
    row["check_lease"] = bool(step.get("check_lease"))
    return shown(row)


def posted(form: Posted, i: int) -> Row:
    """Row ``i`` as it was posted, so a refused form comes back as the learner left it."""
    row = blank()
    for name in TEXTS:
        row[name] = str(form.get(f"{name}_{i}") or "")[:200]
    row["check_lease"] = bool(form.get(f"check_lease_{i}"))
    return shown(row)


def filled(form: Posted, i: int) -> bool:
    """Whether row ``i`` says what to do (a row without a verb is a blank one, skipped)."""
    return bool(str(form.get(f"do_{i}") or "").strip())


def step_of(
    form: Posted,
    i: int,
    clients: Sequence[str],
    servers: Sequence[str],
    among: str = "this scenario",
) -> JsonObject:
    """Row ``i`` as a step dict (only the fields its verb takes, numbers read), or
    :class:`ScenarioError` naming each field that is wrong (a "who" that is not in ``among``).
    The schema checks the rest."""

    def get(name: str) -> str:
        return str(form.get(f"{name}_{i}") or "").strip()

    who = get("who")
    if who and who not in (*clients, *servers):
        known = ", ".join((*clients, *servers))
        raise ScenarioError([f"who: {who[:20]!r} is not in {among}; choose one of {known}"])
    fields: dict[str, str] = {"do": get("do")}
    if who:
        fields["client" if who in clients else "node"] = who
    for entry in INPUTS:
        if entry.kind == "check":
            if form.get(f"{entry.name}_{i}"):
                fields[entry.name] = "on"
        elif get(entry.name):
            fields[entry.name] = get(entry.name)
    step = step_from_form(fields)  # numbers read, fields the verb does not take dropped
    raw = get("at_ms")
    try:
        step["at_ms"] = int(raw)
    except ValueError:
        said = repr(raw[:20]) if raw else "nothing"
        raise ScenarioError([f"at_ms: {said} is not a whole number of milliseconds"]) from None
    return step
