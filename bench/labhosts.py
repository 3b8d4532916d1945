"""Lab hosts on this machine: spread, kill -9, drain and a click's round trip (issue 21, point 7).

One script past the usual ~300 lines, on purpose: a bench is read and run as one file (its
processes, its measures and its table).

Two web processes (``serve`` with ``LOCKVIZ_LAB_HOSTS=remote``) and two lab hosts (``manage.py
labhost``, each under a host name of its own as root, standing in for two machines) share a
PostgreSQL and a Redis, as tests/deploy/test_labhosts.py sets them up. Then:

* **spread**: 40 runs of ``gc-pause-fenced`` pressed at once, half through each web process:
  how many each host took against the slots it had (its limit and the free slots it advertised,
  sampled from its heartbeat while requests waited unread, and the most runs it held at once,
  from the database), and how many met their ``expect`` (inconclusive is honest, never wrong).
  ``--ceilings 1,3`` sizes the hosts unequally (each its own ``LOCKVIZ_MAX_RUNS``);
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
    .venv/bin/python -m bench.labhosts --only spread --ceilings 1,3   # unequal hosts

A full run writes the "Lab hosts" table; ``--only spread --ceilings A,B`` writes its own table
just below it (the "Unequal lab hosts" block), leaving the full run's as it was.
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
from lockviz.lab.capacity import DEFAULT_CEILING
from lockviz.lab.labs import LocalLab
from lockviz.lab.servers.postgres import PostgresServer
from lockviz.lab.servers.redis import LayerServer
from lockviz.labhost import stream

DOC = "docs/performance.md"
BEGIN, END = "<!-- labhosts: begin -->", "<!-- labhosts: end -->"
UNEQUAL = "<!-- labhosts-unequal: begin -->", "<!-- labhosts-unequal: end -->"
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
    ceilings: dict[str, int] = field(default_factory=dict)  # LOCKVIZ_MAX_RUNS of each host
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

    def slots(self) -> dict[str, dict[str, int]]:
        """Each host's slots as its heartbeat says now: its ``limit`` and ``free``."""
        client = redis.Redis.from_url(self.layer, socket_timeout=5)
        found: dict[str, dict[str, int]] = {}
        for name, lab in self.hosts.items():
            raw = client.get(f"lockviz:labhost:{lab.identity}")
            beat = json.loads(raw) if raw else {}
            found[name] = {"limit": int(beat.get("limit", 0)), "free": int(beat.get("free", 0))}
        return found

    def at_once(self) -> dict[str, int]:
        """How many runs each host has taken and not ended, as the database says now."""
        with psycopg.connect(self.db, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT host, count(*) FROM lockviz_run WHERE status = 'running' AND host <> ''"
                " GROUP BY host"
            ).fetchall()
        return {self.host_name(host): int(n) for host, n in rows}


