"""Does anything linger or lie after the app is killed? N rounds of kill -9 mid-run, then restart.

Each round starts ``manage.py serve`` on a fresh port against one database shared by every
round, opens a browser session, presses Run on a few built-in scenarios (``POST /runs/`` with
the session and CSRF cookies, as a browser does) and watches each over its WebSocket, as a run
page does (a queued run that nobody watches is cancelled, and the viewer records every event it
is sent). At a random moment while they run it kills the app with SIGKILL, which no cleanup code
survives, and counts:

* **orphaned processes**: processes descended from the killed app (servers, clients, the
  network proxy) still alive 10 s later. Every child dies with the app through
  ``PR_SET_PDEATHSIG`` (lockviz/lab/procs.py). Goal 0.
* **runs left live**: runs still "queued" or "running" once the app has been started again on
  the same database; start-up marks a dead app's runs interrupted (lockviz/runs/recovery.py).
  Goal 0.
* **events lost**: in every stored run, each seq missing from 1..N, each event a viewer was sent
  that the database does not hold (events are stored before they are sent), a finished run
  without its verdict or its ``run_finished``, an interrupted or cancelled run without the event
  that says so. Goal 0.

It prints a table and writes it into docs/reliability.md (its "Chaos" section; the rest of the
file is kept). Orphans found are killed after they are counted, so rounds do not add up.

    .venv/bin/python -m bench.chaos                  # 10 rounds
    .venv/bin/python -m bench.chaos --rounds 3 --no-doc

One script past the usual ~300 lines, on purpose: a bench is read and run as one file (the app, the
kill -9 rounds and what each round checks).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import re
import shutil
import signal
import sqlite3
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bench import ROOT
from bench.app import App
from bench.browser import Browser
from bench.doc import write_section
from bench.viewer import Viewer, frames
from lockviz.lab import procs

DOC = os.path.join(ROOT, "docs", "reliability.md")
BEGIN, END = "<!-- chaos:begin -->", "<!-- chaos:end -->"
# Scenarios of every backend with a pause in them, so a kill finds frozen clients too.
SCENARIOS = ["gc-pause-fenced", "contention", "redlock-gc-pause", "pg-gc-pause-fenced",
             "zk-gc-pause-fenced", "etcd-gc-pause-fenced"]  # fmt: skip
ORPHAN_GRACE_S = 10.0


# ---- the app, a browser, a viewer -------------------------------------------------------------


class Kept(Viewer):
    """A run page's WebSocket, in a thread of its own: keeps the run watched (a queued run that
    nobody watches is cancelled) and remembers each event it is sent, until the app is gone."""

    def __init__(self, url: str, run_id: str, cookie: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.seen: dict[int, str] = {}  # seq: kind
        connected = threading.Event()

        async def watch() -> None:
            opened = asyncio.Event()
            task = asyncio.create_task(
                self.watch(f"{url.replace('http', 'ws', 1)}/ws/runs/{run_id}/", cookie=cookie,
                           timeout_s=10, connected=opened)
            )  # fmt: skip
            await opened.wait()
            connected.set()
            await task

        self.thread = threading.Thread(target=asyncio.run, args=(watch(),), daemon=True)
        self.thread.start()
        connected.wait()
        if self.error:
            raise RuntimeError(f"the WebSocket of run {run_id}: {self.error}")

    def received(self, now_ns: int, message: dict[str, Any]) -> None:
        for frame in frames(message):
            if frame.get("type") == "event":
                self.seen[frame["event"]["seq"]] = frame["event"]["kind"]


# ---- what is checked --------------------------------------------------------------------------


@dataclass
class Round:
    number: int
    started: list[str] = field(default_factory=list)
    killed_after_s: float = 0.0
    events_at_kill: int = 0
    children: int = 0
    orphans: list[str] = field(default_factory=list)
    swept: int = 0  # server sets the restart's sweep removed (what the killed app left)
    left_live: int = 0
    ended: dict[str, int] = field(default_factory=dict)  # this round's runs, by status
    checked: int = 0
    lost: list[str] = field(default_factory=list)


def orphans(before: dict[int, int]) -> list[str]:
    """The processes of ``before`` (pid: start ticks) still alive: each killed once counted."""
    deadline = time.monotonic() + ORPHAN_GRACE_S
    alive = before
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = {p: t for p, t in before.items() if _same(p, t)}
    found = []
    for pid in alive:
        if procs.stat(pid) is None:
            continue  # gone since
        found.append(f"{pid} {procs.cmdline(pid)[:80]}")
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return found


def _same(pid: int, ticks: int) -> bool:
    stat = procs.stat(pid)
    return stat is not None and stat.alive and stat.start_ticks == ticks


def check_runs(
    db: str, seen: dict[str, dict[int, str]]
) -> tuple[int, dict[str, int], int, list[str]]:
    """(runs left live, this round's runs by status, events checked, what was lost) over every
    stored run: those of earlier rounds too."""
    with sqlite3.connect(db, timeout=30) as conn:
        runs = conn.execute("SELECT id, status, verdict FROM lockviz_run").fetchall()
        rows = conn.execute("SELECT run_id, seq, kind FROM lockviz_runevent").fetchall()
    events: dict[str, dict[int, str]] = {}
    for run_id, seq, kind in rows:
        events.setdefault(run_id, {})[seq] = kind
    lost: list[str] = []
    live = 0
    ended: dict[str, int] = {}
    for run_id, status, verdict in runs:
        stored = events.get(run_id, {})
        live += status in ("queued", "running")
        if run_id in seen:
            ended[status] = ended.get(status, 0) + 1
        lost += [f"{run_id}: seq {s} missing" for s in range(1, max(stored, default=0) + 1)
                 if s not in stored]  # fmt: skip
        lost += [f"{run_id}: seq {s} ({k}) was sent, not stored"
                 for s, k in seen.get(run_id, {}).items() if stored.get(s) != k]  # fmt: skip
        last = stored[max(stored)] if stored else None
        ending = {"finished": "run_finished", "interrupted": "run_interrupted",
                  "cancelled": "run_cancelled", "failed": "run_failed"}.get(status)  # fmt: skip
        if ending is not None and last != ending and not (status == "failed" and last):
            lost.append(f"{run_id}: {status}, but its last event is {last}")
        if status == "finished" and verdict in (None, "null"):
            lost.append(f"{run_id}: finished without its verdict")
    return live, ended, len(rows), lost


# ---- a round ----------------------------------------------------------------------------------


def one_round(number: int, db: str, log: str, rng: random.Random, runs: int) -> Round:
    result = Round(number)
    app = App(db, log)
    browser = Browser(app.url)
    viewers: list[Kept] = []
    for slug in rng.sample(SCENARIOS, k=min(runs, len(SCENARIOS))):
        run_id, why = browser.start(slug)
        if run_id is None:
            print(f"    {slug}: refused ({why})", flush=True)
            continue
        result.started.append(slug)
        viewers.append(Kept(app.url, run_id, browser.cookie))
    begun = time.monotonic()
    time.sleep(rng.uniform(0.3, 4.5))  # servers starting, clients frozen, verdicts being stored
    app.freeze()
    before = app.descendants()
    result.children = len(before)
    result.events_at_kill = sum(len(v.seen) for v in viewers)
    app.kill()
    result.killed_after_s = time.monotonic() - begun
    result.orphans = orphans(before)
    for viewer in viewers:
        viewer.thread.join(5)
    said = os.path.getsize(log)
    again = App(db, log)  # start-up: interrupt the dead app's runs, sweep its servers
    with open(log) as f:
        f.seek(said)
        swept = re.search(r"cleaned up (\d+) server set", f.read())
    result.swept = int(swept[1]) if swept else 0
    try:
        seen = {v.run_id: v.seen for v in viewers}
        result.left_live, result.ended, result.checked, result.lost = check_runs(db, seen)
    finally:
        again.stop()
    return result


# ---- the report -------------------------------------------------------------------------------


def table(rounds: list[Round]) -> str:
    lines = [
        "| round | runs started | killed after | events seen by then | processes at the kill "
        "| orphaned processes | server sets swept at the restart | its runs after the restart "
        "| runs left live "
        "| stored events checked (every round's) | events lost |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rounds:
        lines.append(
            f"| {r.number} | {len(r.started)} ({', '.join(r.started)}) | {r.killed_after_s:.1f} s "
            f"| {r.events_at_kill} | {r.children} | {len(r.orphans)} | {r.swept} "
            f"| {', '.join(f'{n} {status}' for status, n in sorted(r.ended.items()))} "
            f"| {r.left_live} | {r.checked} | {len(r.lost)} |"
        )
    return "\n".join(lines)


def figures(rounds: list[Round]) -> str:
    orphaned = sum(len(r.orphans) for r in rounds)
    left = sum(r.left_live for r in rounds)
    lost = sum(len(r.lost) for r in rounds)
    return (
        f"| figure | goal | measured |\n|---|---|---|\n"
        f"| orphaned processes | 0 | **{orphaned}** |\n"
        f"| runs left running or queued after a restart | 0 | **{left}** |\n"
        f"| events lost from stored runs | 0 | **{lost}** |"
    )


def write_doc(command: str, summary: str, body: str) -> None:
    """Replace the "Chaos" section of docs/reliability.md, keeping every other section."""
    intro = textwrap.fill(
        "Each round starts `manage.py serve` against one database shared by every round, "
        "presses Run on a few built-in scenarios over HTTP as a browser does, watches each over "
        "its WebSocket, and at a random moment 0.3 to 4.5 s later freezes the app (SIGSTOP, so "
        "it starts nothing more while its processes are counted) and kills it with SIGKILL. "
        "It then counts the processes below the killed app still alive 10 s later, starts the "
        "app again on the same database and counts the runs still queued or running and the "
        "events lost from every stored run: a seq missing from 1..N, an event a viewer was "
        "sent that the database does not hold, a finished run without its verdict, an ended "
        "run without the event that says how. Orphans are killed once counted.",
        width=96,
    )
    section = (
        f"{BEGIN}\n## Chaos: kill -9 mid-run, then restart (`bench/chaos.py`)\n\n{intro}\n\n"
        f"`.venv/bin/python {command}`\n\n{summary}\n\n{body}\n{END}"
    )
    write_section(DOC, section, begin=BEGIN, end=END)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3, help="runs started per round (≤ 4)")
    parser.add_argument("--seed", type=int, default=None, help="for the same kill moments")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/ alone")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    rng = random.Random(seed)
    workdir = tempfile.mkdtemp(prefix="lockviz-chaos-")
    db, log = os.path.join(workdir, "chaos.sqlite3"), os.path.join(workdir, "app.log")
    print(f"database {db}, app log {log}, seed {seed}", flush=True)
    started = time.monotonic()
    rounds: list[Round] = []
    for number in range(1, args.rounds + 1):
        r = one_round(number, db, log, rng, args.runs)
        rounds.append(r)
        print(
            f"round {number}: {len(r.started)} runs, killed after {r.killed_after_s:.1f} s with "
            f"{r.children} processes below it; orphans {len(r.orphans)}, left live "
            f"{r.left_live}, lost {len(r.lost)}",
            flush=True,
        )
        for line in r.orphans + r.lost:
            print(f"    {line}", flush=True)
    body = table(rounds)
    summary = (
        f"{args.rounds} rounds, {sum(len(r.started) for r in rounds)} runs, "
        f"{(time.monotonic() - started) / 60:.1f} min; {os.cpu_count()} cores "
        f"({platform.machine()}, {platform.system()} {platform.release()}, Python "
        f"{platform.python_version()}), shared with other work; seed {seed}; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
    )
    report = f"{figures(rounds)}\n\n{body}"
    print(f"\n{summary}\n\n{report}")
    if not args.no_doc:
        command = "-m bench.chaos " + " ".join(sys.argv[1:])
        write_doc(command.strip(), summary, report)
    if any(r.orphans or r.left_live or r.lost for r in rounds):
        sys.exit(f"goals missed: the database and the app's log are kept in {workdir}")
    shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
