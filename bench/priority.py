"""The presenter's run comes first: 20 students press Run at once, and so does the presenter.

In a class, the run the room watches on the projector is the presenter's, and it must keep its
story when every student starts one too. For each try this starts a fresh app (``manage.py
serve``, a fresh database), opens a room as the presenter (``POST /rooms/``: the presenter's
browser presents it), then 20 students' browsers press Run at once on the same built-in, and
the presenter's a second later, while the students' runs start; each run is watched by a
WebSocket viewer to its end. It reports, over the tries, how the presenter's run came out (met
its ``expect``, inconclusive: the machine fell behind its schedule, contradicted), how the
students' runs did, and the presenter's run's lateness and time from its press to its verdict.

The baseline is the same press with the same browser pressing as a student (no room opened):
its run then waits its turn and shares the CPU alike.

    .venv/bin/python -m bench.priority                    # 10 tries each way, doc updated
    .venv/bin/python -m bench.priority --tries 3 --students 20 --no-doc

It prints the table and writes it into the "Presenter first" section of docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bench import ROOT
from bench.browser import Browser
from bench.capacity import App, Watched, start, watch
from bench.doc import write_section
from bench.machine import MachineCpu

DOC = os.path.join(ROOT, "docs", "performance.md")
BEGIN, END = "<!-- bench/priority.py: begin -->", "<!-- bench/priority.py: end -->"
SLUG = "redlock-clock-jump"
# Every browser here comes from this machine's one address: its share must fit the class.
ONE_ADDRESS = {"LOCKVIZ_MAX_PER_ADDRESS": "1000", "LOCKVIZ_PLAY_PER_ADDRESS": "1000"}
PRESENTER_AFTER_S = 1.0  # the class has pressed; the presenter presses while their runs start
OUTCOMES = ("met", "inconclusive", "contradicted", "failed", "refused", "cancelled", "unfinished")


@dataclass
class Tally:
    """One way of pressing, over its tries."""

    presenter: dict[str, int] = field(default_factory=dict)
    students: dict[str, int] = field(default_factory=dict)
    late_ms: list[float] = field(default_factory=list)  # the presenter's steps
    verdict_s: list[float] = field(default_factory=list)  # the presenter's press → verdict
    cpu: list[float] = field(default_factory=list)

    def count(self, presenter: Watched, students: list[Watched]) -> None:
        self.presenter[presenter.outcome] = self.presenter.get(presenter.outcome, 0) + 1
        for watched in students:
            self.students[watched.outcome] = self.students.get(watched.outcome, 0) + 1
        self.late_ms.extend(presenter.lateness())
        if presenter.final_ns:
            self.verdict_s.append((presenter.final_ns - presenter.pressed_ns) / 1e9)


async def press(url: str, presenter: Browser, students: int, timeout_s: float) -> list[Watched]:
    """The students press at once, the presenter a moment later (first in the list)."""
    browsers = [presenter]
    browsers += await asyncio.gather(*(asyncio.to_thread(Browser, url) for _ in range(students)))
    runs = [Watched(SLUG) for _ in browsers]

    async def one(browser: Browser, watched: Watched) -> None:
        if browser is presenter:
            await asyncio.sleep(PRESENTER_AFTER_S)
        watched.pressed_ns = time.monotonic_ns()
        watched.run_id, watched.refused = await asyncio.to_thread(start, browser, SLUG)
        if watched.run_id is not None:
            await watch(url, watched, timeout_s)

    await asyncio.gather(*(one(b, w) for b, w in zip(browsers, runs, strict=True)))
    return runs


def one_try(presents: bool, students: int, tally: Tally, timeout_s: float) -> None:
    with tempfile.TemporaryDirectory(prefix="lockviz-priority-") as workdir:
        app = App(workdir, dict(ONE_ADDRESS))
        try:
            presenter = Browser(app.url)
            if presents:  # the room is opened: this browser is its presenter
                presenter.post("/rooms/", {})
            busy = MachineCpu()
            runs = asyncio.run(press(app.url, presenter, students, timeout_s))
            tally.cpu.append(busy.percent())
        finally:
            app.stop()
    tally.count(runs[0], runs[1:])


def pick(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def shares(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[o]} {o}" for o in OUTCOMES if counts.get(o))


def table(results: dict[str, Tally], tries: int, students: int) -> str:
    rows = [
        "| the browser that presses with the class | its run | the students' runs "
        "| its steps late p50 / p99 / max (ms) | its press → verdict p50 / max (s) "
        "| CPU (% of all cores) |",
        "|---|---|---|---|---|---|",
    ]
    for way, tally in results.items():
        late, ends = tally.late_ms, tally.verdict_s
        rows.append(
            f"| {way} | {shares(tally.presenter)} | {shares(tally.students)} "
            f"| {pick(late, 0.5):.0f} / {pick(late, 0.99):.0f} / {max(late, default=0):.0f} "
            f"| {pick(ends, 0.5):.1f} / {max(ends, default=float('nan')):.1f} "
            f"| {sum(tally.cpu) / max(1, len(tally.cpu)):.0f} |"
        )
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    machine = f"{os.cpu_count()} cores, {platform.machine()}, load {os.getloadavg()[0]:.1f}"
    return "\n".join(
        [
            BEGIN,
            "## Presenter first: 20 students press Run with the presenter",
            "",
            f"`bench/priority.py`, {when}, {machine} (other work on this shared machine "
            f"included). {tries} tries each way; each try a fresh app, {students} students' "
            f"browsers pressing Run on `{SLUG}` at once and one more {PRESENTER_AFTER_S:g} s "
            "later, every run watched to its end. *Presenter*: that browser opened a room "
            "first, so its run goes ahead of the queue into a slot kept for it and the "
            "students' runs yield the CPU to it "
            "(lockviz/runs/priority.py). *Student*: the same browser with no room.",
            "",
            *rows,
            "",
            "*inconclusive*: the run said the machine fell behind its schedule (its `expect` "
            "not judged), never a wrong verdict.",
            END,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tries", type=int, default=10)
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=240)
    parser.add_argument("--no-doc", action="store_true")
    args = parser.parse_args()
    results = {"presenter": Tally(), "student": Tally()}
    for n in range(args.tries):
        for way, tally in results.items():
            one_try(way == "presenter", args.students, tally, args.timeout)
            print(f"try {n + 1} as {way}: {shares(tally.presenter)}", flush=True)
    text = table(results, args.tries, args.students)
    print(text)
    if not args.no_doc:
        write_section(DOC, text, begin=BEGIN, end=END)


if __name__ == "__main__":
    main()
