"""Where a spare-served run's start goes, phase by phase, from "servers taken" to the clock's start.

A run that takes warm spares (lockviz.lab.spares) still waits for its own parts before its clock
starts: a proxy, one forked client process per client that connects and logs in through it, and
the watchers. This runs built-ins in this process on a :class:`LocalLab` with a pool of spares
(each run waits until its sets are stocked, so every run is spare-served) and stamps each phase
with CLOCK_MONOTONIC, which every process on the machine shares:

* in this process: servers taken, the proxy forked and listening, each client forked, each
  client ready (its ``_ready`` line's own stamp), each watcher connected and ready, the clock's
  start (``engine._t0_ns``);
* in each client process: forked, config read, its lock's session connected (PostgreSQL:
  ``psycopg.connect``), its statements prepared, its storage connection prepared, ready; and
  its CPU time by then. The fork server is this module (``python -m bench.startphases FD``):
  it wraps those functions, then serves as :mod:`lockviz.lab.children.forkserver` does, so
  every child it forks stamps its phases into a file named after this process;
* with ``--server-log``, in each PostgreSQL backend: forked (``connection received``) and
  authenticated (``connection authorized``), from the server's log (``log_connections``;
  millisecond stamps), which splits a PostgreSQL login into TCP + backend fork, SCRAM, and the
  backend's start-up after it.

    .venv/bin/python -m bench.startphases --runs 7 gc-pause-fenced pg-happy [--server-log]

It prints each phase's median over the runs (ms after "servers taken"), the CPU time each part
spent (``/proc/PID/schedstat``) and the 1-minute load average before and after.

One module past the usual ~300 lines, on purpose: the fork server it runs as writes the stamps
its bench reads, and the two change together.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

MARKS = "/tmp/lockviz-startphases-{pid}.jsonl"  # the bench process's pid: the fork server's parent


def _mark(what: str, **extra: object) -> None:
    """A stamp from a client process, appended to its bench's file (one write: atomic)."""
    line = {"pid": os.getpid(), "what": what, "t_ns": time.monotonic_ns(), **extra}
    line["cpu_ns"] = time.process_time_ns()
    with open(MARKS.format(pid=_bench_pid), "a") as f:
        f.write(json.dumps(line) + "\n")


_bench_pid = 0


def _stamped(owner: Any, name: str, before: str, after: str | None = None) -> None:
    """Wrap ``owner.name`` so that it stamps ``before`` on entry and ``after`` on return."""
    inner = getattr(owner, name)

    @functools.wraps(inner)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _mark(before)
        try:
            return inner(*args, **kwargs)
        finally:
            if after:
                _mark(after)

    setattr(owner, name, wrapper)


def fork_server() -> None:
    """The instrumented fork server (run by the lab as ``python -m bench.startphases FD``)."""
    global _bench_pid
    _bench_pid = os.getppid()
    import algorithms.fenced_storage
    import algorithms.postgres_lock
    import algorithms.redis_lock
    from lockviz.lab import config
    from lockviz.lab.backends import postgres
    from lockviz.lab.children import forkserver, worker

    become = forkserver._become

    def stamped_become(role: str, server_pid: int, sock: Any, fds: list[int]) -> None:
        _mark("forked")  # the forked child's first instruction
        become(role, server_pid, sock, fds)

    forkserver._become = stamped_become
    _stamped(config.ClientConfig, "from_json", "config read")
    _stamped(postgres, "connect", "session connecting", "session connected")
    for cls in (algorithms.postgres_lock.PostgresLock, algorithms.redis_lock.RedisLock):
        _stamped(cls, "prepare", "lock preparing", "lock prepared")
    _stamped(algorithms.fenced_storage.FencedStorage, "prepare", "storage preparing",
             "storage prepared")  # fmt: skip
    emit = worker.Worker.emit

    def stamped_emit(self: worker.Worker, kind: str, details: Any) -> None:
        if kind == "_ready":
            _mark("ready")
        emit(self, kind, details)

    worker.Worker.emit = stamped_emit  # type: ignore[method-assign]
    forkserver.main()


# -- the bench process ----------------------------------------------------------------------


class Stamps:
    """This process's stamps of one run, by phase name, in ns; and CPU time, by whose."""

    def __init__(self) -> None:
        self.t: dict[str, int] = {}
        self.cpu: dict[str, float] = {}  # ms of CPU from servers taken to the clock's start
        self.server_pids: list[int] = []
        self.proxy_pid = 0
        self._taken: dict[int, int] = {}
        self._app_ns = 0

    def at(self, what: str, t_ns: int | None = None) -> None:
        self.t.setdefault(what, t_ns or time.monotonic_ns())

    def taken(self, server_pids: list[int]) -> None:
        self.server_pids = server_pids
        self._taken = _cpu_of_trees(server_pids)
        self._app_ns = time.process_time_ns()

    def started(self) -> None:
        """The clock starts: what the servers' processes (their backends too), the proxy and
        this process (every thread: the engine, the watchers, the pipes' readers) spent."""
        now = _cpu_of_trees(self.server_pids)
        spent = sum(ns - self._taken.get(pid, 0) for pid, ns in now.items())
        self.cpu["servers (backends too)"] = spent / 1e6
        self.cpu["app process"] = (time.process_time_ns() - self._app_ns) / 1e6
        self.cpu["proxy"] = _cpu_of_trees([self.proxy_pid]).get(self.proxy_pid, 0) / 1e6


