"""The lab's PostgreSQL: its processes, its pg_locks observer, and the PG scenarios' stories."""

from __future__ import annotations

import base64
import hmac
import json
import os
import shutil
import subprocess
import sys
import time
from typing import Any

import psycopg
import pytest

from algorithms.clock import SystemClock
from algorithms.postgres_lock import PostgresLock
from lockviz.lab import procs, registry
from lockviz.lab.backends import postgres as backend
from lockviz.lab.config import ClientConfig
from lockviz.lab.engine import RunEngine
from lockviz.lab.errors import LabError
from lockviz.lab.labs import LocalLab
from lockviz.lab.procs import wait_until
from lockviz.lab.recording import RunResult
from lockviz.lab.servers import pgtemplate
from lockviz.lab.servers import postgres as pg_servers
from lockviz.lab.watchers.postgres import LockTableWatcher
from lockviz.scenarios.library import builtin
from tests.conftest import ROOT

pytestmark = pytest.mark.live


def run(slug: str) -> RunResult:
    result = RunEngine(builtin()[slug], LocalLab()).run()
    assert result.error is None
    return result


def first(result: RunResult, actor: str, kind: str) -> dict[str, Any]:
    return next(e for e in result.events if e["actor"] == actor and e["kind"] == kind)


def test_stop_leaves_no_postgres_or_pgbouncer_process_alive() -> None:
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        held = pg.connect(application_name="alice")
        pooled = pg.connect(application_name="bob", pooled=True)
        held.execute("SELECT pg_advisory_lock(1)")
        pooled.execute("SELECT 1")
        family = [*pg.pids(), *procs.children(pg.proc.pid)]
        assert len(family) >= 4  # postmaster, pgbouncer, helpers, two backends
        assert all(procs.alive(pid) for pid in family)
    assert [pid for pid in family if procs.alive(pid)] == []
    held.close()
    pooled.close()


def test_kill_takes_every_backend_with_the_postmaster_and_a_restart_keeps_tokens_rising() -> None:
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        conn = pg.connect(application_name="alice")
        row = conn.execute("SELECT pg_advisory_lock(1), nextval('lockviz_fence')").fetchone()
        assert row is not None
        backends = procs.children(pg.proc.pid)
        pg.kill()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(procs.alive(p) for p in backends):
            time.sleep(0.02)
        assert [pid for pid in [pg.proc.pid, *backends] if procs.alive(pid)] == []
        assert procs.alive(pg.pooler.pid)  # the pooler is a server of its own
        conn.close()
        pg.launch()  # crash recovery replays the WAL: the sequence never goes back
        pg.wait_ready()
        with pg.connect(application_name="bob", pooled=True) as again:
            assert again.execute("SELECT pg_try_advisory_lock(1)").fetchone() == (True,)
            token = again.execute("SELECT nextval('lockviz_fence')").fetchone()
            assert token is not None and token[0] > row[1]
    assert not procs.alive(pg.pooler.pid)


def test_the_observer_has_caught_up_once_a_poll_begun_after_a_moment_has_seen_it() -> None:
    """PostgreSQL tells nobody: the observer polls. A run's end waits until it has caught up
    with the moment the clients went idle, so a lock released just before is in the story."""
    seen: list[str] = []
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        watcher = LockTableWatcher(
            pg.host, pg.port, "pg-1", lambda a, k, d, t=None: seen.append(k),
            password=pg.password,
        )  # fmt: skip
        watcher.start()
        lock = PostgresLock(pg.connect(application_name="alice"), 7, owner="alice")
        try:
            assert lock.acquire() is not None
            wait_until(lambda: len(watcher.held) == 1, 10, "the watcher seeing the lock")
            lock.release()
            since = time.monotonic_ns()
            wait_until(lambda: watcher.caught_up(since), 10, "the watcher catching up")
            assert seen == ["deleted"]  # caught up: the release is recorded already
            pg.kill()  # a server down: its locks died with it, nothing more to wait for
            later = time.monotonic_ns() + 10**12
            wait_until(lambda: watcher.caught_up(later), 10, "the watcher seeing it down")
        finally:
            lock.close()
            watcher.stop()


