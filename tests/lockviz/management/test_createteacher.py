"""``manage.py createteacher`` run without the replicas' environment: it refuses with a
sentence that names the database it was given, leaves no empty SQLite file behind, and prints
no traceback (issue 38: run as docs/deploy.md wrote it, it did all three). The accounts it makes
are tested in tests/lockviz/accounts/test_accounts.py."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def createteacher(db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOCKVIZ_DB": str(db)}
    env.pop("LOCKVIZ_DATABASE_URL", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "manage.py", "createteacher", "ada", "--password-stdin"],
        cwd=ROOT, env=env, input="lease-outlives-the-pause\n", capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip


def test_no_database_is_refused_and_none_is_made(tmp_path: Path) -> None:
    db = tmp_path / "lockviz.sqlite3"
    done = createteacher(db)
    assert done.returncode == 1
    assert f"There is no database at the SQLite file {db}" in done.stderr
    assert "LOCKVIZ_DATABASE_URL" in done.stderr and "Traceback" not in done.stderr
    assert not db.exists()


def test_a_database_with_no_tables_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "lockviz.sqlite3"
    sqlite3.connect(db).close()  # there, and empty
    done = createteacher(db)
    assert done.returncode == 1
    assert f"The SQLite file {db} has no tables yet" in done.stderr
    assert "manage.py migrate" in done.stderr and "Traceback" not in done.stderr
