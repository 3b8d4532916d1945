"""The squashed migration: a database the old migrations built (every database at 0014, as the
release before the squash left it) counts as migrated, a new one is built by the squashed one
alone (as the test database is), and one left part-way through the old ones is refused by name
instead of being passed over or built again."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.db.migrations.recorder import MigrationRecorder

from lockviz.edge import squashed
from lockviz.management.commands import serve

SQUASHED = ("lockviz", squashed.SQUASHED)
# What a database at 0014 records, read from one that the release before the squash (b2e96ea)
# migrated (its django_migrations, in order): the first squash's seven parts, the first squash,
# then 0008 to 0014. Written out, not derived from ``replaces``, so that a squash that forgot one
# of them fails here.
AT_0014 = [
    "0001_initial", "0002_run_owner_and_liveness", "0003_rooms", "0004_forks", "0005_fair_shares",
    "0006_narrated_once", "0007_presenter_control", "0008_plans", "0009_library",
    "0010_exercises_progress_lms", "0011_security", "0012_exercise_concepts", "0013_run_started",
    "0014_room_state_order", "0001_squashed_0007_presenter_control",
]  # fmt: skip


@pytest.fixture
def recorded() -> Iterator[MigrationRecorder]:
    """The test database's record of applied migrations, put back as it was afterwards."""
    recorder = MigrationRecorder(connection)
    before = set(recorder.applied_migrations())
    yield recorder
    for key in set(recorder.applied_migrations()) - before:
        recorder.record_unapplied(*key)
    for key in before - set(recorder.applied_migrations()):
        recorder.record_applied(*key)


def as_if_migrated_by(recorder: MigrationRecorder, names: list[str]) -> None:
    """Record that ``names`` of the old migrations built the database, and not the squashed one
    (applying it records those it replaces as well); later ones stay as they are."""
    for app, name in recorder.applied_migrations():
        if app == "lockviz" and name in {*AT_0014, *squashed.replaced(), squashed.SQUASHED}:
            recorder.record_unapplied(app, name)
    for name in names:
        recorder.record_applied("lockviz", name)


@pytest.mark.django_db
def test_the_squashed_migration_replaces_the_old_ones_and_builds_a_new_database() -> None:
    assert squashed.replaced() == [
        "0001_squashed_0007_presenter_control", "0008_plans", "0009_library",
        "0010_exercises_progress_lms", "0011_security", "0012_exercise_concepts",
        "0013_run_started", "0014_room_state_order",
    ]  # fmt: skip
    call_command("makemigrations", "lockviz", "--check", "--dry-run", verbosity=0)  # exits if not


@pytest.mark.django_db(transaction=True)
def test_a_database_the_old_migrations_built_is_migrated_already(
    recorded: MigrationRecorder,
) -> None:
    as_if_migrated_by(recorded, squashed.replaced())
    executor = MigrationExecutor(connection)
    planned = [m.name for m, _ in executor.migration_plan(executor.loader.graph.leaf_nodes())]
    assert not set(planned) & {*squashed.replaced(), squashed.SQUASHED}, planned  # only later ones
    assert squashed.check(databases=["default"]) == []
    call_command("migrate", verbosity=0)  # records the squashed one, applies only later ones
    assert SQUASHED in recorded.applied_migrations()


@pytest.mark.django_db(transaction=True)
def test_a_database_the_release_before_the_squash_migrated_reads_as_fully_applied(
    recorded: MigrationRecorder,
) -> None:
    as_if_migrated_by(recorded, AT_0014)
    assert squashed.check(databases=["default"]) == []
    call_command("migrate", "--check", verbosity=0)  # exits if anything is left to apply
    executor = MigrationExecutor(connection)
    assert executor.loader.applied_migrations is not None
    assert SQUASHED in executor.loader.applied_migrations  # as `showmigrations` says, [X] or [-]


@pytest.mark.django_db(transaction=True)
def test_a_database_half_way_through_the_old_migrations_is_refused_by_name(
    recorded: MigrationRecorder,
) -> None:
    as_if_migrated_by(recorded, AT_0014[:10])  # the seven, 0008, 0009 and 0010
    [error] = squashed.check(databases=["default"])
    assert error.id == "lockviz.E001"
    assert "only up to 0010_exercises_progress_lms" in error.msg
    assert squashed.SQUASHED in error.msg


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_first_squash_is_refused_by_name(
    recorded: MigrationRecorder,
) -> None:
    """Part-way through the seven the first squash replaced: none of the names the squash
    replaces now, but not an empty database either (migrate would build its tables again)."""
    as_if_migrated_by(recorded, AT_0014[:5])
    [error] = squashed.check(databases=["default"])
    assert "only up to 0005_fair_shares" in error.msg


@pytest.mark.django_db(transaction=True)
def test_serve_stops_on_a_half_migrated_database_with_the_sentence_and_changes_nothing(
    recorded: MigrationRecorder,
) -> None:
    """``serve`` migrates with ``call_command``, which skips the system checks: it asks this
    one itself, before migrating (a half-migrated database used to fail deep in ``migrate``
    with a KeyError, after applying what it could)."""
    as_if_migrated_by(recorded, AT_0014[:13])
    before = set(recorded.applied_migrations())
    with pytest.raises(CommandError, match=r"only up to 0013_run_started.*empty database"):
        serve.migrate_once()
    assert set(recorded.applied_migrations()) == before
