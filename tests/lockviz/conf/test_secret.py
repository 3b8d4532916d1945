"""The secrets docker compose makes once: the app's three, and a copy for each service that
reads one of them, in a folder of its own (docker-compose.yml's `secrets` service)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from lockviz.conf.secret import SECRETS, main


def test_it_makes_the_three_once_and_shares_each_into_its_own_folder(tmp_path: Path) -> None:
    app, db, live = tmp_path / "app", tmp_path / "db", tmp_path / "live"
    db.mkdir()
    live.mkdir()
    uid = str(os.getuid())
    argv = ["secret", str(app), uid, f"db_password={db}:{uid}", f"live_password={live}:{uid}"]
    main(argv)
    made = {name: (app / name).read_text() for name in SECRETS}
    assert len(set(made.values())) == 3 and all(len(key) >= 32 for key in made.values())
    assert (db / "db_password").read_text() == made["db_password"]
    assert (live / "live_password").read_text() == made["live_password"]
    assert sorted(p.name for p in db.iterdir()) == ["db_password"]  # that one and no other
    assert sorted(p.name for p in live.iterdir()) == ["live_password"]
    for path in (app / "secret_key", db / "db_password", live / "live_password"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path

    main(argv)  # the stack restarts: everything is kept, sessions and passwords alike
    assert {name: (app / name).read_text() for name in made} == made
    assert (db / "db_password").read_text() == made["db_password"]


def test_a_share_it_cannot_read_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="NAME=DIR:UID"):
        main(["secret", str(tmp_path / "app"), "10001", f"db_key={tmp_path}:999"])
    assert not (tmp_path / "app").exists()
