"""``manage.py run_scenario`` as a user runs it: a real process, real servers, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, builtin_json


def run_cli(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LOCKVIZ_DB": str(db), "DJANGO_SETTINGS_MODULE": "lockviz.settings"}
    return subprocess.run(
        [sys.executable, "manage.py", "run_scenario", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.live
def test_json_output_for_the_fenced_gc_pause(tmp_path: Path) -> None:
    result = run_cli("gc-pause-fenced", "--json", db=tmp_path / "db.sqlite3")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert set(out) >= {"run_id", "scenario", "verdict", "events"}
    assert out["verdict"]["mutual_exclusion"] == "violated"
    assert out["verdict"]["stale_writes_rejected"] == 1
    assert {"seq", "t_ms", "actor", "kind"} <= set(out["events"][0])


@pytest.mark.live
def test_text_timeline_tells_the_unfenced_story(tmp_path: Path) -> None:
    result = run_cli("gc-pause-unfenced", db=tmp_path / "db.sqlite3")
    assert result.returncode == 0, result.stderr
    assert "FROZEN (SIGSTOP)" in result.stdout
    assert "lease of alice EXPIRED on the server" in result.stdout
    assert "Data corrupted" in result.stdout


@pytest.mark.live
def test_exit_3_when_the_verdict_contradicts_expect(tmp_path: Path) -> None:
    data = builtin_json("contention")
    data["expect"] = {"mutual_exclusion": "violated"}
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(data))
    result = run_cli(str(path), db=tmp_path / "db.sqlite3")
    assert result.returncode == 3
    assert "NOT AS EXPECTED: expected mutual_exclusion = 'violated', got 'held'" in result.stdout


def test_exit_2_with_the_offending_field_for_an_invalid_scenario(tmp_path: Path) -> None:
    data = builtin_json("contention")
    data["steps"][1]["at_ms"] = -1
    data["clients"].append("Bad Name")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    result = run_cli(str(path), db=tmp_path / "db.sqlite3")
    assert result.returncode == 2
    assert "steps[1].at_ms: Input should be greater than or equal to 0" in result.stderr
    assert "Traceback" not in result.stderr


def test_exit_2_for_unknown_slug_and_broken_json(tmp_path: Path) -> None:
    result = run_cli("no-such-scenario", db=tmp_path / "db.sqlite3")
    assert result.returncode == 2 and "neither a built-in scenario" in result.stderr
    path = tmp_path / "broken.json"
    path.write_text('{"format": 1, "title": ')
    result = run_cli(str(path), db=tmp_path / "db.sqlite3")
    assert result.returncode == 2 and "not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr


def test_exit_2_when_storage_and_fencing_contradict_naming_both(tmp_path: Path) -> None:
    data = builtin_json("gc-pause-fenced")  # it says "fencing": true
    data["storage"] = "cas"
    path = tmp_path / "contradiction.json"
    path.write_text(json.dumps(data))
    result = run_cli(str(path), db=tmp_path / "db.sqlite3")
    assert result.returncode == 2
    assert "Invalid scenario:" in result.stderr
    assert "storage: 'cas' contradicts \"fencing\": true" in result.stderr