def _cpu_of_trees(pids: list[int]) -> dict[int, int]:
    """ns on a CPU of each of ``pids`` and their children (``/proc/PID/schedstat``)."""
    from lockviz.lab.procs import children

    found: dict[int, int] = {}
    for pid in pids:
        for each in (pid, *children(pid)):
            with contextlib.suppress(OSError, ValueError), open(f"/proc/{each}/schedstat") as f:
                found[each] = int(f.read().split()[0])
    return found


def _instrument(stamps: Callable[[], Stamps], logs: dict[int, str]) -> None:
    """Wrap the lab's start in this process: each phase stamped into the current run's."""
    from lockviz.lab import clients, labs, links

    servers = labs.LocalLab.servers

    def servers_taken(self: labs.LocalLab, *args: Any, **kwargs: Any) -> Iterator[Any]:
        with servers(self, *args, **kwargs) as started:
            stamps().at("servers taken")
            stamps().taken([pid for server in started.servers.values() for pid in server.pids()])
            yield started

    labs.LocalLab.servers = contextlib.contextmanager(servers_taken)  # type: ignore[method-assign]
    start_links = links.Links.start

    def links_start(self: links.Links) -> None:
        stamps().at("proxy: fork")
        start_links(self)
        stamps().at("proxy: listening")
        stamps().proxy_pid = self.proc.pid if self.proc is not None else 0

    links.Links.start = links_start  # type: ignore[method-assign]
    start_client = clients.ClientProcess.start

    def client_start(self: clients.ClientProcess) -> None:
        stamps().at(f"{self.name}: fork asked")
        start_client(self)
        proc = self.proc
        stamps().at(f"{self.name}: fork answered")
        if proc is not None:
            stamps().t[f"pid {self.name}"] = proc.pid

    clients.ClientProcess.start = client_start  # type: ignore[method-assign]
    _instrument_watchers_and_servers(stamps, logs)


def _instrument_watchers_and_servers(stamps: Callable[[], Stamps], logs: dict[int, str]) -> None:
    """The watchers' connections, the clock's start, and each PostgreSQL server's log."""
    from lockviz.lab import engine
    from lockviz.lab.servers import postgres
    from lockviz.lab.watchers import base
    from lockviz.lab.watchers import postgres as pg_watcher
    from lockviz.lab.watchers import redis as redis_watcher

    ready = base.Watcher.ready

    def watcher_ready(self: base.Watcher) -> None:
        stamps().at(f"watcher {self.name}: ready")
        ready(self)

    base.Watcher.ready = watcher_ready  # type: ignore[method-assign]
    for module in (pg_watcher, redis_watcher):
        connect = module.connect

        def watcher_connect(*args: Any, _connect: Any = connect, **kwargs: Any) -> Any:
            stamps().at("watcher: connecting")
            found = _connect(*args, **kwargs)
            stamps().at("watcher: connected")
            return found

        module.connect = watcher_connect  # type: ignore[attr-defined]
    record = engine.RunEngine.record

    def run_started(
        self: engine.RunEngine, actor: str, kind: str, details: Any, t_ns: int | None = None
    ) -> None:
        if kind == "run_started":
            stamps().started()
        record(self, actor, kind, details, t_ns)

    engine.RunEngine.record = run_started  # type: ignore[method-assign]
    stop = postgres.PostgresServer.stop

    def pg_stop(self: postgres.PostgresServer) -> None:
        with contextlib.suppress(OSError), open(os.path.join(self.workdir, "postgres.log")) as f:
            logs[self.port] = f.read()
        stop(self)

    postgres.PostgresServer.stop = pg_stop  # type: ignore[method-assign]


LOGGED = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \w+ \[(\d+)\] (?:\S+ )?LOG:  connection "
    r"(received|authorized): .*?(?:application_name=(\S+))?$"
)


def backend_stamps(log: str, wall_minus_mono_ns: int) -> dict[str, int]:
    """Each named session's backend forked and authenticated, as monotonic ns, from the log."""
    import datetime

    by_pid: dict[str, dict[str, Any]] = {}
    for line in log.splitlines():
        found = LOGGED.match(line)
        if not found:
            continue
        when, pid, what, app = found.groups()
        wall = datetime.datetime.strptime(when, "%Y-%m-%d %H:%M:%S.%f").astimezone()
        t_ns = int(wall.timestamp() * 1e9) - wall_minus_mono_ns
        entry = by_pid.setdefault(pid, {})
        entry[what] = t_ns
        if app:
            entry["app"] = app
    out: dict[str, int] = {}
    for entry in by_pid.values():
        app = entry.get("app")
        if app in ("alice", "bob", "lockviz-observer") and "received" in entry:
            name = "watcher" if app == "lockviz-observer" else app
            out[f"{name}: backend forked"] = entry["received"]
            out[f"{name}: authenticated"] = entry.get("authorized", entry["received"])
    return out


