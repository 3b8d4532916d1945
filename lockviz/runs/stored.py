"""An imported run (lockviz.runs.imports, which only reads) kept as a run, with its words.

The import page and a library's archive (lockviz.library.archive) store what they read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from lockviz import accounts
from lockviz.lab.events import EventJson
from lockviz.models import Run, RunEvent
from lockviz.narrator import Narrator
from lockviz.runs.imports import ImportedRun

BATCH = 1000


@transaction.atomic
def store(found: ImportedRun, owner: str = "") -> Run:
    """``found`` as a finished (or failed) run of ``owner`` (lockviz.accounts: a browser, or a
    teacher's account, who may then save it), each event with its words."""
    run = Run.objects.create(
        title=found.scenario.title,
        scenario=found.scenario.to_json(),
        status=Run.Status.FINISHED if found.finished else Run.Status.FAILED,
        verdict=found.verdict,
        expect_met=found.expect_met,
        mismatches=found.mismatches,
        error=found.error,
        finished=timezone.now(),
        owner=owner,
        user_id=accounts.account_id(owner),
    )
    told = Narrator(found.scenario.backend)  # said once, here: every reader reads the words
    _insert(run, [(e, told.said(e).as_data()) for e in found.events])
    return run


def _insert(run: Run, events: list[tuple[EventJson, Mapping[str, object]]]) -> None:
    """The run's events (already checked by the import: lockviz.runs.imports) with their
    words, inserted as rows at once: 20,000 events through ``bulk_create`` cost 4 s of the
    ORM's preparing each field of each row; this costs what the database does. (The rows'
    values are what the import checked, typed by it: ``Any`` for the database's adapters.)"""
    meta = RunEvent._meta
    names = ("run", "seq", "t_ms", "actor", "kind", "data", "said")
    column = {field.name: field.column for field in meta.concrete_fields}
    columns = ", ".join(connection.ops.quote_name(column[name]) for name in names)
    sql = (
        f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) "
        f"VALUES ({', '.join(['%s'] * len(names))})"
    )
    as_json = connection.ops.adapt_json_value
    rows: list[Any] = [
        (run.pk, e["seq"], e["t_ms"], e["actor"], e["kind"], as_json(e, None),
         as_json(said, None))
        for e, said in events
    ]  # fmt: skip
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            cursor.executemany(sql, rows[start : start + BATCH])
