"""A teacher's whole library as one zip, and that zip back into a library, anywhere.

The archive holds ``library.json`` (what it is, and each item's title and visibility) and one
file per saved run, ``runs/<id>.json``, exactly as the run's own export (``Run.as_export``:
its scenario, events and verdict), so each is read back by the same import a single run goes
through (lockviz.runs.imports, with its bounds) and stored the same way (lockviz.runs.stored).
Scenarios are in ``library.json`` itself, each checked again by the scenario schema, and so
are the exercises the teacher wrote (``exercises``, each checked again by
lockviz.exercises.definition; an archive from before they travelled has none) and the
teacher's lecture plans, each as its own export (lockviz.teaching.plan_files); a run a plan
replays that is not saved travels with it (``plan_runs``), and on import each plan's replays
point at the runs as stored there.

Bounds: the zip at most :data:`MAX_BYTES` (an upload through the library page stops sooner, at
``LOCKVIZ_MAX_UPLOAD``, 5 MB); at most :data:`MAX_ITEMS` items; each run's file at most
``imports.MAX_BYTES`` unpacked (read no further than that, whatever its header says), each
named once (a file named twice is refused, not read twice), and all of them together at most
:data:`MAX_UNPACKED` bytes and :data:`MAX_EVENTS` events (:class:`Budget`): everything is read
before anything is stored, so what is read at once is bounded. An import is charged to the
address as a run's import is (``LOCKVIZ_IMPORTS_PER_HOUR``).
An archive with any problem adds nothing: every problem is named by its file and field.

One module past the usual ~300 lines, on purpose: the archive's format, its bounds and its
all-or-nothing import are read together to be trusted.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from dataclasses import dataclass, field

from django.contrib.auth.models import User
from django.db import transaction

from lockviz import accounts, jsontext
from lockviz.errors import ImportRefused, JsonRefused, Refusal
from lockviz.exercises import definition
from lockviz.jsontypes import JsonValue
from lockviz.library import saving
from lockviz.models import Plan, Run, SavedExercise, SavedRun, SavedScenario
from lockviz.runs import imports, stored
from lockviz.runs.imports import ImportedRun
from lockviz.scenarios.schema import parse
from lockviz.teaching import plan_files

FORMAT = "lockviz-library"
VERSION = 1
MANIFEST = "library.json"
MAX_BYTES = 50 * 1024 * 1024
MAX_ITEMS = 500
MAX_MANIFEST_BYTES = imports.MAX_BYTES  # library.json: its scenarios and plans are in it
MAX_UNPACKED = 32 * 1024 * 1024  # every run's file together, unpacked
MAX_EVENTS = 100_000  # every run's events together (one run may have imports.MAX_EVENTS)
MAX_PROBLEMS = imports.MAX_PROBLEMS


@dataclass
class Budget:
    """What reading one archive has taken so far: its files by name, their bytes and events."""

    names: set[str] = field(default_factory=set)
    unpacked: int = 0
    events: int = 0

    def file(self, name: str) -> None:
        """``name`` is about to be read; :class:`ImportRefused` if it was, or if the archive
        has unpacked all it may."""
        if name in self.names:
            raise ImportRefused(f"{name[:100]}: named twice in {MANIFEST}; each run is one file")
        self.names.add(name)
        if self.unpacked >= MAX_UNPACKED:
            raise ImportRefused(f"archive: more than {MAX_UNPACKED // 1024 // 1024} MB unpacked")

    @property
    def spent(self) -> bool:
        return self.unpacked > MAX_UNPACKED or self.events > MAX_EVENTS

    def took(self, data: bytes, run: ImportedRun | None = None) -> None:
        self.unpacked += len(data)
        self.events += len(run.events) if run is not None else 0
        if self.unpacked > MAX_UNPACKED:
            raise ImportRefused(f"archive: more than {MAX_UNPACKED // 1024 // 1024} MB unpacked")
        if self.events > MAX_EVENTS:
            raise ImportRefused(f"archive: more than {MAX_EVENTS} events in all its runs")


@dataclass(frozen=True)
class Added:
    runs: int
    scenarios: int
    plans: int = 0
    exercises: int = 0

    @property
    def sentence(self) -> str:
        return (
            f"Imported {self.runs} run{'s' * (self.runs != 1)}, {self.scenarios} "
            f"scenario{'s' * (self.scenarios != 1)}, {self.exercises} "
            f"exercise{'s' * (self.exercises != 1)} and {self.plans} lecture "
            f"plan{'s' * (self.plans != 1)} into your library."
        )


def export(user: User) -> bytes:
    """``user``'s library as a zip (see the module's docstring)."""
    runs = SavedRun.objects.filter(user=user).select_related("run").order_by("saved")
    scenarios = SavedScenario.objects.filter(user=user).order_by("saved")
    exercises = SavedExercise.objects.filter(user=user).order_by("saved")
    plans = list(Plan.objects.filter(owner=accounts.owner_of(user)).order_by("created"))
    saved = {s.run_id for s in runs}
    replayed = sorted({run for plan in plans for run in plan.replayed()} - saved)
    plan_runs = list(Run.objects.filter(pk__in=replayed))
    manifest: dict[str, JsonValue] = {
        "format": FORMAT,
        "version": VERSION,
        "runs": [
            {"file": f"runs/{s.run_id}.json", "title": s.title, "visibility": s.visibility}
            for s in runs
        ],
        "scenarios": [
            {"title": s.title, "visibility": s.visibility, "scenario": s.scenario}
            for s in scenarios
        ],
        "exercises": [
            {"title": s.title, "visibility": s.visibility, "exercise": s.exercise}
            for s in exercises
        ],
        "plans": [plan_files.export(plan) for plan in plans],
        "plan_runs": [{"file": f"runs/{run.pk}.json"} for run in plan_runs],
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        packed.writestr(MANIFEST, json.dumps(manifest, indent=1))
        for run in [s.run for s in runs] + plan_runs:
            packed.writestr(f"runs/{run.pk}.json", json.dumps(run.as_export()))
    return buffer.getvalue()


def load(user: User, data: bytes) -> Added:
    """Add the archive ``data`` to ``user``'s library, all of it or nothing:
    :class:`ImportRefused` naming every problem."""
    budget = Budget()
    runs, scenarios, exercises = read(data, budget)
    with packed_zip(data) as packed:
        manifest = _manifest(packed)
        plan_runs, problems = _runs(packed, manifest.get("plan_runs", []), budget, "plan_runs")
    plans = manifest.get("plans", [])
    if not isinstance(plans, list) or len(plans) > MAX_ITEMS:
        problems.append(f"{MANIFEST}: plans: a list of at most {MAX_ITEMS} exported plans")
        plans = []
    if problems:
        raise ImportRefused(_capped(problems))
    owner = accounts.owner_of(user)
    moved: dict[str, str] = {}  # a run's id in the archive -> its id here
    with transaction.atomic():
        for found, entry in runs:
            run = stored.store(found, owner=owner)
            moved[_id_of(entry)] = run.pk
            saving.save_run(user, run, str(entry.get("visibility")), str(entry.get("title", "")))
        for found, entry in plan_runs:
            moved[_id_of(entry)] = stored.store(found, owner=owner).pk
        for entry in scenarios:
            scenario = entry["scenario"]
            assert isinstance(scenario, dict)  # read checked it
            saving.save_scenario(
                user, scenario, str(entry.get("visibility")), str(entry.get("title", ""))
            )
        for ex, entry in exercises:
            saving.save_exercise(user, ex, str(entry["visibility"]), str(entry.get("title", "")))
        for index, plan in enumerate(plans):
            try:
                plan_files.load(_replays_moved(plan, moved), owner)
            except Refusal as refused:  # nothing is kept: the transaction is undone
                where = f"{MANIFEST}: plans[{index}]"
                raise ImportRefused([f"{where}.{p}" for p in refused.problems]) from None
    return Added(len(runs), len(scenarios), len(plans), len(exercises))


def _id_of(entry: Entry) -> str:
    """The id a run had where it was exported: its file is ``runs/<id>.json``."""
    return str(entry["file"]).removeprefix("runs/").removesuffix(".json")


def _replays_moved(plan: JsonValue, moved: dict[str, str]) -> JsonValue:
    """An exported plan whose replay items name the runs as stored here."""
    listed = plan.get("items") if isinstance(plan, dict) else None
    if not isinstance(plan, dict) or not isinstance(listed, list):
        return plan
    items: list[JsonValue] = [
        {**item, "run": moved.get(str(item.get("run")), item.get("run"))}
        if isinstance(item, dict) and item.get("kind") == "replay"
        else item
        for item in listed
    ]
    return {**plan, "items": items}


Entry = dict[str, JsonValue]


def read(
    data: bytes, budget: Budget | None = None
) -> tuple[list[tuple[ImportedRun, Entry]], list[Entry], list[tuple[definition.Exercise, Entry]]]:
    """What the archive ``data`` holds (its runs, read by the run import, its scenarios,
    checked by the schema, and its exercises), each with its manifest entry;
    :class:`ImportRefused` naming every problem."""
    if len(data) > MAX_BYTES:
        raise ImportRefused(f"archive: {len(data)} bytes; the most is {MAX_BYTES}")
    with packed_zip(data) as packed:
        manifest = _manifest(packed)
        runs, problems = _runs(packed, manifest.get("runs"), budget or Budget())
    scenarios, more = _scenarios(manifest.get("scenarios"))
    exercises, also = _exercises(manifest.get("exercises", []))
    problems += more + also
    if len(scenarios) + len(runs) > MAX_ITEMS:
        problems.append(f"{MANIFEST}: more than {MAX_ITEMS} items")
    if problems:
        raise ImportRefused(_capped(problems))
    return runs, scenarios, exercises


def packed_zip(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError):
        raise ImportRefused("archive: not a zip file (a lockviz library export is)") from None


def _scenarios(entries: JsonValue) -> tuple[list[Entry], list[str]]:
    """Each scenario of the manifest that the schema accepts, with a title and visibility the
    library takes; and every problem, named by its place."""
    if not isinstance(entries, list):
        return [], [f"{MANIFEST}: scenarios: must be a list"]
    if len(entries) > MAX_ITEMS:
        return [], [f"{MANIFEST}: scenarios: {len(entries)}; the most is {MAX_ITEMS}"]
    found: list[Entry] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        where = f"{MANIFEST}: scenarios[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("scenario"), dict):
            problems.append(f"{where}.scenario: must be an object (a scenario)")
            continue
        try:
            parse(entry["scenario"])
            saving.visibility(entry.get("visibility"))
            saving.title(entry.get("title"), "")
        except Refusal as refused:
            problems.extend(f"{where}.{p}" for p in refused.problems)
            continue
        found.append(entry)
    return found, problems


def _exercises(entries: JsonValue) -> tuple[list[tuple[definition.Exercise, Entry]], list[str]]:
    """Each exercise of the manifest that lockviz.exercises.definition accepts, with a title
    and visibility the library takes; and every problem, named by its place."""
    if not isinstance(entries, list) or len(entries) > MAX_ITEMS:
        return [], [f"{MANIFEST}: exercises: a list of at most {MAX_ITEMS} exercises"]
    found: list[tuple[definition.Exercise, Entry]] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        where = f"{MANIFEST}: exercises[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: must be an object (a title, a visibility, an exercise)")
            continue
        try:
            saving.visibility(entry.get("visibility"))
            saving.title(entry.get("title"), "")
        except Refusal as refused:
            problems.extend(f"{where}.{p}" for p in refused.problems)
        try:
            found.append((definition.parse(entry.get("exercise")), entry))
        except Refusal as refused:  # each problem named by its field in the exercise
            problems.extend(
                f"{where}.{p}" if p.startswith("exercise:") else f"{where}.exercise.{p}"
                for p in refused.problems
            )
    return found, problems


def _manifest(packed: zipfile.ZipFile) -> dict[str, JsonValue]:
    try:
        info = packed.getinfo(MANIFEST)
    except KeyError:
        raise ImportRefused(
            f"archive: no {MANIFEST} in it (is this a lockviz library export?)"
        ) from None
    text = _read(packed, info)
    try:
        manifest = jsontext.loads(text, max_bytes=MAX_MANIFEST_BYTES, where=MANIFEST)
    except JsonRefused as exc:
        raise ImportRefused(exc.problems) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ImportRefused(f'{MANIFEST}: format: must be "{FORMAT}"')
    if manifest.get("version") != VERSION:
        raise ImportRefused(
            f"{MANIFEST}: version: {manifest.get('version')!r}; this lockviz reads {VERSION}"
        )
    return manifest


def _runs(
    packed: zipfile.ZipFile, entries: JsonValue, budget: Budget, listed: str = "runs"
) -> tuple[list[tuple[ImportedRun, Entry]], list[str]]:
    """Each run the manifest ``listed`` names, read by the run import; and every problem. The
    library's ``runs`` have a title and a visibility; the ``plan_runs`` (unsaved runs a plan
    replays) have neither."""
    if not isinstance(entries, list):
        return [], [f"{MANIFEST}: {listed}: must be a list"]
    if len(entries) > MAX_ITEMS:
        return [], [f"{MANIFEST}: {listed}: {len(entries)}; the most is {MAX_ITEMS}"]
    found: list[tuple[ImportedRun, Entry]] = []
    problems: list[str] = []
    for index, entry in enumerate(entries):
        name = entry.get("file") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(name, str):
            problems.append(f"{MANIFEST}: {listed}[{index}].file: must name a file in the archive")
            continue
        try:
            read = _run_file(packed, name, budget, f"{MANIFEST}: {listed}[{index}].file")
        except ImportRefused as refused:
            problems.extend(refused.problems)
            if budget.spent:
                break  # nothing more is read: the archive is refused whatever the rest holds
            continue
        try:
            if listed == "runs":
                saving.visibility(entry.get("visibility"))
                saving.title(entry.get("title"), "")
        except Refusal as refused:
            problems.extend(f"{MANIFEST}: {listed}[{index}].{p}" for p in refused.problems)
            continue
        found.append((read, entry))
    return found, problems


def _run_file(packed: zipfile.ZipFile, name: str, budget: Budget, where: str) -> ImportedRun:
    """The run file ``name`` (the manifest's ``where``) read by the run import, within
    ``budget``; :class:`ImportRefused` saying why not."""
    try:
        info = packed.getinfo(name)
    except KeyError:
        raise ImportRefused(f"{where}: {name[:100]!r} is not in it") from None
    budget.file(name)
    data = _read(packed, info)
    budget.took(data)
    read = imports.read(data, name)
    if not isinstance(read, ImportedRun):
        raise ImportRefused(f"{name[:100]}: holds a scenario, not an exported run")
    budget.took(b"", read)
    return read


def _read(packed: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, never more than the run import's limit (whatever its header says)."""
    limit = imports.MAX_BYTES
    try:
        with packed.open(info) as member:
            data = member.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError,
            NotImplementedError) as exc:  # fmt: skip
        raise ImportRefused(f"{info.filename[:100]}: cannot be read ({exc})") from None
    if len(data) > limit:
        raise ImportRefused(f"{info.filename[:100]}: more than {limit} bytes unpacked")
    return data


def _capped(problems: list[str]) -> list[str]:
    if len(problems) <= MAX_PROBLEMS:
        return problems
    return [*problems[:MAX_PROBLEMS], f"… and more problems after these {MAX_PROBLEMS}"]
