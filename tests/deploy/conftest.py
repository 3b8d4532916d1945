"""A school's hosting, natively on loopback, no container engine: what docker-compose.yml runs.

One PostgreSQL (the lab's ``pg-1``) and one Redis for the channel layer (password and all), two
``manage.py serve`` replicas sharing them and one secret key, and Debian's nginx running the
shipped deploy/nginx.conf in front of them (:mod:`tests.deploy.proxies`); for HTTPS, two more
replicas told their public address is https, behind Debian's Caddy running the shipped
deploy/Caddyfile. The database, the layer and the nginx stack are started once per module;
the HTTPS stack for the one test that uses it.

Each replica is a host of its own, as in compose: it runs in a UTS namespace of its own
(``unshare --uts``, as root) under the host name ``app-1``, ``app-2``..., so the app cannot tell
a sibling's death from the kernel's process table (which loopback shares) and has to learn it as
it would across machines. Not root: the replicas share this machine's name, and say so.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import secrets
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from bench.app import App
from lockviz.lab.labs import LocalLab
from lockviz.lab.ports import free_port
from lockviz.lab.servers.base import PortTaken
from lockviz.lab.servers.postgres import PostgresServer
from lockviz.lab.servers.redis import LayerServer
from tests.conftest import ONE_MACHINE
from tests.deploy.proxies import Caddy, Nginx, Proxy

SEPARATE_HOSTS = os.geteuid() == 0  # unshare --uts needs CAP_SYS_ADMIN


class Replica(App):
    """``manage.py serve`` as one replica of a deployment: a host name of its own (as root),
    its log in the test's directory, answering on :attr:`url` once constructed."""

    def __init__(self, name: str, workdir: Path, env: dict[str, str]) -> None:
        self.name = name
        # exec'd in place: the pid is the app's own, for kill -9
        wrap = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name]
        super().__init__(
            str(workdir / f"{name}-unused.sqlite3"), str(workdir / f"{name}.log"), env,
            wrap=wrap if SEPARATE_HOSTS else [], probe="/healthz",
        )  # fmt: skip


class Layer:
    """The channel layer's redis-server, which can be stopped and started again on its port."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = str(workdir)
        self.server = LayerServer("layer", self.workdir)
        self.server.launch()
        self.server.wait_ready()

    @property
    def url(self) -> str:
        password = urllib.parse.quote(self.server.password, safe="")
        return f"redis://:{password}@127.0.0.1:{self.server.port}/0"

    def stop(self) -> None:
        """Really stopped: the process ends and its port closes (SIGSTOP would only freeze it)."""
        self.server.stop()

    def start_again(self) -> None:
        """A new redis-server on the same port with the same password, as a restart brings."""
        old = self.server
        self.server = LayerServer("layer", self.workdir, port=old.port, password=old.password)
        self.server.launch()
        self.server.wait_ready()


@dataclass
class Database:
    """The replicas' PostgreSQL, read directly by the test (the source of truth for runs)."""

    host: str
    port: int
    password: str

    @property
    def url(self) -> str:
        return f"postgresql://postgres:{self.password}@{self.host}:{self.port}/lockviz"

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute(sql, args).fetchall()

    def status(self, run_id: str) -> str:
        rows = self.query("SELECT status FROM lockviz_run WHERE id = %s", run_id)
        assert rows, f"run {run_id} is not in the database"
        return str(rows[0][0])

    def seqs(self, run_id: str) -> list[int]:
        rows = self.query("SELECT seq FROM lockviz_runevent WHERE run_id = %s ORDER BY seq", run_id)
        return [int(seq) for (seq,) in rows]


@dataclass
class Stack:
    """Everything a school runs: a database, a layer, replicas, and the proxy in front."""

    db: Database
    layer: Layer
    replicas: dict[str, Replica]
    proxy: Proxy

    @property
    def url(self) -> str:
        return self.proxy.url

    def replica_of(self, run_id: str) -> Replica:
        """The replica whose process runs ``run_id``: its ``host`` is "<host name>:<pid>:…"."""
        host = str(self.db.query("SELECT host FROM lockviz_run WHERE id = %s", run_id)[0][0])
        for replica in self.replicas.values():
            named = replica.name if SEPARATE_HOSTS else f"{os.uname().nodename}:{replica.proc.pid}"
            if host.startswith(f"{named}:"):
                return replica
        raise AssertionError(f"run {run_id} is run by {host!r}, none of {list(self.replicas)}")