@contextmanager
def tier(workdir: Path, ceilings: dict[str, int] | None = None) -> Iterator[Bench]:
    """The tier; ``ceilings`` sizes each lab host (its own ``LOCKVIZ_MAX_RUNS``)."""
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
        layer = LayerServer("layer", str(workdir / "layer"))
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
            sized = ceilings or {}
            for name in ("lab-1", "lab-2"):
                ceiling = {"LOCKVIZ_MAX_RUNS": str(sized[name])} if name in sized else {}
                hosts[name] = LabHost(name, workdir, {**env, **ceiling})
            yield Bench(db, url, webs, hosts, env, ceilings=dict(sized))
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
    names = list(bench.hosts)
    limits: dict[str, list[int]] = {name: [] for name in names}  # while requests waited
    free: dict[str, list[int]] = {name: [] for name in names}
    most = dict.fromkeys(names, 0)  # runs taken and not ended at once, from the database
    done = threading.Event()
    client = redis.Redis.from_url(bench.layer, socket_timeout=5)

    def sample() -> None:
        waiting = 0
        while not done.is_set():
            for name, n in bench.at_once().items():
                most[name] = max(most.get(name, 0), n)
            with contextlib.suppress(redis.RedisError):  # a blink: the next sample
                waiting = stream.waiting(client)
            if waiting:  # runs waited unread: every host's slots are wanted
                for name, beat in bench.slots().items():
                    limits[name].append(beat["limit"])
                    free[name].append(beat["free"])
            time.sleep(0.25)

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
    sampler.join(10)
    found = [bench.run(r) for r in runs]
    bench.keep_contradicted(runs)
    per_host = dict.fromkeys(names, 0)
    for run in found:
        per_host[bench.host_name(run["host"])] = per_host.get(bench.host_name(run["host"]), 0) + 1
    met = sum(1 for r in found if r["expect_met"] is True)
    wrong = sum(1 for r in found if r["expect_met"] is False)
    honest = sum(1 for r in found if (r["verdict"] or {}).get("inconclusive"))
    other = len(found) - met - wrong - honest  # failed, cancelled, interrupted
    slots = {n: statistics.mean(v) if v else 0.0 for n, v in limits.items()}
    all_slots, all_taken = sum(slots.values()) or 1.0, sum(per_host.values()) or 1
    sizes = " and ".join(str(bench.ceilings.get(n, DEFAULT_CEILING)) for n in names)
    bench.rows.append(
        (f"{count} runs pressed at once ({SCENARIO}), through 2 web processes, to hosts of "
         f"ceiling {sizes}", f"{len(runs)} started, {len(refused)} refused; all ended after "
         f"{took:.0f} s", "")
    )  # fmt: skip
    for name in names:
        ceiling = bench.ceilings.get(name, DEFAULT_CEILING)
        bench.rows.append(
            (f"  {name}, `LOCKVIZ_MAX_RUNS={ceiling}`: runs taken (share); mean slots while "
             "runs waited (share), and free; most at once",
             f"{per_host.get(name, 0)} ({per_host.get(name, 0) / all_taken:.0%}); "
             f"{slots[name]:.1f} ({slots[name] / all_slots:.0%}), "
             f"{statistics.mean(free[name]) if free[name] else 0.0:.1f} free; {most[name]}",
             f"share taken ≈ share of slots; at most {ceiling} at once")
        )  # fmt: skip
    bench.rows.append(
        ("  met `expect` / inconclusive / contradicted / other",
         f"{met} / {honest} / {wrong} / {other}", f"{count}/{count} or inconclusive, 0 wrong")
    )  # fmt: skip


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


def ceilings(text: str) -> tuple[int, int]:
    """``--ceilings A,B``: two hosts' ``LOCKVIZ_MAX_RUNS``, each 1 to 64."""
    parts = text.split(",")
    if len(parts) != 2 or not all(p.strip().isdigit() and 1 <= int(p) <= 64 for p in parts):
        raise argparse.ArgumentTypeError(
            f"two whole numbers from 1 to 64 are needed (one per lab host, e.g. 1,3), not {text!r}"
        )
    return int(parts[0]), int(parts[1])


def load_after() -> str:
    """The machine's load average over the last minute, 5 and 15 (it is shared)."""
    return ", ".join(f"{n:.2f}" for n in os.getloadavg())


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
    parser.add_argument(
        "--ceilings",
        metavar="A,B",
        type=ceilings,
        default=None,
        help="each lab host's LOCKVIZ_MAX_RUNS, e.g. 1,3 (default: both 24)",
    )
    args = parser.parse_args()
    load_before, began = load_after(), datetime.now(UTC).strftime("%H:%M")
    only = args.only or list(PHASES)
    sized = dict(zip(("lab-1", "lab-2"), args.ceilings, strict=True)) if args.ceilings else None
    with (
        tempfile.TemporaryDirectory(prefix="bench-labhosts-") as workdir,
        tier(Path(workdir), sized) as b,
    ):
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
    elif not args.no_doc and args.only == ["spread"] and args.ceilings:
        section = (
            f"{UNEQUAL[0]}\n`bench/labhosts.py --only spread --ceilings "
            f"{','.join(map(str, args.ceilings))}` on {platform.machine()} ({when}, from "
            f"{began} UTC, load average {load_before} before, {load_after()} after): the same "
            f"tier, its two lab hosts sized unequally.\n\n{body}\n{UNEQUAL[1]}"
        )
        write_section(DOC, section, begin=UNEQUAL[0], end=UNEQUAL[1])


if __name__ == "__main__":
    main()
