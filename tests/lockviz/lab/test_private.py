"""A run's servers are private to it: each asks for a password only the run knows, and no
password ever shows in a process listing (``ps``, ``/proc/<pid>/cmdline``) or environment."""

from __future__ import annotations

import contextlib
import os
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from algorithms.postgres_session import connect
from lockviz.lab import procs
from lockviz.lab.engine import RunEngine
from lockviz.lab.events import Event
from lockviz.lab.labs import LocalLab, ServerSet
from lockviz.scenarios.library import builtin

pytestmark = pytest.mark.live


def resp(port: int, command: bytes) -> bytes:
    """One raw RESP2 exchange, as any local user could have it with the port alone."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(command)
        return sock.recv(1024)


def test_redis_refuses_a_client_without_the_password() -> None:
    with LocalLab().servers(["redis-1", "storage"]) as servers:
        for name in ("redis-1", "storage"):
            server = servers[name]
            assert resp(server.port, b"PING\r\n").startswith(b"-NOAUTH Authentication required")
            # what a hostile user would try: put the dump somewhere else and write it there
            refused = resp(server.port, b"CONFIG SET dir /tmp\r\n")
            assert refused.startswith(b"-NOAUTH")
            assert resp(server.port, b"AUTH guess\r\n").startswith(b"-WRONGPASS")
            assert server.client().ping() is True  # the lab's own connection has it
            assert server.client().config_get("protected-mode") == {"protected-mode": "yes"}
            config = Path(server.config_file)
            assert stat.S_IMODE(config.stat().st_mode) == 0o600
            assert f"requirepass {server.password}\n" in config.read_text()


def test_postgres_and_pgbouncer_refuse_a_client_without_the_password() -> None:
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        for port, pooled in ((pg.port, False), (pg.pooler_port, True)):
            with pytest.raises(psycopg.OperationalError, match="no password supplied"):
                connect(pg.host, port, application_name="intruder", pooled=pooled)
            wrong = "password authentication failed" if not pooled else "SASL authentication failed"
            with pytest.raises(psycopg.OperationalError, match=wrong):
                connect(pg.host, port, application_name="intruder", pooled=pooled, password="x")
        # The Unix socket (in the server's dir) asks too: `trust` made any local user superuser.
        with pytest.raises(psycopg.OperationalError, match="no password supplied"):
            psycopg.connect(host=pg.workdir, port=pg.port, user="postgres", dbname="postgres")
        with pg.connect() as conn:
            row = conn.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            assert row.fetchone() == (True,)  # the lab itself gets in, and only the lab
        hba = Path(pg.data_dir, "pg_hba.conf").read_text()
        rules = [line.split() for line in hba.splitlines() if line and not line.startswith("#")]
        assert rules and all(rule[-1] == "scram-sha-256" for rule in rules)
        users = Path(pg.workdir, "pgbouncer.users")
        assert stat.S_IMODE(users.stat().st_mode) == 0o600
        assert not Path(pg.workdir, "initdb.pw").exists()  # gone once initdb has read it


class SpyLab(LocalLab):
    """A LocalLab that lets the test see the server set it gives a run."""

    seen: ServerSet | None = None

    @contextlib.contextmanager
    def servers(self, *args: Any, **kwargs: Any) -> Iterator[ServerSet]:
        with super().servers(*args, **kwargs) as started:
            self.seen = started
            yield started


def family(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (servers, their backends, clients, the proxy)."""
    found, todo = [], [pid]
    while todo:
        for child in procs.children(todo.pop()):
            found.append(child)
            todo.append(child)
    return found


def read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:  # gone meanwhile, or not ours to read
        return b""


@pytest.mark.parametrize("slug", ["gc-pause-fenced", "redlock-gc-pause", "pg-pooled-leak"])
def test_no_password_shows_in_any_command_line_or_environment(slug: str) -> None:
    lab = SpyLab()
    seen: dict[str, Any] = {}

    def sink(event: Event) -> None:
        if event.kind != "run_started":
            return
        assert lab.seen is not None
        passwords = [p.encode() for p in lab.seen.passwords().values()]
        ours = family(os.getpid())
        seen["passwords"], seen["ours"] = passwords, ours
        # every process on the machine: what `ps` shows any user
        seen["cmdlines"] = [read(f"/proc/{s.pid}/cmdline") for s in procs.every_process()]
        seen["environs"] = [read(f"/proc/{pid}/environ") for pid in ours]

    result = RunEngine(builtin()[slug], lab, sink).run()
    assert result.error is None and result.mismatches == [], result.verdict
    # storage and each lock node that has one; the clients used them all (the run worked)
    assert len(seen["passwords"]) >= 2
    assert len(seen["ours"]) >= 4 and len(seen["cmdlines"]) > len(seen["ours"])
    for password in seen["passwords"]:
        assert not [c for c in seen["cmdlines"] if password in c]
        assert not [e for e in seen["environs"] if password in e]
