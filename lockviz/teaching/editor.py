"""New scenario: a scenario written in the browser, checked as it is typed, and its link.

The editor's form holds the scenario's settings (title, lock service with its variant, node
count and own options, storage kind, clients, lease) and its steps as rows of the shared row
editor (:mod:`lockviz.teaching.steprows`). :func:`from_form` turns the form into a
:class:`Draft`: the scenario, validated by the schema like any other, or every problem named by
what the learner sees — a setting by its field, a step by its row (``step 2 (pause): ms: a
pause must last more than 0 ms``).

A scenario travels as a link, ``/scenarios/new/?s=<code>``: :func:`encode` is the scenario's
compact JSON (no field left at its default) as UTF-8 in unpadded base64url, at most
:data:`MAX_LINK` characters; :func:`decode` reverses it and names why a code cannot be read.
:func:`form_of` fills the editor's form from any scenario (a link's, a built-in's): what the
editor has no field for (a built-in's narration, checkpoints and prediction) is left out, and
:attr:`Draft.left_out` says so.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from lockviz.catalogue import BACKENDS, STORAGE, STORAGE_KINDS
from lockviz.errors import ImportRefused, ScenarioError
from lockviz.jsontypes import JsonObject, JsonValue
from lockviz.runs import imports
from lockviz.scenarios.schema import STEP_PATH, Scenario, parse
from lockviz.teaching import steprows
from lockviz.teaching.play import Posted
from lockviz.teaching.steprows import Row

MAX_ROWS = 60  # the editor's rows; a longer scenario is written as a file (docs/scenarios.md)
MAX_LINK = 8000  # characters of a link's code: a scenario of ~60 steps, a URL every server takes
CODE = re.compile(r"^[A-Za-z0-9_-]*$")
DEFAULTS = {"title": "My scenario", "backend": "redis", "storage": "fenced", "ttl_ms": "2000"}
DEFAULT_CLIENTS = "alice, bob"
# The settings each backend has a field for: its variant, its node count, its own options.
WHOLE = ("ttl_ms", "node_timeout_ms", "idle_session_timeout_ms")
LABELS = {"ttl_ms": "lease (ttl_ms)", "clients": "clients", "storage": "storage"}
# The editor's form fields as shown: each a text, or a tick box's state. Its settings are the
# fields of :func:`settings_of` (a backend's own, ``variant_<backend>`` and ``count_<backend>``,
# for every backend); a form from :func:`form_of` holds each row's fields too (``do_0``...).
Form = dict[str, str | bool]


@dataclass(frozen=True)
class Draft:
    """The editor's form as the learner left it, and what the server makes of it."""

    settings: Form  # the settings' fields as shown (see :func:`settings_of`)
    rows: list[Row]  # the rows as shown (steprows)
    scenario: Scenario | None = None  # when it is valid
    problems: list[str] = field(default_factory=list)  # every problem, each named
    row_problems: dict[int, list[str]] = field(default_factory=dict)  # by row index
    left_out: list[str] = field(default_factory=list)  # what a filled-in scenario lost

    @property
    def actors(self) -> list[str]:
        """Who a row's step may name: the clients, then the servers."""
        return [*_clients(self.settings), *_servers(self.settings)]

    def compact(self) -> JsonObject | None:
        """The valid scenario as its link and its file hold it (nothing at its default)."""
        return compact(self.scenario) if self.scenario is not None else None


def compact(scenario: Scenario) -> JsonObject:
    found: JsonObject = scenario.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    found.pop("fencing", None)  # "storage" says it
    return {"format": 1, **found}


def encode(data: Mapping[str, JsonValue]) -> str:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return base64.urlsafe_b64encode(text.encode()).rstrip(b"=").decode()