def test_the_observer_reports_who_held_each_lock_that_disappears() -> None:
    seen: list[tuple[str, str, dict[str, Any]]] = []
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        watcher = LockTableWatcher(
            pg.host, pg.port, "pg-1", lambda a, k, d, t=None: seen.append((a, k, d)),
            password=pg.password,
        )  # fmt: skip
        watcher.start()
        locks = {
            name: PostgresLock(pg.connect(application_name=name), key, owner=name)
            for name, key in (("alice", 7), ("bob", 8), ("carol", 9))
        }
        assert all(lock.acquire() is not None for lock in locks.values())
        wait_until(lambda: len(watcher.held) == 3, 10, "the watcher seeing the three locks")

        def told(n: int) -> None:
            wait_until(lambda: len(seen) >= n, 10, f"the watcher's news #{n}")

        locks["alice"].release()
        told(1)
        locks["bob"].close()  # the session ends: the server frees its lock
        told(2)
        pg.kill()  # carol's lock dies with the server; the observer must survive that
        told(3)
        started = time.monotonic()
        watcher.stop()
        assert time.monotonic() - started < 2
        for lock in locks.values():
            lock.close()
    assert seen == [
        ("pg-1", "deleted", {"key": 7, "holder": "alice"}),
        ("pg-1", "deleted", {"key": 8, "holder": "bob"}),
        ("pg-1", "deleted", {"key": 9, "holder": "carol"}),
    ]


def test_wipe_ends_other_sessions_and_resets_the_token_sequence() -> None:
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        other = pg.connect(application_name="leftover")
        other.execute("SELECT pg_advisory_lock(1), nextval('lockviz_fence')")
        with pytest.raises(LabError, match="not marked as lockviz's"):
            pg_servers.wipe(pg.host, pg.port, pg.password)  # a server not set aside: untouched
        assert not _dead(other)
        with pg.connect(application_name="admin") as admin:
            admin.execute("CREATE TABLE lockviz_marker ()")
        pg_servers.wipe(pg.host, pg.port, pg.password)
        with pg.connect(application_name="next") as conn:
            assert conn.execute("SELECT pg_try_advisory_lock(1)").fetchone() == (True,)
            assert conn.execute("SELECT nextval('lockviz_fence')").fetchone() == (1,)
        assert _dead(other)
        other.close()


def _dead(conn: Any) -> bool:
    try:
        conn.execute("SELECT 1")
    except Exception:
        return True
    return False


def test_pooled_clients_find_the_pooler_through_the_server() -> None:
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        config = ClientConfig(
            name="alice", backend="postgres", variant="pooled", ttl_ms=1000, fencing=True,
            clients=("alice",), nodes=("pg-1",), servers={"pg-1": pg.address},
            passwords=servers.passwords(),
        )  # fmt: skip
        lock = backend.make_lock(config, SystemClock(), lambda kind, details: None)
        assert lock.conn.info.port == pg.pooler_port
        assert lock.acquire() is not None
        lock.close()


def test_a_paused_session_holder_blocks_bob_but_never_loses_the_lock() -> None:
    result = run("pg-pause-blocks")
    paused, resumed = first(result, "alice", "paused"), first(result, "alice", "resumed")
    failed = first(result, "bob", "acquire_failed")
    assert paused["seq"] < failed["seq"] < resumed["seq"]
    # The server never dropped alice's lock during the pause: no `deleted` before she woke.
    deletions = [e for e in result.events if e["kind"] == "deleted" and e["holder"] == "alice"]
    assert deletions and all(e["seq"] > resumed["seq"] for e in deletions)


def test_the_server_ends_a_paused_xact_holder_and_fencing_rejects_her_write() -> None:
    result = run("pg-gc-pause-fenced")
    paused, resumed = first(result, "alice", "paused"), first(result, "alice", "resumed")
    alice, bob = first(result, "alice", "granted"), first(result, "bob", "granted")
    freed = next(e for e in result.events if e["kind"] == "deleted" and e["holder"] == "alice")
    assert paused["seq"] < freed["seq"] < resumed["seq"]
    assert paused["seq"] < bob["seq"] < resumed["seq"]
    assert bob["token"] > alice["token"]
    rejected = next(e for e in result.events if e["kind"] == "reply" and e.get("accepted") is False)
    assert rejected["actor"] == "alice" and rejected["seq"] > resumed["seq"]
    released = first(result, "alice", "released")
    assert released["ok"] is False and "idle-in-transaction" in released["reason"]


def test_through_the_pooler_both_clients_hold_the_same_server_session() -> None:
    result = run("pg-pooled-leak")
    alice, bob = first(result, "alice", "granted"), first(result, "bob", "granted")
    assert alice["value"].split(":")[1] == bob["value"].split(":")[1]
    assert alice["seq"] < bob["seq"] < first(result, "alice", "released")["seq"]
    assert result.verdict is not None and result.verdict["mutual_exclusion"] == "violated"


HOLDER = """
import json, sys, time
from lockviz.lab.labs import LocalLab
from lockviz.lab.procs import children
with LocalLab().servers(["pg-1"]) as servers:
    pg = servers["pg-1"]
    conn = pg.connect(application_name="alice")
    conn.execute("SELECT pg_advisory_lock(1)")
    print(json.dumps([*pg.pids(), *children(pg.proc.pid)]), flush=True)
    time.sleep(60)
"""


