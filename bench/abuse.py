"""One client against everyone: what a long imported run costs per request, and what a client
hammering it does to another user's page.

It starts the app (``manage.py serve``, as ``make run`` does) on a fresh database, imports a
20,000-event run (``bench.diagram.long_run``: a recorded run repeated end to end) through the
import page as anyone may, and measures:

* the server's CPU for the import, for ``GET /replay/`` (with the chunks its page then fetches,
  when it fetches any), and for ``GET /fork/?at=5``: user + system time of the app's process
  from /proc around each request, one request at a time, the mean of ``--repeat``;
* a hammer of ``--seconds`` (30): from a process of its own, one client loads the replay and the
  fork page in a loop and keeps four WebSocket viewers of the run that never read, each sending
  ``resume`` from 0 every 0.6 s; meanwhile another user loads ``GET /lessons/`` every 0.1 s.
  The table has that page's latency before and during the hammer, and the app's resident memory
  (VmRSS) before, at its peak and 5 s after.

    .venv/bin/python -m bench.abuse                    # measure, print, write the doc
    .venv/bin/python -m bench.abuse --root ../wt-old --no-doc   # another checkout's code

It prints a table and writes it into the "One client against everyone" section of
docs/reliability.md, beside the figures :data:`BEFORE` measured on the code before the change.
The join wave (1,000 viewers arriving within 10 s of a live run's start) is a row of
``bench.fanout`` (``--viewers 1000w``).

A second part (issue 31), on a fresh app: the *crafted* import, a built-in with many writes
(``storage-lost-update``) repeated to 20,000 events with its times pressed into the ten minutes
an import allows (:func:`crafted_import`: some 3,300 writes, 4.3 MB), then two first requests
for its ``export.mmd`` at once; the app's CPU for each, and another user's ``GET /lessons/``
(every 0.1 s) throughout. It writes the "A crafted import and its first exports" section. Run
it alone with ``--crafted-only``. Its "before" column is issue 31's report of the code before
(the narrator judged every write again at each one; each first export made the diagram).

One script past the usual ~300 lines, on purpose: a bench is read and run as one file (its app,
its clients, its instrument and its table).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import statistics
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
from datetime import UTC, datetime
from typing import Any

from bench import ROOT
from bench.app import App
from bench.browser import Browser
from bench.diagram import long_run
from bench.doc import write_section
from bench.machine import TICK, cpu_ticks
from bench.viewer import never_reading

DOC = os.path.join(ROOT, "docs", "reliability.md")
BEGIN, END = "<!-- abuse:begin -->", "<!-- abuse:end -->"
STUCK_VIEWERS = 4
RESUME_EVERY_S = 0.6

# Measured with this bench on the code before the change (commit a9f618b, ``--root`` a checkout
# of it), on this machine: 2026-11-26 21:26 UTC, load average 5.2 at the start. (A first run at
# 21:02, load 9.0, measured the same within 10%: replay 554 ms, fork 2094 ms, +242 MB.)
BEFORE: dict[str, str] = {
    "events": "20000",
    "import (server CPU)": "1190 ms",
    "`GET /replay/` (server CPU)": "610 ms (5.4 MB)",
    "the replay with its chunks (server CPU)": "642 ms (5.4 MB in 1 request)",
    "`GET /fork/?at=5` (server CPU)": "2132 ms (3.6 MB)",
    "`GET /lessons/` alone, p50 / p99": "16 / 66 ms",
    "`GET /lessons/` while hammered, p50 / p99": "1054 / 4955 ms",
    "pages the hammer loaded": "9",
    "app CPU during the hammer": "25.2 s in 30 s",
    "app memory: start / before / peak / 5 s after": "108 / 171 / 432 / 398 MB",
    "memory growth during the hammer (peak − before)": "+261 MB",
}


# -- one request's cost -------------------------------------------------------------------------


def big_import(events: int, source: str = "redlock-contention") -> dict[str, Any]:
    """A run of ``events`` events that the import page accepts (``bench.diagram.long_run``, its
    script cut as a scenario may have it: 500 steps, in the first 120 s)."""
    run = long_run(source, events)
    steps = [s for s in run["scenario"]["steps"] if s["at_ms"] <= 120_000]
    run["scenario"]["steps"] = steps[:500]
    run["status"] = "finished"
    return run


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        found = re.search(r"VmRSS:\s+(\d+) kB", f.read())
    return int(found.group(1)) / 1024 if found else 0.0


def fetch(opener: Any, url: str) -> bytes:
    with opener.open(url, timeout=120) as answer:
        body: bytes = answer.read()
        return body


def chunks_of(page: bytes) -> list[str]:
    """The paths of the event chunks a replay page names (``"more": "/runs/…"``), if any."""
    found = re.search(rb'"more": "([^"]+)"', page)
    return [found.group(1).decode()] if found else []


def load_replay(opener: Any, url: str, path: str) -> tuple[int, int]:
    """A replay as its page loads it: the page, then each chunk it names; (bytes, requests)."""
    page = fetch(opener, url + path)
    size, requests, more = len(page), 1, chunks_of(page)
    while more:
        body = fetch(opener, url + more[0])
        size, requests = size + len(body), requests + 1
        answer = json.loads(body)
        more = [answer["more"]] if answer.get("more") else []
    return size, requests


def app_pids(app: App) -> list[int]:
    """The app's process and its worker processes (lockviz.edge.workers: the children that
    multiprocessing spawned, and its resource tracker), where an import and an export spend
    their CPU; not its lab host, whose runs' work is its own."""
    return [app.proc.pid, *(p for p in app.children() if b"multiprocessing" in cmdline(p))]


def cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def cpu_ms(app: App, action: Any, repeat: int) -> tuple[float, Any]:
    """The CPU of the app and its workers per call of ``action`` (ms, the mean of ``repeat``;
    a worker started meanwhile counts from its start), and the last result."""
    result = None
    before = cpu_ticks(app_pids(app))
    for _ in range(repeat):
        result = action()
    return (cpu_ticks(app_pids(app)) - before) * 1000 / TICK / repeat, result


def import_run(browser: Browser, run: dict[str, Any]) -> str:
    """POST the run as a file, as the import page does; the new run's id."""
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
            f'{browser.csrf}\r\n--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="long.json"\r\nContent-Type: application/json\r\n\r\n'
        ).encode()
        + json.dumps(run).encode()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(
        browser.url + "/import/",
        body,
        headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Referer": browser.url + "/",
        },
    )
    try:
        browser.opener.open(request, timeout=120).read()
    except urllib.error.HTTPError as exc:
        found = re.search(r"/runs/(\w+)/", exc.headers.get("Location", ""))
        if exc.code == 302 and found:
            return found.group(1)
        raise
    raise RuntimeError("the import did not redirect to the run")


# -- the hammer ---------------------------------------------------------------------------------


def stuck_viewer(url: str, run_id: str, stop: threading.Event) -> None:
    """A viewer that never reads, sending ``resume`` from 0 every :data:`RESUME_EVERY_S`."""
    try:
        sock = never_reading(f"{url.replace('http://', 'ws://', 1)}/ws/runs/{run_id}/")
    except OSError:
        return  # refused (the server's bound on viewers), or gone
    try:
        payload = json.dumps({"type": "resume", "after": 0}).encode()
        frame = bytes([0x81, 0x80 | len(payload)]) + b"\0\0\0\0" + payload
        sock.settimeout(1)
        while not stop.wait(RESUME_EVERY_S):
            try:
                sock.sendall(frame)
            except TimeoutError:
                continue  # the server does not read either: its buffers are full
    except OSError:
        return  # dropped by the server: what a bound on unsent frames does
    finally:
        sock.close()


def hammer(url: str, run_id: str, seconds: float, counts: Any) -> None:
    """One client: replays and forks of the run in a loop, and viewers that never read."""
    stop = threading.Event()
    viewers = [
        threading.Thread(target=stuck_viewer, args=(url, run_id, stop), daemon=True)
        for _ in range(STUCK_VIEWERS)
    ]

    def pages(path: str, replay: bool) -> None:
        opener = urllib.request.build_opener()
        while not stop.is_set():
            try:
                if replay:
                    load_replay(opener, url, path)
                else:
                    fetch(opener, url + path)
                counts.value += 1
            except OSError:
                time.sleep(0.1)

    loaders = [
        threading.Thread(target=pages, args=(f"/runs/{run_id}/replay/", True), daemon=True),
        threading.Thread(target=pages, args=(f"/runs/{run_id}/fork/?at=5", False), daemon=True),
    ]
    for thread in [*viewers, *loaders]:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in loaders:
        thread.join(60)


