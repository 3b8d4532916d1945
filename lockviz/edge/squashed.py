"""A database left half-way through the migrations that were squashed is refused by name.

Migrations 0001 to 0007 were squashed into ``0001_squashed_0007_presenter_control`` (its
``replaces`` lists them) and the seven files deleted. A database that had applied all seven is
recognised as migrated (``migrate`` records the squashed one and does nothing else); a new one
runs the squashed migration. A database that had applied only some of them (a checkout from
the middle of that history) would otherwise be passed over in silence, its tables missing
columns: ``migrate`` (and every command that checks the database) stops here and says what to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error
from django.db import connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

SQUASHED = "0001_squashed_0007_presenter_control"


def replaced() -> list[str]:
    """The migrations the squashed one replaces, in order, as its file lists them."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return [name for _, name in loader.disk_migrations["lockviz", SQUASHED].replaces]


def half_migrated(applied: set[str]) -> list[str]:
    """Of ``applied`` (the lockviz migrations a database records), the replaced ones, when they
    are some but not all of them and the squashed one is not recorded; else nothing."""
    old = replaced()
    done = [name for name in old if name in applied]
    return done if done and len(done) < len(old) and SQUASHED not in applied else []


def check(
    app_configs: Sequence[AppConfig] | None = None,
    databases: Sequence[str] | None = None,
    **kwargs: object,
) -> list[CheckMessage]:
    """Django's system check (tag ``database``): an Error for each half-migrated database."""
    errors: list[CheckMessage] = []
    for alias in databases or []:
        recorder = MigrationRecorder(connections[alias])
        if not recorder.has_table():
            continue
        applied = {name for app, name in recorder.applied_migrations() if app == "lockviz"}
        if done := half_migrated(applied):
            errors.append(
                Error(
                    f"database {alias!r} applied lockviz's migrations only up to {done[-1]}; "
                    f"they are squashed into {SQUASHED} now. Migrate it with a checkout from "
                    "before the squash (git log -- lockviz/migrations), then with this one; or "
                    "start with an empty database.",
                    id="lockviz.E001",
                )
            )
    return errors
