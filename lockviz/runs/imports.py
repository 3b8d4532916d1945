"""Reading an imported file: a scenario (format 1) or an exported run, or every reason why not.

Pure: bytes or text in, a value or :class:`ImportRefused` out, never a traceback. Each problem
names the field that causes it (``events[12].seq: must be greater than the previous (11)``),
like the scenario schema does, so the import page can list them next to the pasted text.

An exported run (``/runs/<id>/export.json``) is ``{"run_id", "scenario", "status", "verdict",
"expect_met", "events"}``. Its events are checked for what the replay and the diagram rely on:
the four fields of every event (docs/events.md), strictly increasing ``seq``, and the type of
each detail the page reads (narration is text, a verdict's overlaps are a list, ...). Details
the page does not read are kept as they are.

The check of each field of an exported run, and the words of a problem, are in
:mod:`lockviz.runs.fields`: what the app accepts from outside is reviewed in one table.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from lockviz import jsontext, plaintext
from lockviz.errors import ImportRefused, JsonRefused, ScenarioError
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.lab import events as event_models
from lockviz.lab.events import EventJson
from lockviz.runs import fields
from lockviz.scenarios.schema import STEP_PATH, Scenario, parse

MAX_BYTES = 5 * 1024 * 1024
MAX_EVENTS = 20_000
MAX_PROBLEMS = 30


@dataclass(frozen=True)
class ImportedScenario:
    scenario: Scenario


@dataclass(frozen=True)
class ImportedRun:
    scenario: Scenario
    events: list[EventJson]  # each one parsed into its kind's model, as it was
    verdict: JsonObject | None
    expect_met: bool | None = None
    mismatches: list[str] = field(default_factory=list)
    error: str = ""  # why the run failed, if it did

    @property
    def finished(self) -> bool:
        return not self.error


def read(data: bytes | str, where: str = "file") -> ImportedScenario | ImportedRun:
    """What the file (or pasted ``text``) holds, or :class:`ImportRefused`."""
    decoded = decode(data, where)
    if not isinstance(decoded, dict):
        raise ImportRefused(
            [
                f"{where}: holds {fields.kind_of(decoded)}; it must be a JSON object: a scenario "
                '({"format": 1, ...}) or an exported run ({"scenario": ..., "events": [...]})'
            ]
        )
    if "events" in decoded or "scenario" in decoded:
        return _run(decoded)
    try:
        return ImportedScenario(parse(decoded))
    except ScenarioError as exc:
        raise ImportRefused(_cap(every_problem(decoded, exc.problems))) from None


def decode(data: bytes | str, where: str = "file") -> JsonValue:
    """JSON text to Python values; any reason it is not JSON becomes a named problem."""
    size = len(data.encode() if isinstance(data, str) else data)
    if size > MAX_BYTES:
        raise ImportRefused([f"{where}: {_mb(size)} is too big; the most is {_mb(MAX_BYTES)}"])
    if isinstance(data, bytes):
        if b"\0" in data[:8192]:
            raise ImportRefused([f"{where}: this is a binary file, not JSON text"])
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportRefused(
                [f"{where}: not UTF-8 text (byte {data[exc.start]:#04x} at position {exc.start})"]
            ) from None
    if not data.strip():
        raise ImportRefused(
            [f"{where}: it is empty; paste or upload a scenario or an exported run"]
        )
    try:  # depth, NaN, Infinity, an integer of thousands of digits: lockviz.jsontext
        decoded = jsontext.loads(data, max_bytes=MAX_BYTES, where=where)
    except JsonRefused as exc:
        raise ImportRefused(exc.problems) from None
    if "\\u0000" in data or "\x00" in data:  # PostgreSQL stores neither (lockviz.plaintext)
        raise ImportRefused([f"{where}: {plaintext.problem(chr(0), lines=True)}"])
    return _without_lone_surrogates(decoded) if _SURROGATE_ESCAPE.search(data) else decoded


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_lone_surrogates(value: JsonValue) -> JsonValue:
    """JSON may spell half a UTF-16 pair (``"\\ud800"``): no page can be encoded with one in it,
    so each becomes U+FFFD, as a form's undecodable bytes do. Iterative: the nesting is deep."""

    def text(v: str) -> str:
        return _LONE_SURROGATE.sub("\ufffd", v)

    def fix(v: JsonValue) -> JsonValue:
        return text(v) if isinstance(v, str) else v

    value = fix(value)
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            for key in list(item):
                inner = item.pop(key)
                item[text(key)] = fix(inner)
                todo.append(item[text(key)])
        elif isinstance(item, list):
            item[:] = [fix(v) for v in item]
            todo.extend(item)
    return value


