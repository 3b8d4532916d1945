"""The fields of an exported run, each with its check, and the words of a problem.

What :mod:`lockviz.runs.imports` accepts in a run from outside is what the lab records: each
event's fields and their types are read from its kind's model in :mod:`lockviz.lab.events`
(:func:`details`), and a verdict's from :class:`~lockviz.lab.verdicts.VerdictJson`
(:func:`verdict`); nothing is listed twice. Only the bounds a file from outside must keep on
the four fields of every event (:data:`REQUIRED`: a ``seq`` that fits the database, a time
within ten minutes of the start, names of 1 to 40 characters) are written here.

A check returns what is wrong with a value (``"must be a whole number, not text ("soon")"``),
a list of such problems for nested values, each with its own path, or None.
"""

from __future__ import annotations

import functools
import json
import math
import re
import types
from collections.abc import Callable, Mapping
from typing import Annotated, Literal, TypeGuard, Union, get_args, get_origin

from typing_extensions import get_type_hints, is_typeddict

from lockviz.lab import events, verdicts

MAX_SEQ = 2**31 - 1
MAX_T_MS = 600_000  # ten minutes: far beyond the longest run the lab allows

# ---- type checks: each returns what is wrong with a value, or None -----------------------------

Check = Callable[[object], "str | list[str] | None"]


def check(where: str, value: object, rule: Check, nullable: bool = True) -> list[str]:
    """What ``rule`` finds wrong with ``value``, each problem named by its path ``where``."""
    if value is None and nullable:
        return []
    found = rule(value)
    if found is None:
        return []
    if isinstance(found, str):
        return [f"{where}: {found}"]
    return [f"{where}{p}" for p in found]  # nested problems carry their own ".field: "


def is_int(v: object) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _is(ok: Callable[[object], bool], what: str) -> Check:
    return lambda v: None if ok(v) else must(what, v)


_text = _is(lambda v: isinstance(v, str), "text (a JSON string)")
boolean = _is(lambda v: isinstance(v, bool), "true or false")
_number = _is(is_number, "a number")
_whole = _is(is_int, "a whole number")
_text_or_number = _is(lambda v: isinstance(v, str) or is_number(v), "text or a number")


def texts(v: object) -> str | list[str] | None:
    if not isinstance(v, list):
        return must("a list of text", v)
    return [
        f"[{i}]: {must('text (a JSON string)', x)}"
        for i, x in enumerate(v)
        if not isinstance(x, str)
    ] or None


def _texts_by_name(v: object) -> str | None:
    """An object of names to text (the servers' addresses, their roles)."""
    if not isinstance(v, dict):
        return must("an object", v)
    bad = next((k for k, a in v.items() if not isinstance(a, str)), None)
    return None if bad is None else f"the value of {_quoted(bad)} must be text"


def _numbers_by_name(v: object) -> str | None:
    """An object of names to whole numbers (each holder's lease, in ms)."""
    if not isinstance(v, dict):
        return must("an object", v)
    bad = next((k for k, a in v.items() if not is_int(a)), None)
    return None if bad is None else f"the value of {_quoted(bad)} must be a whole number"


def _seq(v: object) -> str | None:
    if not isinstance(v, int) or isinstance(v, bool):
        return must("a whole number", v)
    return None if 1 <= v <= MAX_SEQ else f"must be from 1 to {MAX_SEQ}, not {v}"


def _t_ms(v: object) -> str | None:
    if not isinstance(v, int | float) or isinstance(v, bool) or not math.isfinite(v):
        return must("a number of milliseconds", v)
    return (
        None if abs(v) <= MAX_T_MS else f"must be within ±{MAX_T_MS} ms of the run's start, not {v}"
    )


def _name(v: object) -> str | None:
    if not isinstance(v, str):
        return must("text (a JSON string)", v)
    return None if 1 <= len(v) <= 40 else "must be 1 to 40 characters long"


REQUIRED: dict[str, Check] = {"seq": _seq, "t_ms": _t_ms, "actor": _name, "kind": _name}

# ---- checks derived from the event models -------------------------------------------------------


def _rule(annotation: object) -> tuple[Check, bool]:
    """The check of a value of this declared type, and whether it may be null."""
    if get_origin(annotation) is Annotated:
        return _rule(get_args(annotation)[0])
    if get_origin(annotation) in (Union, types.UnionType):
        kinds = tuple(a for a in get_args(annotation) if a is not type(None))
        nullable = len(kinds) < len(get_args(annotation))
        if len(kinds) > 1:
            return _TYPES[Union[kinds]], nullable  # noqa: UP007 (built at run time)
        return _rule(kinds[0])[0], nullable
    return _TYPES.get(annotation) or _shape(annotation), False