def lessons_latency(url: str, stop: threading.Event, every_s: float = 0.1) -> list[float]:
    """Another user's ``GET /lessons/``, once every ``every_s`` until ``stop``: ms each."""
    opener = urllib.request.build_opener()
    found: list[float] = []
    while not stop.is_set():
        started = time.perf_counter()
        fetch(opener, url + "/lessons/")
        found.append((time.perf_counter() - started) * 1000)
        stop.wait(every_s)
    return found


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# -- a crafted import, and its first exports at once (issue 31) -------------------------------

CRAFTED_BEGIN, CRAFTED_END = "<!-- abuse-crafted:begin -->", "<!-- abuse-crafted:end -->"
CRAFTED_BEFORE: dict[str, str] = {  # issue 31's report, on the code before
    "import (server CPU)": "89 s",
    "two first `export.mmd` at once (server CPU, both)": "293 s (374 s each, wall)",
    "another user's `GET /lessons/` meanwhile, p50 / p99": "— / up to 2,000 ms",
}


def crafted_import(events: int, source: str = "storage-lost-update") -> dict[str, Any]:
    """A built-in with many writes repeated to ``events`` events, its times pressed into the
    ten minutes an import allows: what anyone may import, and what cost the most."""
    run = big_import(events, source)
    end = max(float(e["t_ms"]) for e in run["events"]) or 1.0
    for e in run["events"]:
        e["t_ms"] = round(float(e["t_ms"]) * 590_000 / end, 1)
    return run