def _run(data: JsonObject) -> ImportedRun:
    problems: list[str] = []
    scenario = None
    if "scenario" not in data:
        problems.append("scenario: required field is missing (the scenario the run ran)")
    else:
        try:
            scenario = parse(data["scenario"])
        except ScenarioError as exc:
            found = every_problem(data["scenario"], exc.problems)
            problems.extend(_inside("scenario", p) for p in found)
    events = data.get("events")
    parsed: list[event_models.Event] = []  # each event's model, as _events read it
    if not isinstance(events, list):
        problems.append(
            "events: required field is missing"
            if events is None
            else f"events: {fields.must('a list', events)}"
        )
    elif not events:
        problems.append("events: the run has no events")
    elif len(events) > MAX_EVENTS:
        problems.append(f"events: {len(events)} events; the most is {MAX_EVENTS}")
    else:
        parsed, wrong = _events(events)
        problems.extend(wrong)
    verdict, expect_met, mismatches = (data.get(k) for k in ("verdict", "expect_met", "mismatches"))
    problems.extend(fields.check("verdict", verdict, fields.verdict))
    problems.extend(fields.check("expect_met", expect_met, fields.boolean))
    problems.extend(fields.check("mismatches", mismatches, fields.texts))
    if problems or scenario is None:
        raise ImportRefused(_cap(problems))
    failed = next((e for e in parsed if isinstance(e, event_models.RunFailed)), None)
    error = ""
    if failed is not None:
        error = failed.error or "the run failed"
    elif verdict is None:
        error = "imported without a verdict: the run had not finished when it was exported"
    return ImportedRun(
        scenario=scenario,
        events=[event_models.as_json(e) for e in parsed],
        verdict=verdict if isinstance(verdict, dict) else None,
        expect_met=expect_met if isinstance(expect_met, bool) else None,
        mismatches=[str(m) for m in mismatches] if isinstance(mismatches, list) else [],
        error=error,
    )


def _inside(field: str, problem: str) -> str:
    """A problem of a nested value, named by its path from the file's top."""
    if problem.startswith(f"{field}: "):
        return problem
    return f"{field}{'' if problem.startswith('[') else '.'}{problem}"


def _events(items: list[JsonValue]) -> tuple[list[event_models.Event], list[str]]:
    """Each event read into its model, and every problem (named by its place)."""
    problems: list[str] = []
    models: list[event_models.Event] = []
    previous: int | None = None
    for i, event in enumerate(items):
        where, before = f"events[{i}]", len(problems)
        if not isinstance(event, dict):
            problems.append(f"{where}: {fields.must('an object', event)}")
            previous = None
            continue
        for name, check in fields.REQUIRED.items():
            if name not in event:
                problems.append(f"{where}.{name}: required field is missing")
            else:
                problems.extend(fields.check(f"{where}.{name}", event[name], check, nullable=False))
        seq = event.get("seq")
        if isinstance(seq, int) and previous is not None and seq <= previous:
            problems.append(f"{where}.seq: must be greater than the previous ({previous})")
        previous = seq if fields.is_int(seq) else None
        found = fields.event(where, event)
        if not found and len(problems) == before:
            model, found = _parsed(where, event)
            if model is not None:
                models.append(model)
        problems.extend(found)
        if len(problems) > MAX_PROBLEMS:
            break
    return models, problems


def _parsed(where: str, event: Mapping[str, object]) -> tuple[event_models.Event | None, list[str]]:
    """The event's model, or what it still finds wrong once every field has passed its own
    check (a bound a model keeps beyond the field's type), named by its path like the rest."""
    try:
        return event_models.parse(event), []
    except ValidationError as exc:
        return None, [f"{where}{_said(e)}" for e in exc.errors()]


def _said(error: ErrorDetails) -> str:
    """A model's error as the field checks say theirs: its path (a name that is not plain
    quoted, ``["Foo Bar"]``), and "no such field" for a field the model does not take."""
    path = "".join(
        fields.name_path(p) if isinstance(p, str) else f"[{p}]" for p in error["loc"][1:]
    )
    return f"{path}: " + ("no such field" if error["type"] == "extra_forbidden" else error["msg"])


def _mb(size: int) -> str:
    return f"{size / 1024 / 1024:.1f}".removesuffix(".0") + " MB"


# ---- a scenario's problems, all of them, each with the value that causes it ----------------


def every_problem(data: object, problems: list[str]) -> list[str]:
    """All of a scenario's problems, each quoting its value (``at_ms: … (got "soon")``).

    The schema stops at the first kind of problem: a value of the wrong type hides the checks
    that need the whole scenario (an unknown client, a verb that does not exist). So the steps
    with such a value are set aside and the rest is checked again, and what that finds is
    named by the steps' own numbers.
    """
    found = [_with_value(data, p) for p in problems]
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        return found
    bad = {int(m.group(1)) for p in problems if (m := STEP_PATH.match(p))}
    if not bad or any(not STEP_PATH.match(p) for p in problems):
        return found  # nothing set aside, or a scenario-wide problem the rest depends on
    keep = [i for i in range(len(data["steps"])) if i not in bad]
    try:
        parse({**data, "steps": [data["steps"][i] for i in keep]}, allow_empty=True)
    except ScenarioError as exc:
        for p in exc.problems:
            named = STEP_PATH.sub(lambda m: f"steps[{keep[int(m.group(1))]}]", p)
            if named not in found:
                found.append(_with_value(data, named))
    return found


def _with_value(data: object, problem: str) -> str:
    """The problem with the offending value quoted, unless it says it already."""
    where, _, message = problem.partition(": ")
    value = data
    for part in re.findall(r"[^.\[\]]+", where):
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return problem
    if isinstance(value, dict | list) or not message:
        return problem
    shown = json.dumps(value)
    if shown in message or repr(value) in message:
        return problem
    return f"{problem} (got {shown if len(shown) <= 60 else shown[:59] + '…'})"


def _cap(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return [*problems[:MAX_PROBLEMS], f"… and more problems after these {MAX_PROBLEMS}"]