def _shape(annotation: object) -> Check:
    if is_typeddict(annotation):
        return _record(annotation)
    if get_origin(annotation) is list:
        item = get_args(annotation)[0]
        return texts if item is str else _list_of(_rule(item)[0])
    raise TypeError(f"no check for {annotation!r}: add one to lockviz.runs.fields")


_TYPES: dict[object, Check] = {
    str: _text,
    int: _whole,
    float: _number,
    bool: boolean,
    Union[int, float]: _number,  # noqa: UP007
    Union[str, int]: _text_or_number,  # noqa: UP007
    dict[str, str]: _texts_by_name,
    dict[str, int]: _numbers_by_name,
}


def _fields_of(record: object) -> dict[str, tuple[Check, bool, bool]]:
    """A TypedDict's fields: name -> (check, nullable, required)."""
    hints = get_type_hints(record)
    required: frozenset[str] = getattr(record, "__required_keys__", frozenset())
    return {name: (*_rule(hint), name in required) for name, hint in hints.items()}


def _record(record: object) -> Check:
    """An object whose fields have the types its TypedDict declares."""
    declared = _fields_of(record)

    def each(v: object) -> str | list[str] | None:
        if not isinstance(v, dict):
            return must("an object", v)
        problems = [
            f".{name}: required field is missing"
            for name, (_, _, required) in declared.items()
            if required and name not in v
        ]
        for name, (rule, nullable, _) in declared.items():
            if name in v:
                problems.extend(check(f".{name}", v[name], rule, nullable))
        return problems or None

    return each


def _list_of(rule: Check) -> Check:
    def each(v: object) -> str | list[str] | None:
        if not isinstance(v, list):
            return must("a list", v)
        problems: list[str] = []
        for i, item in enumerate(v):
            found = rule(item)
            if isinstance(found, str):
                problems.append(f"[{i}]: {found}")
            elif found:
                problems.extend(f"[{i}]{p}" for p in found)
        return problems or None

    return each


verdict = _record(verdicts.VerdictJson)


@functools.cache
def details(kind: str) -> dict[str, tuple[Check, bool, bool]] | None:
    """A kind's own fields (besides the four of every event): name -> (check, nullable,
    required), as its model in :mod:`lockviz.lab.events` declares them; None for no such
    kind."""
    model = events.KINDS.get(kind)
    if model is None:
        return None
    return {
        info.alias or name: (*_rule(info.annotation), info.is_required())
        for name, info in model.model_fields.items()
        if name not in events.BaseEvent.model_fields and get_origin(info.annotation) is not Literal
    }


def event(where: str, data: Mapping[str, object]) -> list[str]:
    """What is wrong with an event's own fields, for the kind it names."""
    kind = data.get("kind")
    declared = details(kind) if isinstance(kind, str) else None
    if declared is None:
        known = _name(kind) is None  # a kind that is not a name is refused as such already
        return [f"{where}.kind: {_quoted(kind)} is not a kind of event"] if known else []
    problems = [
        f"{where}.{name}: required field is missing (every {kind} event has it)"
        for name, (_, _, required) in declared.items()
        if required and name not in data
    ]
    for name, value in data.items():
        if name in declared:
            rule, nullable, _ = declared[name]
            problems.extend(check(f"{where}.{name}", value, rule, nullable))
        elif name not in REQUIRED:
            problems.append(f"{where}{name_path(name)}: a {kind} event has no such field")
    return problems


PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def name_path(name: str) -> str:
    """A field's name as a path: quoted when it could be read as something else (any name
    that is not plain ASCII: "Àttl_ms" must not pass for ttl_ms at a glance)."""
    plain = PLAIN_NAME.fullmatch(name) is not None and len(name) <= 40
    return f".{name}" if plain else f"[{json.dumps(name[:40])}]"


# ---- wording ----------------------------------------------------------------------------------


def kind_of(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a JSON array"
    if isinstance(v, str):
        return f"text ({_quoted(v)})"
    return f"the number {v}"


def _quoted(text: object) -> str:
    """Text from the file, quoted and cut short: a refusal must stay short to read."""
    text = str(text)
    return json.dumps(text[:20]) + ("…" if len(text) > 20 else "")


def must(what: str, v: object) -> str:
    return f"must be {what}, not {kind_of(v)}"