def measure_crafted(app: App, run: dict[str, Any]) -> dict[str, str]:
    browser = Browser(app.url)
    fetch(urllib.request.build_opener(), app.url + "/lessons/")  # warm: the app's imports done
    import_run(browser, big_import(40))  # warm: its worker processes started (once per app)
    stop = threading.Event()
    quiet: list[float] = []  # the same page with nothing else asked of the app: the machine's
    sampler = threading.Thread(target=lambda: quiet.extend(lessons_latency(app.url, stop)))
    sampler.start()
    time.sleep(5)
    stop.set()
    sampler.join()
    stop = threading.Event()
    latency: list[float] = []
    sampler = threading.Thread(target=lambda: latency.extend(lessons_latency(app.url, stop)))
    sampler.start()
    try:
        web = cpu_ticks([app.proc.pid])
        import_ms, run_id = cpu_ms(app, lambda: import_run(browser, run), 1)
        import_web_s = (cpu_ticks([app.proc.pid]) - web) / TICK
        answers: list[int] = []

        def export() -> None:
            body = fetch(urllib.request.build_opener(), f"{app.url}/runs/{run_id}/export.mmd")
            answers.append(len(body))

        def both() -> float:
            started = time.perf_counter()
            threads = [threading.Thread(target=export) for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(600)
            return time.perf_counter() - started

        web = cpu_ticks([app.proc.pid])
        exports_ms, wall_s = cpu_ms(app, both, 1)
        exports_web_s = (cpu_ticks([app.proc.pid]) - web) / TICK
        time.sleep(2)  # the other user's page once more after
    finally:
        stop.set()
        sampler.join()
    writes = sum(1 for e in run["events"] if e["kind"] == "reply" and e.get("op") == "write")
    size = len(json.dumps(run).encode())
    return {
        "events, writes, file": f"{len(run['events'])}, {writes}, {size / 1e6:.1f} MB",
        "import (server CPU)": (
            f"{import_ms / 1000:.2f} s ({import_web_s:.2f} s in the web process)"
        ),
        "two first `export.mmd` at once (server CPU, both)": (
            f"{exports_ms / 1000:.2f} s ({exports_web_s:.2f} s in the web process; {wall_s:.1f} s "
            f"wall; {len(answers)} answers, {answers[0] / 1e6 if answers else 0:.1f} MB each)"
        ),
        "another user's `GET /lessons/` before, alone, p50 / p99": (
            f"{statistics.median(quiet):.0f} / {p99(quiet):.0f} ms ({len(quiet)} requests)"
        ),
        "another user's `GET /lessons/` meanwhile, p50 / p99": (
            f"{statistics.median(latency):.0f} / {p99(latency):.0f} ms ({len(latency)} requests)"
        ),
    }


def write_crafted_doc(after: dict[str, str], summary: str) -> None:
    lines = ["| | before | after |", "|---|---|---|"]
    lines += [f"| {name} | {CRAFTED_BEFORE.get(name, '—')} | {v} |" for name, v in after.items()]
    section = (
        f"{CRAFTED_BEGIN}\n### A crafted import and its first exports (`bench/abuse.py`)\n\n"
        "A built-in with many writes repeated to 20,000 events (the most an import takes), its\n"
        "times pressed into the ten minutes an import allows, imported by anyone; then two first\n"
        "requests for its `export.mmd` at once, while another user reads the lessons page every\n"
        "0.1 s. Goals: the import ≤ 5 s of server CPU, the two exports ≤ 5 s together, the\n"
        "lessons page's p99 ≤ 100 ms throughout. Server CPU is the app's process and its worker\n"
        "processes' (lockviz/edge/workers.py, started by a small import first: their start,\n"
        "about a second once per app, is not in it), the web process's share in brackets; both\n"
        "count the lessons requests served meanwhile. CPU time, not wall time: the machine is\n"
        "shared, and its load is below. Regenerate with\n"
        "`.venv/bin/python -m bench.abuse --crafted-only`.\n\n"
        + "\n".join(lines)
        + f"\n\n{summary}\n{CRAFTED_END}"
    )
    write_section(DOC, section, begin=CRAFTED_BEGIN, end=CRAFTED_END)


# -- the whole bench ----------------------------------------------------------------------------


def measure(app: App, run: dict[str, Any], seconds: float, repeat: int) -> dict[str, str]:
    pid = app.proc.pid
    browser = Browser(app.url)
    opener = urllib.request.build_opener()
    fetch(opener, app.url + "/lessons/")  # the app's first page: its imports done
    rss_start = rss_mb(pid)
    import_ms, run_id = cpu_ms(app, lambda: import_run(browser, run), 1)
    replay = f"/runs/{run_id}/replay/"
    fetch(opener, app.url + replay)  # warm: the templates and the first narration, if cached
    page_ms, page = cpu_ms(app, lambda: fetch(opener, app.url + replay), repeat)
    whole_ms, (whole_bytes, requests) = cpu_ms(
        app, lambda: load_replay(opener, app.url, replay), repeat
    )
    fork_ms, fork_page = cpu_ms(
        app, lambda: fetch(opener, app.url + f"/runs/{run_id}/fork/?at=5"), repeat
    )
    stop = threading.Event()
    quiet: list[float] = []
    sampler = threading.Thread(target=lambda: quiet.extend(lessons_latency(app.url, stop)))
    sampler.start()
    time.sleep(5)
    stop.set()
    sampler.join()
    rss_before = rss_mb(pid)
    counts = multiprocessing.Value("i", 0)
    client = multiprocessing.Process(target=hammer, args=(app.url, run_id, seconds, counts))
    stop = threading.Event()
    loud: list[float] = []
    peak = [rss_before]

    def watch_memory() -> None:
        while not stop.wait(0.5):
            peak[0] = max(peak[0], rss_mb(pid))

    sampler = threading.Thread(target=lambda: loud.extend(lessons_latency(app.url, stop)))
    memory = threading.Thread(target=watch_memory)
    cpu_before = cpu_ticks(app_pids(app))
    client.start()
    sampler.start()
    memory.start()
    client.join(seconds + 120)
    stop.set()
    sampler.join()
    memory.join()
    hammer_cpu_s = (cpu_ticks(app_pids(app)) - cpu_before) / TICK
    time.sleep(5)
    rss_after = rss_mb(pid)
    return {
        "events": str(len(run["events"])),
        "import (server CPU)": f"{import_ms:.0f} ms",
        "`GET /replay/` (server CPU)": f"{page_ms:.0f} ms ({len(page) / 1e6:.1f} MB)",
        "the replay with its chunks (server CPU)": (
            f"{whole_ms:.0f} ms ({whole_bytes / 1e6:.1f} MB in {requests} "
            f"request{'s' * (requests != 1)})"
        ),
        "`GET /fork/?at=5` (server CPU)": f"{fork_ms:.0f} ms ({len(fork_page) / 1e6:.1f} MB)",
        "`GET /lessons/` alone, p50 / p99": (
            f"{statistics.median(quiet):.0f} / {p99(quiet):.0f} ms"
        ),
        "`GET /lessons/` while hammered, p50 / p99": (
            f"{statistics.median(loud):.0f} / {p99(loud):.0f} ms"
        ),
        "pages the hammer loaded": str(counts.value),
        "app CPU during the hammer": f"{hammer_cpu_s:.1f} s in {seconds:.0f} s",
        "app memory: start / before / peak / 5 s after": (
            f"{rss_start:.0f} / {rss_before:.0f} / {peak[0]:.0f} / {rss_after:.0f} MB"
        ),
        "memory growth during the hammer (peak − before)": f"{peak[0] - rss_before:+.0f} MB",
    }


def table(after: dict[str, str]) -> str:
    lines = ["| | before | after |", "|---|---|---|"]
    for name, value in after.items():
        lines.append(f"| {name} | {BEFORE.get(name, '—')} | {value} |")
    return "\n".join(lines)


def write_doc(text: str, summary: str) -> None:
    section = (
        f"{BEGIN}\n### One client against everyone (`bench/abuse.py`)\n\n"
        "A 20,000-event run imported by anyone, then replayed, forked and resumed by one\n"
        "client while another user reads the lessons page. Goals: `GET /replay/` and\n"
        "`GET /fork/` each ≤ 150 ms of server CPU; the other user's `GET /lessons/` p99\n"
        "≤ 100 ms during the hammer; the app's memory grows by less than 50 MB. Regenerate\n"
        "with `.venv/bin/python -m bench.abuse` (about two minutes).\n\n"
        f"{text}\n\n{summary}\n{END}"
    )
    write_section(DOC, section, begin=BEGIN, end=END)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", default=ROOT, help="the checkout whose app to measure")
    parser.add_argument("--no-doc", action="store_true", help="print only")
    parser.add_argument("--crafted-only", action="store_true", help="only the crafted import")
    args = parser.parse_args()
    crafted(args)
    if args.crafted_only:
        return
    work = tempfile.mkdtemp(prefix="lockviz-bench-abuse-")
    run = big_import(args.events)
    load = os.getloadavg()
    app = App(os.path.join(work, "bench.sqlite3"), os.path.join(work, "app.log"), root=args.root)
    try:
        after = measure(app, run, args.seconds, args.repeat)
    finally:
        app.stop()
        shutil.rmtree(work, ignore_errors=True)
    text = table(after)
    summary = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores shared with other "
        f"work (load average {load[0]:.1f} at the start); a {args.seconds:.0f} s hammer, "
        f"{args.repeat} requests of each kind for the CPU figures."
    )
    print(text)
    print(summary)
    if not args.no_doc:
        write_doc(text, summary)
        print(f"written to {os.path.relpath(DOC, ROOT)}")


def crafted(args: argparse.Namespace) -> None:
    """The crafted import and its first exports, on an app of their own."""
    work = tempfile.mkdtemp(prefix="lockviz-bench-abuse-crafted-")
    run = crafted_import(args.events)
    load = os.getloadavg()
    app = App(os.path.join(work, "bench.sqlite3"), os.path.join(work, "app.log"), root=args.root)
    try:
        after = measure_crafted(app, run)
    finally:
        app.stop()
        shutil.rmtree(work, ignore_errors=True)
    end_load = os.getloadavg()
    summary = (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {os.cpu_count()} cores shared with other "
        f"work (load average {load[0]:.1f} at the start, {end_load[0]:.1f} at the end)."
    )
    for name, value in after.items():
        print(f"{name}: {value}")
    print(summary)
    if not args.no_doc:
        write_crafted_doc(after, summary)


if __name__ == "__main__":
    main()
