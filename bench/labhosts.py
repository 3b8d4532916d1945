"""Lab hosts on this machine: spread, kill -9, drain and a click's round trip (issue 21, point 7).

One script past the usual ~300 lines, on purpose: a bench is read and run as one file (its
processes, its measures and its table).

Two web processes (``serve`` with ``LOCKVIZ_LAB_HOSTS=remote``) and two lab hosts (``manage.py
labhost``, each under a host name of its own as root, standing in for two machines) share a
PostgreSQL and a Redis, as tests/deploy/test_labhosts.py sets them up. Then:

* **spread**: 40 runs of ``gc-pause-fenced`` pressed at once, half through each web process:
  how many each host took (against the free slots each advertised, sampled from its heartbeat
  while runs waited), and how many met their ``expect`` (inconclusive is honest, never wrong);
* **kill -9**: runs of two clients taking turns for 30 s on both hosts; kill -9 of the host with
  the most: how long until each of its runs read "interrupted" (goal ≤ 10 s), how the other
  host's runs ended, and processes of the killed host still alive 10 s later (goal 0);
* **drain**: runs of 10 s on both hosts; SIGTERM to one: how many of its runs ended with their
  verdict (goal: all), and its exit code;
* **click**: a free-play session on a host, clicked through the web processes (neither runs
  it): the HTTP round trip of a click p50/p99, and the relay's own round trip through Redis
  (a refused click asked straight over lockviz.runs.relay's protocol: no HTTP) p50/p99 (goal
  p99 ≤ 20 ms); then the same clicks on a third ``serve`` that runs its run itself
  (``inprocess``), the baseline.

It prints a table and writes it into docs/performance.md (its "Lab hosts" section).

    .venv/bin/python -m bench.labhosts            # as root: hosts with names of their own
    .venv/bin/python -m bench.labhosts --no-doc
    .venv/bin/python -m bench.labhosts --only spread --keep /tmp/contradicted --no-doc

``--keep DIR`` saves the whole history of each run whose verdict contradicted its ``expect``
(its events as the store keeps them, with its verdict): the evidence a wrong verdict needs; and
of each inconclusive one in ``DIR/inconclusive/``, printing what lost its story.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import platform
import secrets
import signal
import statistics
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import redis
from websockets.exceptions import WebSocketException
from websockets.sync.client import connect
from websockets.typing import Origin

from bench.app import App
from bench.browser import Browser
from bench.capacity import start as press
from bench.doc import write_section
from bench.labhost import SEPARATE_HOSTS, LabHost, turns
from lockviz.lab import procs
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers.postgres import PostgresServer
from lockviz.lab.servers.redis import RedisServer

DOC = "docs/performance.md"
BEGIN, END = "<!-- labhosts: begin -->", "<!-- labhosts: end -->"
SCENARIO = "gc-pause-fenced"
PHASES = ("click", "baseline", "spread", "kill-9", "drain")  # in the order they run


@dataclass
class Bench:
    db: str  # the PostgreSQL URL
    layer: str  # the Redis URL
    webs: list[App]
    hosts: dict[str, LabHost]
    env: dict[str, str]
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    keep: str = ""  # where the history of a contradicted run goes ("": nowhere)

    def run(self, run_id: str) -> dict[str, Any]:
        with psycopg.connect(self.db, autocommit=True) as conn:
            row = conn.execute(
                "SELECT status, host, expect_met, verdict FROM lockviz_run WHERE id = %s",
                (run_id,),
            ).fetchone()
        assert row is not None, f"run {run_id} is not in the database"
        return dict(zip(("status", "host", "expect_met", "verdict"), row, strict=True))

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's events as the store keeps them, in order."""
        with psycopg.connect(self.db, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT e.data FROM lockviz_runevent e WHERE e.run_id = %s ORDER BY e.seq",
                (run_id,),
            ).fetchall()
        return [row[0] for row in rows]

    def keep_contradicted(self, runs: list[str]) -> list[str]:
        """Save each run whose verdict contradicted its ``expect`` to :attr:`keep`, and each
        inconclusive one to its ``inconclusive/`` (what lost the story): the paths."""
        if not self.keep:
            return []
        paths: list[str] = []
        for run_id in runs:
            found = self.run(run_id)
            honest = (found["verdict"] or {}).get("inconclusive")
            if found["status"] != "finished":  # failed, cancelled, interrupted: say why
                why = [e.get("error") for e in self.events(run_id) if e["kind"] == "run_failed"]
                print(f"  {found['status']}: {run_id}: {why}", flush=True)
            if found["expect_met"] is not False and not honest:
                continue
            where = os.path.join(self.keep, "inconclusive") if honest else self.keep
            os.makedirs(where, exist_ok=True)
            path = os.path.join(where, f"{SCENARIO}-{run_id}.json")
            events = self.events(run_id)
            with open(path, "w") as f:
                json.dump({"run": run_id, **found, "events": events}, f, default=str)
            if honest:
                lost = next(e for e in events if e["kind"] == "schedule_shifted" and not e["kept"])
                print(f"  inconclusive: {run_id}: {lost['what']} ({lost['late_ms']} ms)")
            else:
                print(f"  contradicted: {run_id} kept in {path}", flush=True)
            paths.append(path)
        return paths

    def host_name(self, host: str) -> str:
        return next((n for n, lab in self.hosts.items() if lab.identity == host), host or "-")

    def wait(self, what: str, ready: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not ready():
            if time.monotonic() > deadline:
                print(f"  {what}: not within {timeout_s:g} s")
                return False
            time.sleep(0.2)
        return True

    def slots(self) -> dict[str, int]:
        """Each host's free slots as its heartbeat says now."""
        client = redis.Redis.from_url(self.layer, socket_timeout=5)
        found: dict[str, int] = {}
        for name, lab in self.hosts.items():
            raw = client.get(f"lockviz:labhost:{lab.identity}")
            found[name] = int(json.loads(raw)["free"]) if raw else 0
        return found


@contextmanager
def tier(workdir: Path) -> Iterator[Bench]:
    with LocalLab().servers(["pg-1"]) as servers:
        pg = servers["pg-1"]
        assert isinstance(pg, PostgresServer)
        pg.extra["max_connections"] = "200"  # 4 processes and 40 runs' stores
        pg.kill()
        pg.launch()
        pg.wait_ready()
        with psycopg.connect(
            host=pg.host, port=pg.port, user="postgres", password=pg.password,
            dbname="postgres", autocommit=True,
        ) as conn:  # fmt: skip
            conn.execute("CREATE DATABASE lockviz")
        db = f"postgresql://postgres:{pg.password}@{pg.host}:{pg.port}/lockviz"
        layer = RedisServer("layer", str(workdir / "layer"))
        layer.launch()
        layer.wait_ready()
        password = urllib.parse.quote(layer.password or "", safe="")
        url = f"redis://:{password}@127.0.0.1:{layer.port}/0"
        env = {
            "LOCKVIZ_DATABASE_URL": db, "LOCKVIZ_CHANNEL_REDIS": url,
            "LOCKVIZ_SECRET_KEY": secrets.token_urlsafe(40), "LOCKVIZ_STATE_DIR": str(workdir),
            "LOCKVIZ_LAB_HOSTS": "remote", "LOCKVIZ_MAX_PER_BROWSER": "100",
            "LOCKVIZ_MAX_PER_ADDRESS": "1000", "LOCKVIZ_PLAY_PER_ADDRESS": "100",
            "LOCKVIZ_IMPORTS_PER_HOUR": "10000",
        }  # fmt: skip
        webs: list[App] = []
        hosts: dict[str, LabHost] = {}
        try:
            for name in ("web-1", "web-2"):  # one after the other: the first migrates
                wrap = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', name]
                log = str(workdir / f"{name}.log")
                wraps = wrap if SEPARATE_HOSTS else []
                webs.append(
                    App(str(workdir / "unused.sqlite3"), log, env, wrap=wraps, probe="/healthz")
                )
            hosts = {name: LabHost(name, workdir, env) for name in ("lab-1", "lab-2")}
            yield Bench(db, url, webs, hosts, env)
        finally:
            for lab in hosts.values():
                lab.stop()
            for web in webs:
                web.stop()
            layer.stop()


def watched(url: str, runs: list[str]) -> threading.Event:
    """Each run watched, as its open page would (a run nobody watches while it waits for its
    host's turn to start is cancelled): set the event returned to stop watching."""
    stop = threading.Event()

    def watch(run_id: str) -> None:
        with (
            contextlib.suppress(OSError, TimeoutError, WebSocketException),
            connect(f"{url.replace('http', 'ws', 1)}/ws/runs/{run_id}/",
                    origin=Origin(url), open_timeout=10) as ws,
        ):  # fmt: skip
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    ws.recv(timeout=1)

    for run in runs:
        threading.Thread(target=watch, args=(run,), daemon=True).start()
    return stop


def spread(bench: Bench, count: int) -> None:
    browsers = [Browser(bench.webs[n % 2].url) for n in range(count)]
    sampled: dict[str, list[int]] = {name: [] for name in bench.hosts}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for name, free in bench.slots().items():
                sampled[name].append(free)
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        pressed = list(pool.map(lambda b: press(b, SCENARIO), browsers))  # 40 at once
    runs = [run for run, _ in pressed if run]
    refused = [why for run, why in pressed if not run]
    stop = watched(bench.webs[0].url, runs)
    bench.wait("every run ended", lambda: all(
        bench.run(r)["status"] not in ("queued", "running") for r in runs), 600)  # fmt: skip
    took = time.monotonic() - started
    done.set()
    stop.set()
    found = [bench.run(r) for r in runs]
    bench.keep_contradicted(runs)
    per_host = {name: 0 for name in bench.hosts}
    for run in found:
        per_host[bench.host_name(run["host"])] = per_host.get(bench.host_name(run["host"]), 0) + 1
    met = sum(1 for r in found if r["expect_met"] is True)
    wrong = sum(1 for r in found if r["expect_met"] is False)
    honest = sum(1 for r in found if (r["verdict"] or {}).get("inconclusive"))
    other = len(found) - met - wrong - honest  # failed, cancelled, interrupted
    free = {n: statistics.mean(v) if v else 0.0 for n, v in sampled.items()}
    bench.rows += [
        (f"{count} runs pressed at once ({SCENARIO}), through 2 web processes",
         f"{len(runs)} started, {len(refused)} refused; all ended after {took:.0f} s", ""),
        ("  taken by each host (its mean free slots while runs waited)",
         ", ".join(f"{n}: {per_host.get(n, 0)} ({free[n]:.1f})" for n in bench.hosts),
         "in proportion"),
        ("  met `expect` / inconclusive / contradicted / other",
         f"{met} / {honest} / {wrong} / {other}", f"{count}/{count} or inconclusive, 0 wrong"),
    ]  # fmt: skip


def kill_9(bench: Bench) -> None:
    # Four: two per host even when a host's adaptive limit is down to its floor (MIN_RUNS).
    runs = started([Browser(bench.webs[0].url).run_scenario(turns(30, f"turns {n}"))
                    for n in range(4)])  # fmt: skip
    stop = watched(bench.webs[1].url, runs)

    def playing(run: str) -> bool:
        found = bench.run(run)
        return bool(found["status"] == "running" and found["host"])

    bench.wait("the runs playing", lambda: all(playing(r) for r in runs), 90)
    runs = [run for run in runs if playing(run)]
    time.sleep(3)
    by_host: dict[str, list[str]] = {}
    for run in runs:
        by_host.setdefault(bench.host_name(bench.run(run)["host"]), []).append(run)
    victim_name = max(by_host, key=lambda n: len(by_host[n]))
    victim = bench.hosts[victim_name]
    below = descendants(victim.proc.pid)
    victim.kill()
    killed = time.monotonic()
    told: dict[str, float] = {}
    while len(told) < len(by_host[victim_name]) and time.monotonic() - killed < 30:
        for run in by_host[victim_name]:
            if run not in told and bench.run(run)["status"] == "interrupted":
                told[run] = time.monotonic() - killed
        time.sleep(0.1)
    time.sleep(max(0.0, 10 - (time.monotonic() - killed)))
    orphans = [pid for pid, ticks in below.items() if alive_as(pid, ticks)]
    for pid in orphans:  # counted: now they go, so that the phases do not add up
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    others = [run for name, rs in by_host.items() if name != victim_name for run in rs]
    bench.wait("the other host's runs ended", lambda: all(
        bench.run(r)["status"] not in ("queued", "running") for r in others), 90)  # fmt: skip
    ended = [bench.run(r)["status"] for r in others]
    stop.set()
    worst = max(told.values()) if told else float("nan")
    bench.rows += [
        (f"kill -9 of a host with {len(by_host[victim_name])} runs (of {len(runs)} playing)",
         f"{len(told)}/{len(by_host[victim_name])} interrupted, the last after {worst:.1f} s",
         "all within 10 s"),
        ("  the other host's runs", ", ".join(ended) or "none", "finished"),
        ("  the killed host's processes alive 10 s later", str(len(orphans)), "0"),
    ]  # fmt: skip
    del bench.hosts[victim_name]
    bench.hosts["lab-3"] = LabHost("lab-3", victim.log_path.parent, bench.env)


def drain(bench: Bench) -> None:
    runs = started([Browser(bench.webs[1].url).run_scenario(turns(10, f"drained {n}"))
                    for n in range(4)])  # fmt: skip
    stop = watched(bench.webs[0].url, runs)
    bench.wait("the runs playing", lambda: all(bench.run(r)["host"] for r in runs), 120)
    by_host: dict[str, list[str]] = {}
    for run in runs:
        by_host.setdefault(bench.host_name(bench.run(run)["host"]), []).append(run)
    name = max(by_host, key=lambda n: len(by_host[n]))
    host = bench.hosts[name]
    host.term()
    termed = time.monotonic()
    host.proc.wait(120)
    exited = time.monotonic() - termed
    ended = [bench.run(r) for r in by_host[name]]
    kept = sum(1 for r in ended if r["status"] == "finished" and r["verdict"])
    stop.set()
    bench.rows += [
        (f"SIGTERM (drain) of a host with {len(by_host[name])} runs",
         f"{kept}/{len(by_host[name])} ended with their verdict; exit {host.proc.returncode} "
         f"after {exited:.1f} s", "0 lost"),
    ]  # fmt: skip
    del bench.hosts[name]
    bench.hosts["lab-4"] = LabHost("lab-4", host.log_path.parent, bench.env)


def click(bench: Bench, count: int) -> None:
    learner = Browser(bench.webs[0].url)
    (run,) = started([learner.play()])
    stop = watched(bench.webs[1].url, [run])
    bench.wait("the session playing", lambda: bench.run(run)["status"] == "running", 120)
    time.sleep(3)
    https: list[float] = []
    for n in range(count):
        web = learner.at(bench.webs[n % 2].url)
        began = time.perf_counter()
        got = web.click(run, do=("acquire", "release")[n % 2], client="alice")
        https.append((time.perf_counter() - began) * 1000)
        assert got == "done", f"click {n} through web-{n % 2 + 1}: {got}"
    host = bench.run(run)["host"]
    client = redis.Redis.from_url(bench.layer, socket_timeout=10)
    relayed: list[float] = []
    for _ in range(count * 2):
        reply = f"lockviz:relay:reply:{secrets.token_urlsafe(8)}"
        request = {"op": "inject", "run": run, "data": {"do": "pause", "client": "zed"},
                   "reply": reply, "deadline": time.time() + 5}  # fmt: skip
        began = time.perf_counter()
        client.rpush(f"lockviz:relay:{host}", json.dumps(request))
        answer = client.blpop([reply], timeout=5)
        relayed.append((time.perf_counter() - began) * 1000)
        assert answer is not None and b"zed" in answer[1], answer
    learner.click(run, "finish")
    stop.set()
    bench.rows += [
        (f"a click through a web process to the host ({count}, HTTP)", p50_p99(https), ""),
        (f"the relay's round trip through Redis ({count * 2}, refused clicks)",
         p50_p99(relayed), "p99 ≤ 20 ms"),
    ]  # fmt: skip


def baseline(bench: Bench, count: int, workdir: Path) -> None:
    """The same clicks on a web process that runs the run itself (``inprocess``, as before lab
    hosts), on the same machine and database: what the tier adds to a click."""
    env = {**bench.env, "LOCKVIZ_LAB_HOSTS": "inprocess"}
    app = App(str(workdir / "unused.sqlite3"), str(workdir / "inprocess.log"), env,
              probe="/healthz")  # fmt: skip
    try:
        learner = Browser(app.url)
        (run,) = started([learner.play()])
        stop = watched(app.url, [run])
        bench.wait("the session playing", lambda: bench.run(run)["status"] == "running", 120)
        time.sleep(3)
        ms: list[float] = []
        for n in range(count):
            began = time.perf_counter()
            got = learner.click(run, do=("acquire", "release")[n % 2], client="alice")
            ms.append((time.perf_counter() - began) * 1000)
            assert got == "done", f"click {n} in process: {got}"
        learner.click(run, "finish")
        stop.set()
    finally:
        app.stop()
    bench.rows.append((f"the same click, run in the web process itself ({count}, HTTP)",
                       p50_p99(ms), "baseline"))  # fmt: skip


def p50_p99(ms: list[float]) -> str:
    ms = sorted(ms)
    return f"p50 {ms[len(ms) // 2]:.1f} ms, p99 {ms[int(len(ms) * 0.99) - 1]:.1f} ms"


def descendants(pid: int) -> dict[int, int]:
    every = procs.every_process()
    found: dict[int, int] = {}
    parents = {pid}
    while parents:
        below = [s for s in every if s.ppid in parents and s.alive and s.pid not in found]
        found.update({s.pid: s.start_ticks for s in below})
        parents = {s.pid for s in below}
    return found


def alive_as(pid: int, ticks: int) -> bool:
    stat = procs.stat(pid)
    return stat is not None and stat.alive and stat.start_ticks == ticks


def started(pressed: list[tuple[str | None, str]]) -> list[str]:
    """The runs started, or SystemExit saying why one was not."""
    for run, why in pressed:
        if run is None:
            raise SystemExit(f"a run was not started: {why}")
    return [run for run, _ in pressed if run]


def table(rows: list[tuple[str, str, str]]) -> str:
    lines = ["| measure | found | goal |", "|---|---|---|"]
    lines += [f"| {what} | {found} | {goal} |" for what, found, goal in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--clicks", type=int, default=100)
    parser.add_argument("--no-doc", action="store_true")
    parser.add_argument("--only", choices=PHASES, action="append", help="run only these parts")
    parser.add_argument("--keep", metavar="DIR", default="", help="save contradicted runs here")
    args = parser.parse_args()
    only = args.only or list(PHASES)
    with tempfile.TemporaryDirectory(prefix="bench-labhosts-") as workdir, tier(Path(workdir)) as b:
        b.keep = args.keep
        phases: dict[str, Callable[[], None]] = {
            "click": lambda: click(b, args.clicks),
            "baseline": lambda: baseline(b, args.clicks, Path(workdir)),
            "spread": lambda: spread(b, args.runs), "kill-9": lambda: kill_9(b),
            "drain": lambda: drain(b),
        }  # fmt: skip
        for name, phase in phases.items():
            if name not in only:
                continue
            phase()
            print(table(b.rows))
        rows = b.rows
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    body = table(rows)
    print(body)
    if not args.no_doc and args.only is None:  # the doc shows every part, measured together
        section = (
            f"{BEGIN}\n## Lab hosts\n\n`bench/labhosts.py` on {platform.machine()} "
            f"({when}): two web processes (`LOCKVIZ_LAB_HOSTS=remote`) and two lab hosts "
            f"(`manage.py labhost`, each under a host name of its own) on one 2-core machine, "
            f"sharing a PostgreSQL and a Redis.\n\n{body}\n{END}"
        )
        write_section(DOC, section, begin=BEGIN, end=END)


if __name__ == "__main__":
    main()
