"""The fields of an exported run, each with its check, and the words of a problem.

One table (:data:`REQUIRED` for the four fields of every event, :data:`DETAILS` for the details
the diagram, the replay and the verdict read, :data:`VERDICT` for a verdict's) holds everything
:mod:`lockviz.runs.imports` accepts in a run from outside. A check returns what is wrong with a
value (``"must be a whole number, not text ("soon")"``), a list of such problems for nested
values, each with its own path, or None.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

MAX_SEQ = 2**31 - 1
MAX_T_MS = 600_000  # ten minutes: far beyond the longest run the lab allows

# ---- type checks: each returns what is wrong with a value, or None -----------------------------

Check = Callable[[Any], "str | list[str] | None"]


def check(where: str, value: Any, rule: Check, nullable: bool = True) -> list[str]:
    """What ``rule`` finds wrong with ``value``, each problem named by its path ``where``."""
    if value is None and nullable:
        return []
    found = rule(value)
    if found is None:
        return []
    if isinstance(found, str):
        return [f"{where}: {found}"]
    return [f"{where}{p}" for p in found]  # nested problems carry their own ".field: "


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def is_number(v: Any) -> bool:
    return (is_int(v) or isinstance(v, float)) and math.isfinite(v)


def _is(ok: Callable[[Any], bool], what: str) -> Check:
    return lambda v: None if ok(v) else must(what, v)


_text = _is(lambda v: isinstance(v, str), "text (a JSON string)")
boolean = _is(lambda v: isinstance(v, bool), "true or false")
_number = _is(is_number, "a number")
_whole = _is(is_int, "a whole number")
_text_or_number = _is(lambda v: isinstance(v, str) or is_number(v), "text or a number")


def texts(v: Any) -> str | list[str] | None:
    if not isinstance(v, list):
        return must("a list of text", v)
    return [
        f"[{i}]: {must('text (a JSON string)', x)}"
        for i, x in enumerate(v)
        if not isinstance(x, str)
    ] or None


def _text_or_texts(v: Any) -> str | list[str] | None:
    return None if isinstance(v, str) else texts(v)


def _addresses(v: Any) -> str | None:
    if not isinstance(v, dict):
        return must("an object", v)
    bad = next((k for k, a in v.items() if not isinstance(a, str)), None)
    return None if bad is None else f"the address of {_quoted(bad)} must be text"


def _seq(v: Any) -> str | None:
    if not is_int(v):
        return must("a whole number", v)
    return None if 1 <= v <= MAX_SEQ else f"must be from 1 to {MAX_SEQ}, not {v}"


def _t_ms(v: Any) -> str | None:
    if not is_number(v):
        return must("a number of milliseconds", v)
    return (
        None if abs(v) <= MAX_T_MS else f"must be within ±{MAX_T_MS} ms of the run's start, not {v}"
    )


def _name(v: Any) -> str | None:
    if not isinstance(v, str):
        return must("text (a JSON string)", v)
    return None if 1 <= len(v) <= 40 else "must be 1 to 40 characters long"


def _objects(fields: dict[str, Check], required: tuple[str, ...] = ()) -> Check:
    """A list of objects whose named fields have these types."""

    def each(v: Any) -> str | list[str] | None:
        if not isinstance(v, list):
            return must("a list", v)
        problems = []
        for i, item in enumerate(v):
            if not isinstance(item, dict):
                problems.append(f"[{i}]: {must('an object', item)}")
                continue
            problems.extend(
                f"[{i}].{name}: required field is missing" for name in required if name not in item
            )
            for name, inner in fields.items():
                if name in item:
                    optional = name not in required
                    problems.extend(check(f"[{i}].{name}", item[name], inner, optional))
        return problems or None

    return each


def verdict(v: Any) -> str | list[str] | None:
    if not isinstance(v, dict):
        return must("an object (or null)", v)
    problems: list[str] = []
    for name, inner in VERDICT.items():
        if name in v:
            problems.extend(check(f".{name}", v[name], inner))
    return problems or None


REQUIRED: dict[str, Check] = {"seq": _seq, "t_ms": _t_ms, "actor": _name, "kind": _name}
VERDICT: dict[str, Check] = {
    "mutual_exclusion": _text,
    "summary": _text,
    "inconclusive": _text,
    "stuck_clients": texts,  # the findings list them by name
    "data_corrupted": boolean,
    "stale_writes_accepted": _whole,
    "stale_writes_rejected": _whole,
    "overlaps": _objects(
        {"clients": texts, "start_ms": _number, "end_ms": _number},
        ("clients", "start_ms", "end_ms"),
    ),
    "writes": _objects({"seq": _whole, "client": _text, "accepted": boolean, "stale": boolean}),
}
# The details of docs/events.md that the diagram, the replay and the verdict read.
DETAILS: dict[str, Check] = {
    **{name: _text for name in ("to", "from", "op", "reason", "error", "holder", "say", "title",
                                "backend", "variant", "storage", "do", "client", "what",
                                "fixed", "fixed_by", "moved")},
    **{name: _number for name in ("ttl_ms", "ms", "offset_ms", "duration_ms", "highest",
                                  "late_ms", "shift_ms", "due_ms", "fixed_ms", "moved_from_ms",
                                  "moved_to_ms")},
    **{name: boolean for name in ("ok", "accepted", "fencing", "unsafe", "expect_met", "kept")},
    "index": _whole,
    "call": _text_or_number,
    "token": _text_or_number,
    "key": _text_or_number,  # a Redis key is text, a PostgreSQL advisory lock's key a number
    "clients": texts,
    "nodes": texts,
    "mismatches": texts,
    "node": _text_or_texts,
    "servers": _addresses,
    "verdict": verdict,
}  # fmt: skip


# ---- wording ----------------------------------------------------------------------------------


def kind_of(v: Any) -> str:
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


def _quoted(text: str) -> str:
    """Text from the file, quoted and cut short: a refusal must stay short to read."""
    return json.dumps(text[:20]) + ("…" if len(text) > 20 else "")


def must(what: str, v: Any) -> str:
    return f"must be {what}, not {kind_of(v)}"