def decode(code: str) -> JsonObject:
    """A link's scenario as decoded JSON (not yet validated), or :class:`ScenarioError`."""
    if len(code) > MAX_LINK:
        raise ScenarioError(
            [f"link: the scenario in this link is {len(code)} characters long; the most a link "
             f"may hold is {MAX_LINK} (a longer scenario travels as a file: Import)"]
        )  # fmt: skip
    if not CODE.match(code):
        raise ScenarioError(["link: the scenario code holds characters base64url never has"])
    try:
        text = base64.urlsafe_b64decode(code + "=" * (-len(code) % 4)).decode()
        data = imports.decode(text, "link")  # as an import reads JSON: NUL, NaN, nesting named
    except (binascii.Error, ValueError):
        raise ScenarioError(
            ["link: the scenario code is cut short or altered: it is not base64url JSON"]
        ) from None
    except ImportRefused as exc:  # "link: not valid JSON: ..." and what else an import names
        broken = "link: the scenario code is cut short or altered: not valid JSON"
        raise ScenarioError(
            [p.replace("link: not valid JSON", broken) for p in exc.problems]
        ) from None
    if not isinstance(data, dict):
        raise ScenarioError(["link: the scenario code holds no JSON object"])
    return data


def form_of(data: Mapping[str, JsonValue]) -> tuple[Form, list[str]]:
    """A scenario's fields as the editor's form holds them, and what the editor left out."""
    backend = str(data.get("backend") or DEFAULTS["backend"])[:40]
    form: Form = {
        "title": str(data.get("title") or DEFAULTS["title"])[:120],
        "description": str(data.get("description") or "")[:2000],
        "backend": backend,
        "storage": str(
            data.get("storage") or ("plain" if data.get("fencing") is False else "fenced")
        ),
        "ttl_ms": str(data.get("ttl_ms", DEFAULTS["ttl_ms"]))[:12],
        "clients": ", ".join(str(c)[:40] for c in _list(data.get("clients"))[:12]),
        "renew": bool(data.get("renew")),
        "fsync": data.get("persistence") == "fsync",
    }
    service = BACKENDS.get(backend)
    if service is not None:
        form[f"variant_{backend}"] = str(data.get("variant") or service.default_variant)[:40]
        if service.node_count_field:
            form[f"count_{backend}"] = str(data.get(service.node_count_field) or "")[:4]
    for option in ("node_timeout_ms", "idle_session_timeout_ms"):
        if data.get(option) is not None:
            form[option] = str(data.get(option))[:12]
    steps = [s for s in _list(data.get("steps")) if isinstance(s, dict)]
    left_out = [name for key, name in (("expect", "the prediction (expect)"),
                                       ("takeaway", "the takeaway")) if data.get(key)]  # fmt: skip
    told = sum(1 for s in steps[:MAX_ROWS] if s.get("say") or s.get("ask"))
    if told:
        left_out.append(f"the narration or checkpoint of {told} step{'s' if told > 1 else ''}")
    if len(steps) > MAX_ROWS:
        left_out.append(f"{len(steps) - MAX_ROWS} steps after the first {MAX_ROWS}")
    for i, step in enumerate(steps[:MAX_ROWS]):
        row = steprows.row_of({k: v for k, v in step.items() if isinstance(k, str)})
        for name in steprows.FIELDS:
            value = row[name]
            form[f"{name}_{i}"] = value if isinstance(value, bool) else str(value)[:200]
    form["rows"] = str(max(len(steps[:MAX_ROWS]), 1))
    return form, left_out


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def settings_of(form: Posted) -> Form:
    """The settings' fields as posted (each cut to its bound), defaults where none is given."""
    found: Form = {}
    for name in ("title", "backend", "storage", "ttl_ms"):
        found[name] = str(form.get(name) or DEFAULTS[name]).strip()[:120]
    found["description"] = str(form.get("description") or "")[:2000]
    found["clients"] = str(form.get("clients") or "").strip()[:200] or DEFAULT_CLIENTS
    found["renew"] = bool(form.get("renew"))
    found["fsync"] = bool(form.get("fsync"))
    for name, service in BACKENDS.items():
        found[f"variant_{name}"] = str(form.get(f"variant_{name}") or service.default_variant)[:40]
        found[f"count_{name}"] = str(form.get(f"count_{name}") or "")[:4]
    for option in ("node_timeout_ms", "idle_session_timeout_ms"):
        found[option] = str(form.get(option) or "").strip()[:12]
    return found


