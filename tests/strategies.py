"""Hypothesis strategies for hostile input: scenarios, exported runs and clicks.

Derived from the real format, so they follow it when it changes: field values come from the
scenario schema's own JSON Schema (``Scenario.model_json_schema()``: its bounds, enums and
lengths), verbs and their fields from ``lockviz.scenarios.verbs.VERBS``, backends, node names
and counts from ``lockviz.catalogue``, an exported run's event details from the event
models (``lockviz.lab.events``). Each valid value is then *mutated*: a key dropped, a value
swapped for any JSON (huge numbers, long or odd text, the wrong type, deep nesting), an unknown
key added, a list emptied or grown. The seeds are what users actually bring: the built-in
scenarios and exported runs of real runs (``tests/lockviz/data/``).

And the checks every refusal must pass: :func:`unnamed` says which problems do not start with
the path of a field of the input (``steps[3].ms: ...``, ``events[0].seq: ...``).

One module past the usual ~300 lines, on purpose: the three inputs share one mutation engine and
one set of checks, and a strategy is read beside the format it derives from.
"""

from __future__ import annotations

import copy
import json
import os
import re
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from lockviz.catalogue import BACKENDS
from lockviz.lab.events import KINDS
from lockviz.runs.fields import details
from lockviz.scenarios.schema import Scenario
from lockviz.scenarios.verbs import VERBS, WORDS, Target

ROOT = Path(__file__).resolve().parent.parent
BUILTIN = {
    path.stem: json.loads(path.read_text())
    for path in sorted((ROOT / "lockviz" / "scenarios" / "builtin").glob("*.json"))
}
EXPORTED = {
    path.stem: json.loads(path.read_text())
    for path in sorted((ROOT / "tests" / "lockviz" / "data").glob("*-run.json"))
}
SCHEMA = Scenario.model_json_schema()
DEFS = SCHEMA["$defs"]
# A few hundred cases per property in the test run; LOCKVIZ_FUZZ_EXAMPLES=5000 digs deeper.
# CI draws the same cases every time (a submission is not failed by a new draw); a developer's
# run draws new ones, and a failure prints the case that reproduces it.
FUZZ = settings(
    max_examples=int(os.environ.get("LOCKVIZ_FUZZ_EXAMPLES", "300")),
    derandomize=bool(os.environ.get("CI")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
LONGEST_PROBLEM = 600  # characters: a refusal quotes what it refuses, so it must stay short

# ---- any JSON at all ---------------------------------------------------------------------------

ODD_TEXT = st.sampled_from(
    ["", " ", "\n", "\x00", "\ud800", "é", "💥", "<script>alert(1)</script>", "{{ run }}",
     "a: b", "%%{init}%%", ";", "'", '"', "\\", "x" * 41, "y" * 5000, "lab", "storage",
     "redis-1", "alice", "-1", "1e309", "NaN"]
)  # fmt: skip
TEXT = st.text(max_size=24) | ODD_TEXT
NUMBERS = (
    st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, -1, 1, 2**31, 2**63, 10**30, -(10**30)])
    | st.floats(allow_nan=False, allow_infinity=False)
)
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
ANY_JSON: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(
    ["foo", "Foo Bar", "", "a: b", "x" * 300, "steps", "ms", "__proto__", "seq", "kind"]
) | st.text(max_size=12)