def one_run(slug: str, lab: Any, pool: Any, keys: list[Any], server_log: bool) -> dict[str, float]:
    from lockviz.lab.engine import RunEngine
    from lockviz.scenarios.library import builtin

    for key in keys:
        if not pool.wait_ready(key, 1, 120):
            raise SystemExit(f"no spare of {key} in 120 s")
    time.sleep(1.5)  # the pool's SETTLE_S after the last take, and the refill, are over
    current = Stamps()
    _runs.append(current)
    marks = MARKS.format(pid=os.getpid())
    with contextlib.suppress(FileNotFoundError):
        os.unlink(marks)
    engine = RunEngine(builtin()[slug], lab)
    result = engine.run()
    if result.error:
        raise SystemExit(f"{slug}: {result.error}")
    t = dict(current.t)
    t["clock started"] = engine._t0_ns
    pids = {int(v): k.removeprefix("pid ") for k, v in t.items() if k.startswith("pid ")}
    cpu = current.cpu
    with open(marks) as f:
        for line in f:
            mark = json.loads(line)
            client = pids.get(int(mark["pid"]))
            if client:
                t[f"{client}: {mark['what']}"] = int(mark["t_ns"])
                if mark["what"] == "ready":
                    cpu[client] = int(mark["cpu_ns"]) / 1e6
    if server_log:
        offset = time.time_ns() - time.monotonic_ns()
        for log in _logs.values():
            t.update(backend_stamps(log, offset))
        _logs.clear()
    zero = t["servers taken"]
    found = {k: (v - zero) / 1e6 for k, v in t.items() if not k.startswith("pid ")}
    return found | {f"CPU ms: {whose}": ms for whose, ms in current.cpu.items()}


_runs: list[Stamps] = []
_logs: dict[int, str] = {}


def main() -> None:
    if len(sys.argv) == 2 and sys.argv[1].isdigit():  # the lab starting its fork server
        fork_server()
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="+", help="built-in scenarios, e.g. pg-happy")
    parser.add_argument("--runs", type=int, default=7, help="runs of each (1-50)")
    parser.add_argument("--server-log", action="store_true", help="log PostgreSQL's logins")
    args = parser.parse_args()
    if not 1 <= args.runs <= 50:
        parser.error("--runs must be between 1 and 50")
    from lockviz.lab import children, spares
    from lockviz.lab.labs import LocalLab
    from lockviz.lab.servers import postgres
    from lockviz.scenarios.library import builtin

    unknown = [slug for slug in args.slugs if slug not in builtin()]
    if unknown:
        parser.error(f"no built-in scenario {', '.join(unknown)}")
    children.FORK_SERVER = "bench.startphases"
    if args.server_log:
        postgres.SERVER_SETTINGS.update(log_connections="on", log_line_prefix="%m [%p] %a ")
    _instrument(lambda: _runs[-1], _logs)
    keys = {slug: _keys(builtin()[slug].servers) for slug in args.slugs}
    pool = spares.SparePool(1, 1, warm=[k for ks in keys.values() for k in ks]).start()
    lab = LocalLab(spares=pool)
    load = os.getloadavg()[0]
    found: dict[str, list[dict[str, float]]] = {slug: [] for slug in args.slugs}
    try:
        for _ in range(args.runs):
            for slug in args.slugs:
                found[slug].append(one_run(slug, lab, pool, keys[slug], args.server_log))
    finally:
        pool.stop()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(MARKS.format(pid=os.getpid()))
    print(f"load (1 min) {load:.1f} -> {os.getloadavg()[0]:.1f}; {args.runs} runs each")
    print("(CPU ms: from servers taken to the clock's start; a client's: from its fork to ready)")
    for slug, runs in found.items():
        print(f"\n{slug}: ms after servers taken (median [min-max])")
        names = sorted({k for run in runs for k in run}, key=lambda k: (k.startswith("CPU"),
            statistics.median(run[k] for run in runs if k in run)))  # fmt: skip
        for name in names:
            values = [run[name] for run in runs if name in run]
            print(f"  {name:34} {statistics.median(values):7.1f} "
                  f"[{min(values):.1f}-{max(values):.1f}]")  # fmt: skip


def _keys(names: list[str]) -> list[Any]:
    from lockviz.catalogue import server_kind
    from lockviz.lab.sparekeys import key_for

    groups: dict[str, list[str]] = {}
    for name in names:
        kind = server_kind(name)
        groups.setdefault(kind.prefix if kind else name, []).append(name)
    return [key_for(group) for group in groups.values()]


if __name__ == "__main__":
    main()