def _clients(settings: Form) -> list[str]:
    return [c.strip() for c in str(settings["clients"]).split(",") if c.strip()][:12]


def _count(settings: Form) -> int | None:
    raw = str(settings.get(f"count_{settings['backend']}") or "")
    return int(raw) if raw.isdigit() else None


def _servers(settings: Form) -> list[str]:
    kind = STORAGE_KINDS.get(str(settings.get("storage") or ""))
    storages = list(kind.replicas) if kind is not None else [STORAGE]
    service = BACKENDS.get(str(settings["backend"]))
    if service is None:
        return storages
    count = _count(settings)
    return [*service.nodes(count if count in service.node_counts else None), *storages]


def from_form(form: Posted) -> Draft:
    """The editor's form as a :class:`Draft`: the scenario, or every problem by its name."""
    settings = settings_of(form)
    try:
        count = min(int(str(form.get("rows") or 0)[:6]), MAX_ROWS)
    except ValueError:
        count = 0
    rows = [steprows.posted(form, i) for i in range(max(count, 0))]
    data, problems = _scenario_data(settings)
    clients, servers = _clients(settings), _servers(settings)
    row_problems: dict[int, list[str]] = {}
    steps: list[JsonValue] = []
    where: list[int] = []  # each step's row
    for i in range(len(rows)):
        if not steprows.filled(form, i):
            continue
        try:
            steps.append(steprows.step_of(form, i, clients, servers))
            where.append(i)
        except ScenarioError as exc:
            row_problems.setdefault(i, []).extend(exc.problems)
    data["steps"] = steps
    scenario = None
    try:
        parsed = parse(data)
    except ScenarioError as exc:
        for problem in exc.problems:
            found = STEP_PATH.match(problem)
            if found and int(found.group(1)) < len(where):
                rest = problem[found.end() :].lstrip(".")
                row_problems.setdefault(where[int(found.group(1))], []).append(rest)
            elif problem == "steps: a scenario needs at least one step":
                problems.append("steps: add a step (choose what it does in a row's “do”)")
            else:
                problems.append(_setting(problem))
    else:
        scenario = parsed if not problems and not row_problems else None
    named = [f"{_row_name(i, rows[i])}: {p}" for i in sorted(row_problems) for p in row_problems[i]]
    return Draft(settings, rows, scenario, problems + named, row_problems)


def _scenario_data(settings: Form) -> tuple[JsonObject, list[str]]:
    """The scenario's settings as the schema takes them, and the numbers that are not numbers."""
    backend = str(settings["backend"])
    data: JsonObject = {"format": 1, "title": settings["title"], "backend": backend}
    if settings["description"]:
        data["description"] = settings["description"]
    data.update(storage=settings["storage"], clients=[*_clients(settings)])
    problems: list[str] = []
    service = BACKENDS.get(backend)
    options = service.options if service is not None else frozenset()
    for name in WHOLE:
        raw = str(settings.get(name) or "")
        if not raw or (name != "ttl_ms" and name not in options):
            continue  # an option of another backend: its field is hidden, and not sent
        try:
            data[name] = int(raw)
        except ValueError:
            problems.append(f"{LABELS.get(name, name)}: {raw[:20]!r} is not a whole number of ms")
    if service is not None:
        if settings[f"variant_{backend}"] != service.default_variant:
            data["variant"] = settings[f"variant_{backend}"]
        count = _count(settings)
        if service.node_count_field and count is not None:
            data[service.node_count_field] = count
    if settings["renew"]:
        data["renew"] = True
    if settings["fsync"]:
        data["persistence"] = "fsync"
    return data, problems


def _setting(problem: str) -> str:
    name, sep, rest = problem.partition(": ")
    label = LABELS.get(name.split("[")[0])
    return f"{label}{name[len(name.split('[')[0]) :]}: {rest}" if sep and label else problem


def _row_name(i: int, row: Row) -> str:
    verb = str(row.get("do") or "").strip()
    return f"step {i + 1} ({verb[:20]})" if verb else f"step {i + 1}"


def blank() -> Draft:
    """The editor as it opens: the defaults and one empty row, nothing checked yet."""
    return Draft(settings_of({}), [steprows.blank()])
