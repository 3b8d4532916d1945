"""An imported run (lockviz.runs.imports, which only reads) kept as a run, with its words.

The import page and a library's archive (lockviz.library.archive) store what they read here.
The import page reads and tells a file in a worker process (:func:`read_and_tell`, through
lockviz.edge.workers): the parse, the checks and the words are the CPU of an import, and the
web process then only inserts the rows it is handed, their JSON already text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from lockviz import accounts
from lockviz.jsontypes import JsonValue
from lockviz.models import Run, RunEvent
from lockviz.narrator import Narrator
from lockviz.runs import imports
from lockviz.runs.imports import ImportedRun, ImportedScenario

BATCH = 1000

# One event's row: seq, t_ms, actor, kind (as the import checked them), the event as JSON
# text, its words as JSON text.
Row = tuple[JsonValue, JsonValue, JsonValue, JsonValue, str, str]


@dataclass(frozen=True)
class Told:
    """An imported run with its words made: ``run`` without its events (``rows`` hold them)."""

    run: ImportedRun
    rows: list[Row]


def read_and_tell(data: bytes | str, where: str = "file") -> ImportedScenario | Told:
    """What the file holds (:func:`lockviz.runs.imports.read`), a run told: a worker process's
    job (pure: no database), its result small to hand back."""
    found = imports.read(data, where)
    return tell(found) if isinstance(found, ImportedRun) else found


def tell(found: ImportedRun) -> Told:
    """Each event's words, said once, here: every reader reads them."""
    told = Narrator(found.scenario.backend)
    rows: list[Row] = [
        (e["seq"], e["t_ms"], e["actor"], e["kind"], json.dumps(e),
         json.dumps(told.said(e).as_data()))
        for e in found.events
    ]  # fmt: skip
    return Told(replace(found, events=[]), rows)


@transaction.atomic
def store(found: ImportedRun | Told, owner: str = "") -> Run:
    """``found`` as a finished (or failed) run of ``owner`` (lockviz.accounts: a browser, or a
    teacher's account, who may then save it), each event with its words."""
    told = found if isinstance(found, Told) else tell(found)
    imported = told.run
    run = Run.objects.create(
        title=imported.scenario.title,
        scenario=imported.scenario.to_json(),
        status=Run.Status.FINISHED if imported.finished else Run.Status.FAILED,
        verdict=imported.verdict,
        expect_met=imported.expect_met,
        mismatches=imported.mismatches,
        error=imported.error,
        finished=timezone.now(),
        owner=owner,
        user_id=accounts.account_id(owner),
    )
    _insert(run, told.rows)
    return run


def _insert(run: Run, rows: list[Row]) -> None:
    """The run's events (already checked by the import: lockviz.runs.imports) with their
    words, inserted as rows at once: 20,000 events through ``bulk_create`` cost 4 s of the
    ORM's preparing each field of each row; this costs what the database does. The JSON is
    text already (SQLite keeps it as text; PostgreSQL casts it)."""
    meta = RunEvent._meta
    names = ("run", "seq", "t_ms", "actor", "kind", "data", "said")
    column = {field.name: field.column for field in meta.concrete_fields}
    columns = ", ".join(connection.ops.quote_name(column[name]) for name in names)
    as_json = "%s::jsonb" if connection.vendor == "postgresql" else "%s"
    sql = (
        f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) "
        f"VALUES (%s, %s, %s, %s, %s, {as_json}, {as_json})"
    )
    values: list[Any] = [(run.pk, *row) for row in rows]  # the database's adapters: Any
    with connection.cursor() as cursor:
        for start in range(0, len(values), BATCH):
            cursor.executemany(sql, values[start : start + BATCH])
