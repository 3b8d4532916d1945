"""How reliably does each built-in scenario tell its story? Run each N times on the live lab.

A demo that fails in front of a class is this product's worst bug. This runs every built-in
scenario ``--runs`` times (default 20) on fresh servers, ``--jobs`` at a time (default 2: the
machine is loaded on purpose, like a classroom laptop), and counts how many runs met the
scenario's ``expect``, and those that were inconclusive (the machine fell behind and the run
said it could not keep its story: ``expect`` not judged; docs/reliability.md). It prints a
table and writes it into docs/fidelity.md: a run of some scenarios replaces their rows and
keeps the others', and the batch's line says which rows it measured, so the table always has
every built-in.

    .venv/bin/python -m bench.fidelity                 # everything, 20 runs each
    .venv/bin/python -m bench.fidelity --runs 5 gc-pause-fenced redis-restart
    .venv/bin/python -m bench.fidelity storage-        # every scenario whose slug starts so
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from bench import ROOT, machine
from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.scenarios.library import builtin

DOC = os.path.join(ROOT, "docs", "fidelity.md")
KEPT = "<!-- below: written by hand, kept as it is by bench/fidelity.py -->"


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
    slugs = chosen(args.slugs)
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
        f"inconclusive; {args.jobs} runs at a time on {machine.cores()}, "
        f"{(time.monotonic() - started) / 60:.1f} min in all, {machine.now()}."
    )
    table = "\n".join(lines)
    print("\n" + table + "\n\n" + summary)
    if not args.no_doc:
        everything = set(slugs) == set(builtin())
        batch = "every built-in" if everything else ", ".join(f"`{s}`" for s in slugs)
        write_doc(lines[2:], f"{batch}: {summary}", args.runs, fresh=everything)


def chosen(names: list[str]) -> list[str]:
    """The scenarios named (a slug, or a prefix such as ``storage-``); every one without names."""
    if not names:
        return list(builtin())
    found: list[str] = []
    for name in names:
        matches = [name] if name in builtin() else [s for s in builtin() if s.startswith(name)]
        found += matches or [name]  # a name that matches nothing is refused below
    return list(dict.fromkeys(found))


def write_doc(rows: list[str], batch: str, runs: int, fresh: bool) -> None:
    """The table of every built-in: these ``rows`` replace their scenarios' old ones, the other
    rows stay as measured before; each batch of measurements keeps its own line."""
    old_rows, old_batches = ({}, []) if fresh else _read_doc()
    kept = _kept()
    measured = {**old_rows, **{_slug(row): row for row in rows}}
    ordered = [measured[slug] for slug in builtin() if slug in measured]
    batches = [*old_batches, f"- {batch}"]
    header = (
        "| scenario | met `expect` | inconclusive | median run | what went wrong |\n"
        "|---|---|---|---|---|"
    )
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
            f"{header}\n" + "\n".join(ordered) + "\n\n"
            "Measured in these batches (the rows of a later batch replace an earlier one's):\n\n"
            + "\n".join(batches)
            + "\n\n"
            "Regenerate with `.venv/bin/python -m bench.fidelity` (about 20–40 minutes on two "
            "cores; `--runs 5` for a quick look; name scenarios, or a prefix such as "
            "`storage-`, to measure only those).\n" + kept
        )


def _slug(row: str) -> str:
    return row.split("`")[1] if row.count("`") >= 2 else ""


def _kept() -> str:
    """What docs/fidelity.md has below :data:`KEPT` (with it), written by hand: "" if none."""
    if not os.path.exists(DOC):
        return ""
    with open(DOC) as f:
        text = f.read()
    return "\n" + text[text.index(KEPT) :] if KEPT in text else ""


def _read_doc() -> tuple[dict[str, str], list[str]]:
    """The rows and batch lines docs/fidelity.md has now (its older form: one summary line)."""
    if not os.path.exists(DOC):
        return {}, []
    with open(DOC) as f:
        lines = f.read().split(KEPT)[0].splitlines()
    rows = {_slug(line): line for line in lines if line.startswith("| `")}
    batches = [line for line in lines if line.startswith("- ")]
    if not batches:  # the older form: the summary of a run of every built-in, on its own line
        summary = next((line for line in lines if " runs met their expectation;" in line), "")
        batches = [f"- every built-in of the time: {summary}"] if summary else []
    return rows, batches


if __name__ == "__main__":
    main()
