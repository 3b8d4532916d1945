"""A database left part-way through the migrations that were squashed is refused by name.

Migrations 0001 to 0014 are squashed into ``0001_squashed_0014_room_state_order`` (its
``replaces`` lists them: the first squash, ``0001_squashed_0007_presenter_control``, made a
plain migration first, and 0008 to 0014) and the old files deleted. A database that had applied
them all is recognised as migrated (``migrate`` records the squashed one and does nothing else);
a new one runs the squashed migration. A database that had applied only some of them (an
instance older than the release before the squash, or a checkout from the middle of that
history) would otherwise be passed over in silence, its tables missing columns, or be built
again over its own tables: ``migrate`` (and every command that checks the database) stops here
and says what to do.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.apps import AppConfig
from django.core.checks import CheckMessage, Error
from django.db import connections
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder

SQUASHED = "0001_squashed_0014_room_state_order"


def replaced() -> list[str]:
    """The migrations the squashed one replaces, in order, as its file lists them."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return [name for _, name in loader.disk_migrations["lockviz", SQUASHED].replaces]


def half_migrated(applied: set[str]) -> list[str]:
    """Of ``applied`` (the lockviz migrations a database records), all of them in order, when
    the database applied some lockviz migrations but neither the squashed one nor all that it
    replaces (it stopped part-way through them, or before the first squash); else nothing."""
    old = replaced()
    if SQUASHED in applied or all(name in applied for name in old):
        return []
    return sorted(applied)


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
                    f"they are squashed into {SQUASHED} now. Migrate it with the release before "
                    "the squash (git log -- lockviz/migrations), then with this one; or start "
                    "with an empty database.",
                    id="lockviz.E001",
                )
            )
    return errors