def replica_env(db: Database, layer: Layer, public_url: str, key: str) -> dict[str, str]:
    return {
        "LOCKVIZ_DATABASE_URL": db.url,
        "LOCKVIZ_CHANNEL_REDIS": layer.url,
        "LOCKVIZ_PUBLIC_URL": public_url,
        "LOCKVIZ_TRUSTED_PROXIES": "127.0.0.1",
        "LOCKVIZ_SECRET_KEY": key,  # both replicas sign sessions alike
        # Each replica runs its own runs, as before lab hosts: the scenarios here (kill -9 of a
        # replica, a Redis blip) are about replicas; tests/deploy/test_labhosts.py is the tier.
        "LOCKVIZ_LAB_HOSTS": "inprocess",
        **ONE_MACHINE,  # every learner of these tests comes from this one machine
    }


def start_replicas(names: list[str], workdir: Path, env: dict[str, str]) -> dict[str, Replica]:
    """Replicas started one after the other (the first migrates the empty database)."""
    started: dict[str, Replica] = {}
    try:
        for name in names:
            started[name] = Replica(name, workdir, {**env, "LOCKVIZ_STATE_DIR": str(workdir)})
    except BaseException:
        stop_all(started.values())
        raise
    return started


def stop_all(replicas: Any) -> None:
    with concurrent.futures.ThreadPoolExecutor() as pool:
        list(pool.map(lambda r: r.stop() if r.alive else None, replicas))


@pytest.fixture(scope="module")
def backing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Database, Layer, str]]:
    """The PostgreSQL with an empty ``lockviz`` database, the layer's Redis, the secret key."""
    workdir = tmp_path_factory.mktemp("backing")
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        assert isinstance(pg, PostgresServer)
        # As compose's postgres:15 has it (the lab's runs need only 40): restarted with it, on
        # other ports if another process took its own while it was down.
        pg.extra["max_connections"] = "100"
        restarted(pg)
        db = Database(pg.host, pg.port, pg.password or "")
        with psycopg.connect(
            host=pg.host, port=pg.port, user="postgres", password=pg.password,
            dbname="postgres", autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute("CREATE DATABASE lockviz")
        layer = Layer(workdir / "layer")
        try:
            yield db, layer, secrets.token_urlsafe(40)
        finally:
            layer.stop()


def restarted(pg: PostgresServer, tries: int = 3) -> None:
    """``pg`` stopped and started again: on other ports when its own were taken meanwhile (its
    port is free while it is down, and other tests' servers pick ports too)."""
    pg.stop()
    for attempt in range(1, tries + 1):
        pg.launch()
        try:
            pg.wait_ready()
            return
        except PortTaken:
            if attempt == tries:
                raise
            pg.stop()
            pg.port, pg.pooler_port = free_port(), free_port()


@contextlib.contextmanager
def serving(
    backing: tuple[Database, Layer, str], workdir: Path, names: list[str],
    proxy: Callable[[Path, dict[str, int], int], Proxy], scheme: str = "http",
) -> Iterator[Stack]:  # fmt: skip
    """Replicas ``names`` told their public URL is ``scheme``, behind ``proxy``'s shipped
    configuration (upstreams ``app-1``, ``app-2``...)."""
    db, layer, key = backing
    port = free_port()  # the proxy's, known before the replicas are told their public URL
    env = replica_env(db, layer, f"{scheme}://127.0.0.1:{port}", key)
    replicas = start_replicas(names, workdir, env)
    try:
        upstreams = {f"app-{i}": replica.port for i, replica in enumerate(replicas.values(), 1)}
        front = proxy(workdir / "proxy", upstreams, port)
        try:
            yield Stack(db, layer, replicas, front)
        finally:
            front.stop()
    finally:
        stop_all(replicas.values())


@pytest.fixture(scope="module")
def stack(
    backing: tuple[Database, Layer, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Two replicas behind the shipped nginx.conf, over plain HTTP."""
    with serving(backing, tmp_path_factory.mktemp("nginx-stack"), ["app-1", "app-2"], Nginx) as s:
        yield s


@pytest.fixture
def https_stack(
    backing: tuple[Database, Layer, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Two replicas told their public URL is https, behind the shipped Caddyfile (for one
    test: stopped after it, so that the nginx stack's scenarios have the machine)."""
    workdir = tmp_path_factory.mktemp("caddy-stack")
    with serving(backing, workdir, ["app-3", "app-4"], Caddy, scheme="https") as s:
        yield s