# ---- values derived from the schema ------------------------------------------------------------


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the JSON Schema ``schema`` admits, its bounds included (long text kept short)."""
    if "$ref" in schema:
        return from_schema(DEFS[schema["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in schema:
        return st.one_of([from_schema(s) for s in schema["anyOf"]])
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        low, high = schema.get("minItems", 0), schema.get("maxItems", 4)
        return st.lists(from_schema(schema["items"]), min_size=low, max_size=min(high, 4))
    if kind == "object":
        props = schema["properties"]
        required = set(schema.get("required", ()))
        return st.fixed_dictionaries(
            {k: from_schema(v) for k, v in props.items() if k in required},
            optional={k: from_schema(v) for k, v in props.items() if k not in required},
        )
    return _scalar(schema)


def _scalar(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high = schema.get("minimum"), schema.get("maximum")
        edges = [v for v in (low, high) if v is not None]
        return st.integers(low, high) | (st.sampled_from(edges) if edges else st.nothing())
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 40)
        return st.text(min_size=low, max_size=min(high, 20)) | st.just("x" * max(high, 1))
    raise AssertionError(f"no strategy for {schema}")


def beyond(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values just past the schema's bounds: one too many, one too long, one too far."""
    if "$ref" in schema:
        return beyond(DEFS[schema["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in schema:
        return st.one_of([beyond(s) for s in schema["anyOf"] if s.get("type") != "null"])
    found: list[Any] = []
    if "minimum" in schema:
        found.append(schema["minimum"] - 1)
    if "maximum" in schema:
        found.append(schema["maximum"] + 1)
    if "maxLength" in schema:
        found.append("z" * (schema["maxLength"] + 1))
    if "minLength" in schema and schema["minLength"] > 0:
        found.append("")
    if "maxItems" in schema:
        found.append(["a"] * (schema["maxItems"] + 1))
    if schema.get("minItems"):
        found.append([])
    if "enum" in schema or "const" in schema:
        found.append("neither")
    return st.sampled_from(found) if found else SCALARS


SCENARIO_FIELDS = SCHEMA["properties"]
STEP_FIELDS = DEFS["Step"]["properties"]


# ---- valid scenarios, then hostile ones -------------------------------------------------------

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """A scenario most of whose steps make sense: real backends, verbs, clients and nodes."""
    backend = BACKENDS[draw(st.sampled_from(sorted(BACKENDS)))]
    data: dict[str, Any] = {
        "format": 1,
        "title": draw(from_schema(SCENARIO_FIELDS["title"])),
        "backend": backend.name,
        "fencing": backend.fencing and draw(st.booleans()),
        "ttl_ms": draw(from_schema(SCENARIO_FIELDS["ttl_ms"])),
        "clients": draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True)),
    }
    count = None
    if backend.node_count_field is not None and draw(st.booleans()):
        count = data[backend.node_count_field] = draw(st.sampled_from(backend.node_counts))
    if draw(st.booleans()):
        data["variant"] = draw(st.sampled_from([v.name for v in backend.variants]))
    for name in ("description", "takeaway", "expect", "renew", "persistence"):
        if draw(st.integers(0, 3)) == 0:
            data[name] = draw(from_schema(SCENARIO_FIELDS[name]))
    servers = [*backend.nodes(count), "storage"]
    data["steps"] = draw(st.lists(steps(data["clients"], servers), min_size=1, max_size=6))
    return data


@st.composite
def steps(draw: st.DrawFn, clients: list[str], servers: list[str]) -> dict[str, Any]:
    """One step of a verb from the vocabulary, with its target and the fields it takes."""
    verb = VERBS[draw(st.sampled_from(sorted(VERBS)))]
    step: dict[str, Any] = {"at_ms": draw(st.integers(0, 5000)), "do": verb.name}
    if verb.targets == {Target.LINK}:
        step["client"] = draw(st.sampled_from(clients))
    elif Target.NODE in verb.targets and (Target.CLIENT not in verb.targets or draw(st.booleans())):
        step["node"] = draw(st.sampled_from(servers))
    else:
        step["client"] = draw(st.sampled_from(clients))
    for name in sorted(verb.required | {f for f in verb.optional if draw(st.booleans())}):
        if name == "nodes":
            step["nodes"] = draw(st.lists(st.sampled_from(servers), min_size=1, max_size=3))
        else:
            step[name] = draw(from_schema(STEP_FIELDS[name]))
    for name in sorted(WORDS):
        if draw(st.integers(0, 4)) == 0:
            step[name] = draw(from_schema(STEP_FIELDS[name]))
    return step


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value, as a tuple of keys and indexes (the root is ``()``)."""
    found = [prefix]
    if isinstance(value, dict):
        for key, inner in value.items():
            found += paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            found += paths(inner, (*prefix, i))
    return found


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


def _schema_of(path: tuple[Any, ...]) -> dict[str, Any] | None:
    """The JSON Schema of the scenario field at ``path``, when there is one."""
    schema: dict[str, Any] | None = SCHEMA
    for part in path:
        while schema is not None and ("$ref" in schema or "anyOf" in schema):
            if "$ref" in schema:
                schema = DEFS[schema["$ref"].rsplit("/", 1)[1]]
            else:
                schema = next((s for s in schema["anyOf"] if s.get("type") != "null"), None)
        if schema is None:
            return None
        if isinstance(part, int):
            schema = schema.get("items")
        else:
            schema = schema.get("properties", {}).get(part)
    return schema


@st.composite
def mutated(draw: st.DrawFn, base: Any, most: int = 3) -> Any:
    """``base`` with one to ``most`` hostile changes at random places inside it."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, most))):
        where = draw(st.sampled_from(paths(data)))
        target = _at(data, where)
        how = draw(st.sampled_from(["drop", "any", "beyond", "add", "empty", "grow", "swap"]))
        if how == "drop" and where:
            parent = _at(data, where[:-1])
            del parent[where[-1]]
        elif how == "add" and isinstance(target, dict):
            target[draw(KEYS)] = draw(ANY_JSON)
        elif how == "empty" and isinstance(target, list | dict):
            target.clear()
        elif how == "grow" and isinstance(target, list) and target:
            target.extend(copy.deepcopy(target[-1:]) * draw(st.integers(1, 600)))
        elif how == "swap" and isinstance(target, list) and len(target) > 1:
            i, j = draw(st.integers(0, len(target) - 1)), draw(st.integers(0, len(target) - 1))
            target[i], target[j] = target[j], target[i]
        elif where:
            schema = _schema_of(where) if how == "beyond" else None
            value = draw(beyond(schema)) if schema is not None else draw(ANY_JSON)
            _at(data, where[:-1])[where[-1]] = value
        else:
            data = draw(ANY_JSON)
    return data


def hostile_scenarios() -> st.SearchStrategy[Any]:
    """Scenarios as users bring them: built-in or generated, often broken somewhere."""
    seeds = st.sampled_from(list(BUILTIN.values())) | scenarios()
    return seeds | seeds.flatmap(mutated)


# ---- exported runs ----------------------------------------------------------------------------

DETAIL_VALUES = st.sampled_from(sorted({name for kind in KINDS for name in details(kind) or {}}))


@st.composite
def odd_events(draw: st.DrawFn) -> dict[str, Any]:
    """An event of any kind with any of the details the pages read, of any type."""
    event: dict[str, Any] = {
        "seq": draw(st.integers(1, 10**6)),
        "t_ms": draw(st.floats(-1000, 10**6, allow_nan=False)),
        "actor": draw(st.sampled_from(["lab", "alice", "redis-1", "storage", "zk-2", "x" * 40])),
        "kind": draw(
            st.sampled_from(["request", "reply", "granted", "paused", "resumed", "step", "note",
                             "run_started", "run_finished", "run_failed", "link", "crashed",
                             "clock_jumped", "expired", "deleted", "whatever"])
        ),
    }  # fmt: skip
    for name in draw(st.lists(DETAIL_VALUES, max_size=6, unique=True)):
        event[name] = draw(ANY_JSON)
    for name in draw(
        st.lists(
            st.sampled_from(
                [
                    "peers",
                    "validity_ms",
                    "value",
                    "why",
                    "by",
                    "state",
                    "text",
                    "interval_ms",
                    "persistence",
                    "jitter_ms",
                    "mode",
                    "rate",
                ]
            ),
            max_size=3,
        )
    ):
        event[name] = draw(ANY_JSON)  # fmt: skip
    if event["kind"] == "run_started" and draw(st.booleans()):
        event["servers"] = {"redis-1": "127.0.0.1:1"}
    return event


@st.composite
def hostile_runs(draw: st.DrawFn) -> Any:
    """An exported run, often broken: mutated anywhere, odd events spliced in, seqs renumbered."""
    run = copy.deepcopy(draw(st.sampled_from(list(EXPORTED.values()))))
    if draw(st.booleans()):
        run["scenario"] = draw(hostile_scenarios())
    if draw(st.booleans()):
        at = draw(st.integers(0, len(run["events"])))
        run["events"][at:at] = draw(st.lists(odd_events(), min_size=1, max_size=4))
        if draw(st.booleans()):
            for seq, event in enumerate(run["events"], start=1):
                event["seq"] = seq
    if draw(st.booleans()):
        verdict = run.get("verdict") or {}
        for name in draw(st.lists(st.sampled_from(sorted({*verdict, "liveness", "holders"})),
                                  max_size=3)):  # fmt: skip
            verdict[name] = draw(ANY_JSON)
    if draw(st.integers(0, 2)) == 0:
        return run
    return draw(mutated(run))


# ---- what a refusal must say ------------------------------------------------------------------

_PART = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_ROOT = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')


def split_problem(problem: str) -> tuple[str, str] | None:
    """(its field path as written, the rest): what a page sets apart as the field."""
    path = field_path(problem)
    if path is None:
        return None
    end = _path_end(problem)
    return problem[:end], problem[end + 2 :]


def _path_end(problem: str) -> int:
    found = _ROOT.match(problem)
    at = found.end() if found else 0
    while (more := _PART.match(problem, at)) is not None:
        at = more.end()
    return at


def field_path(problem: str) -> tuple[Any, ...] | None:
    """The path a problem starts with (``steps[3].ms: ...`` → ``("steps", 3, "ms")``)."""
    found = _ROOT.match(problem)
    if found is None:
        return None
    parts: list[Any] = []
    at = 0
    match: re.Match[str] | None = found
    while match is not None:
        name, index, quoted = match.groups()
        parts.append(name if name is not None else int(index) if index else json.loads(quoted))
        at = match.end()
        match = _PART.match(problem, at)
    return tuple(parts) if problem[at : at + 2] == ": " else None


def points_into(data: Any, path: tuple[Any, ...]) -> bool:
    """Whether ``path`` names a place in ``data``: every part but the last exists (the last may
    be a field that is missing, or one the verb does not take)."""
    for part in path[:-1]:
        found = isinstance(data, dict) and isinstance(part, str) and part in data
        found = found or (
            isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        )
        if not found:
            return False
        data = data[part]
    return True


def unnamed(problems: list[str], data: Any, roots: tuple[str, ...] = ()) -> list[str]:
    """The problems that do not name a field of ``data`` (or one of ``roots``: "file", "text"),
    or that are too long to read."""
    bad = []
    for problem in problems:
        path = field_path(problem)
        if len(problem) > LONGEST_PROBLEM or path is None:
            bad.append(problem)
        elif path[0] in roots and len(path) == 1:
            continue
        elif not points_into(data, path):
            bad.append(problem)
    return bad
