"""How reliably does each built-in scenario tell its story? Run each N times on the live lab.

A demo that fails in front of a class is this product's worst bug. This runs every built-in
scenario ``--runs`` times (default 20) on fresh servers, ``--jobs`` at a time (default 2: the
machine is loaded on purpose, like a classroom laptop), and counts how many runs met the
scenario's ``expect``, and those that were inconclusive (the machine fell behind and the run
said it could not keep its story: ``expect`` not judged; docs/reliability.md). It prints a
table and writes it into docs/fidelity.md.

    .venv/bin/python bench/fidelity.py                 # everything, 20 runs each
    .venv/bin/python bench/fidelity.py --runs 5 gc-pause-fenced redis-restart
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lockviz.lab.engine import RunEngine  # noqa: E402
from lockviz.lab.labs import LocalLab  # noqa: E402
from lockviz.scenarios.library import builtin  # noqa: E402

DOC = os.path.join(ROOT, "docs", "fidelity.md")


def one_run(slug: str, keep: str | None = None) -> tuple[str, bool, str, float]:
    started = time.monotonic()
    result = RunEngine(builtin()[slug], LocalLab()).run()
    why = result.error or "; ".join(result.mismatches) or result.inconclusive
    if result.inconclusive:
        why = f"inconclusive: {why}"
    ok = result.error is None and result.expect_met is True
    if keep and not ok:  # the whole history of a miss, to read or to replay (/import/)
        os.makedirs(keep, exist_ok=True)
        path = os.path.join(keep, f"{slug}-{time.time_ns()}.json")
        with open(path, "w") as f:
            json.dump({"scenario": builtin()[slug].to_json(), "events": result.events}, f)
    return slug, ok, why, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="scenarios to run (default: all built-ins)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--keep-misses", metavar="DIR", help="save the events of each miss here")
    args = parser.parse_args()
    slugs = args.slugs or list(builtin())
    unknown = [s for s in slugs if s not in builtin()]
    if unknown:
        parser.error(f"unknown scenarios: {', '.join(unknown)}")
    met: collections.Counter[str] = collections.Counter()
    inconclusive: collections.Counter[str] = collections.Counter()
    failures: dict[str, list[str]] = collections.defaultdict(list)
    seconds: dict[str, list[float]] = collections.defaultdict(list)
    started = time.monotonic()
    jobs = [slug for _ in range(args.runs) for slug in slugs]  # interleaved: noise hits all alike
    with ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(one_run, slug, args.keep_misses) for slug in jobs]
        for future in as_completed(futures):
            slug, ok, why, took = future.result()
            met[slug] += ok
            inconclusive[slug] += why.startswith("inconclusive")
            seconds[slug].append(took)
            if not ok:
                failures[slug].append(why)
            print(f"{'ok  ' if ok else 'MISS'} {slug:<28} {took:5.1f} s  {why}", flush=True)
    lines = [
        "| scenario | met `expect` | inconclusive | median run | what went wrong |",
        "|---|---|---|---|---|",
    ]
    for slug in slugs:
        times = sorted(seconds[slug])
        why = "; ".join(sorted(set(failures[slug])))[:200] or ""
        lines.append(
            f"| `{slug}` | {met[slug]}/{args.runs} | {inconclusive[slug]} "
            f"| {times[len(times) // 2]:.1f} s | {why} |"
        )
    total = sum(met.values())
    summary = (
        f"{total}/{len(jobs)} runs met their expectation, {sum(inconclusive.values())} were "
        f"inconclusive; {args.jobs} runs at a time on "
        f"{os.cpu_count()} cores ({platform.machine()}, Python {platform.python_version()}), "
        f"{(time.monotonic() - started) / 60:.1f} min in all, "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC."
    )
    table = "\n".join(lines)
    print("\n" + table + "\n\n" + summary)
    if not args.no_doc:
        write_doc(table, summary, args.runs)


def write_doc(table: str, summary: str, runs: int) -> None:
    with open(DOC, "w") as f:
        f.write(
            "# Fidelity: do the demos tell their story every time?\n\n"
            "A demo that fails in front of a class is lockviz's worst bug. "
            f"`bench/fidelity.py` ran every built-in scenario {runs} times on the live lab "
            "(fresh servers for each run, several runs at once so the machine is loaded) and "
            "counted the runs whose verdict met the scenario's `expect`, and those that were "
            "*inconclusive*: the machine fell behind and the run said it could not keep its "
            "story, so its `expect` was not judged (docs/reliability.md). Timing-dependent "
            "scenarios use margins (pauses well beyond the lease, and so on) rather than "
            "knife edges; a miss below names what differed.\n\n"
            f"{table}\n\n{summary}\n\n"
            "Regenerate with `.venv/bin/python bench/fidelity.py` (about 20–40 minutes on two "
            "cores; `--runs 5` for a quick look).\n"
        )


if __name__ == "__main__":
    main()