def test_a_killed_app_takes_postgres_and_pgbouncer_with_it() -> None:
    # As root they run as the postgres user: the parent-death signal must survive that switch.
    app = subprocess.Popen(
        [sys.executable, "-c", HOLDER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    started = procs.start_ticks(app.pid)  # with the pid, it names this app, not a reuse of it
    try:
        assert app.stdout is not None
        family = json.loads(app.stdout.readline())
        assert len(family) >= 4 and all(procs.alive(pid) for pid in family)
    finally:
        app.kill()
        app.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(procs.alive(pid) for pid in family):
        time.sleep(0.05)
    assert [pid for pid in family if procs.alive(pid)] == []
    # What the killed app left on disk (`lab down` would remove it): its own, not the dirs of a
    # process that has its pid since (pid_max is 32768 on this machine: the suite's thousands of
    # processes wrap it, and a pid alone may name another test's live servers by then).
    for entry in registry.entries():
        if (entry["owner_pid"], entry.get("owner_start_ticks")) == (app.pid, started):
            shutil.rmtree(entry["workdir"], ignore_errors=True)


def test_a_server_restart_frees_the_lock_but_never_rewinds_the_token() -> None:
    result = run("pg-restart-frees")
    crashed = first(result, "pg-1", "crashed")
    freed = next(e for e in result.events if e["kind"] == "deleted" and e["holder"] == "alice")
    alice, bob = first(result, "alice", "granted"), first(result, "bob", "granted")
    # (bob may be granted before the engine records "restarted": it waits for the pooler too)
    assert crashed["seq"] < freed["seq"] < bob["seq"]
    assert bob["token"] > alice["token"]  # the sequence survived the crash in the WAL
    rejected = next(e for e in result.events if e["kind"] == "reply" and e.get("accepted") is False)
    assert rejected["actor"] == "alice" and rejected["token"] == alice["token"]


def test_clusters_are_copies_of_one_template_each_with_a_password_of_its_own() -> None:
    with LocalLab().servers(["pg-1"]) as one, LocalLab().servers(["pg-1"]) as two:
        first, second = one["pg-1"], two["pg-1"]
        assert isinstance(first, pg_servers.PostgresServer)
        assert isinstance(second, pg_servers.PostgresServer)
        assert first.password != second.password
        with first.connect() as conn:  # each takes its own password...
            assert conn.execute("SELECT 1").fetchone() == (1,)
        first.password, real = second.password, first.password
        try:
            with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
                first.connect()  # ...and not the other's, copied from the same template
        finally:
            first.password = real
    templates = [
        e
        for e in registry.entries()
        if e["workdir"].split("/")[-1].startswith("lockviz-pgtemplate-")
        and e["owner_pid"] == os.getpid()
    ]
    assert len(templates) == 1  # in the registry: swept like a run's dir once we are gone


def test_a_clusters_scram_secret_has_the_labs_iteration_count_and_needs_the_password() -> None:
    with LocalLab().servers(["pg-1"]) as started:
        server = started["pg-1"]
        assert isinstance(server, pg_servers.PostgresServer)
        with server.connect() as conn:  # read back from the server: what libpq is asked to do
            row = conn.execute("SELECT rolpassword FROM pg_authid WHERE rolname = 'postgres'")
            secret = str(row.fetchone()[0])  # type: ignore[index]
        iterations = pgtemplate.SCRAM_ITERATIONS
        assert iterations < 4096 and secret.startswith(f"SCRAM-SHA-256${iterations}:")
        with server.connect(pooled=True) as conn:  # PgBouncer logs in to it too
            assert conn.execute("SELECT 1").fetchone() == (1,)
        real = server.password
        server.password = real[:-1] + ("A" if real[-1] != "A" else "B")  # one character off
        try:
            with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
                server.connect()
        finally:
            server.password = real


def test_the_scram_secret_is_the_one_rfc_7677_gives() -> None:
    # RFC 7677's example: password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, 4096 iterations.
    secret = pgtemplate.scram_secret("pencil", 4096, base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="))
    salt, keys = secret.removeprefix("SCRAM-SHA-256$4096:").split("$")
    stored, server = (base64.b64decode(key) for key in keys.split(":"))
    assert salt == "W22ZaJ0SNY7soEsUEjb6gQ=="
    # The RFC gives the server's signature for its exchange: HMAC(ServerKey, AuthMessage).
    auth = (
        "n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        "s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    )
    signature = hmac.digest(server, auth.encode(), "sha256")
    assert base64.b64encode(signature).decode() == "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
    assert len(stored) == 32
