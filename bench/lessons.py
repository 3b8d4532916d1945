"""Do the lessons' answers hold on the servers, not only in the recording? Play every lesson's
scenario live N times and check each checkpoint's answer against each run's events.

Each checkpoint's answer is a claim on a run's events (lockviz/teaching/claims/: "Bob is
granted after the server expired Alice's lease", "the storage rejects the write"). This plays
every lesson of the course ``--runs`` times on fresh servers (2 by default, a light load on a
shared machine; ``--full`` for the 10 the course is held to), ``--jobs`` at a time, and counts
for each lesson the runs judged, the checkpoint answers that agreed and those a run
contradicted, naming what the run showed. A run that could not keep its story (the machine fell
behind: the verdict says *inconclusive*, docs/reliability.md) or that failed is counted as
inconclusive and played again, up to ``--retries`` times per lesson: it is never counted as
agreeing. It prints a table and writes it into its section of docs/fidelity.md.

    .venv/bin/python -m bench.lessons                    # every lesson, 2 runs each
    .venv/bin/python -m bench.lessons --full             # every lesson, 10 runs each
    .venv/bin/python -m bench.lessons --runs 5 zk- pg-   # lessons whose slug starts so
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from bench import ROOT, machine
from bench.doc import write_section
from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.scenarios.library import builtin
from lockviz.teaching.claims import CLAIMS
from lockviz.teaching.history import History
from lockviz.teaching.lessons import course

DOC = os.path.join(ROOT, "docs", "fidelity.md")
BEGIN = "<!-- bench/lessons.py: begin -->"
END = "<!-- bench/lessons.py: end -->"


@dataclass
class Tally:
    """One lesson's runs: judged, inconclusive, and each checkpoint's agreements."""

    judged: int = 0
    inconclusive: int = 0
    unmet: int = 0  # judged runs whose verdict missed the scenario's expect
    agreed: int = 0
    contradicted: list[str] = field(default_factory=list)


def play(slug: str, keep: str | None) -> tuple[str, list[tuple[int, bool, str]], str]:
    """One live run of ``slug``: each checkpoint's (index, agrees, why), or why the run was
    inconclusive ("" when it was judged); a judged run that missed its expect says so too."""
    result = RunEngine(builtin()[slug], LocalLab()).run()
    if result.error or result.inconclusive:
        return slug, [], f"inconclusive: {result.error or result.inconclusive}"
    history = History(result.events)
    found = [
        (index, (c := CLAIMS[(slug, index)](history)).agrees, c.why)
        for (s, index) in sorted(CLAIMS)
        if s == slug
    ]
    missed = "" if result.expect_met is not False else "; ".join(result.mismatches)
    if keep and (missed or not all(ok for _, ok, _ in found)):
        os.makedirs(keep, exist_ok=True)
        path = os.path.join(keep, f"{slug}-{time.time_ns()}.json")
        with open(path, "w") as f:
            json.dump({"scenario": builtin()[slug].to_json(), "events": result.events}, f)
    return slug, found, f"missed expect: {missed}" if missed else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slugs", nargs="*", help="lessons (a slug or a prefix); default: all")
    parser.add_argument("--runs", type=int, default=2, help="judged runs per lesson (default 2)")
    parser.add_argument("--full", action="store_true", help="10 runs per lesson")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--retries", type=int, default=5, help="inconclusive runs played again")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--keep", metavar="DIR", help="save the events of each contradiction")
    args = parser.parse_args()
    runs = 10 if args.full else args.runs
    order = [item.slug for item in course()]
    slugs = [s for s in order if not args.slugs or any(s.startswith(n) for n in args.slugs)]
    if not slugs:
        parser.error(f"no lesson matches {' '.join(args.slugs)}")
    tallies = {slug: Tally() for slug in slugs}
    started = time.monotonic()
    pending = collections.Counter({slug: runs for slug in slugs})
    retries = collections.Counter[str]()
    with ThreadPoolExecutor(args.jobs) as pool:
        while pending:
            batch = [slug for slug in slugs for _ in range(pending[slug])]  # interleaved
            pending.clear()
            for slug, found, why in pool.map(lambda s: play(s, args.keep), batch):
                tally = tallies[slug]
                if why.startswith("inconclusive"):
                    tally.inconclusive += 1
                    if retries[slug] < args.retries:
                        retries[slug] += 1
                        pending[slug] += 1
                    print(f"INCONCLUSIVE {slug:<28} {why}", flush=True)
                    continue
                tally.judged += 1
                tally.unmet += bool(why)
                bad = [f"step {i + 1}: {w}" for i, ok, w in found if not ok]
                tally.agreed += sum(ok for _, ok, _ in found)
                tally.contradicted += bad
                print(f"{'CONTRADICTED' if bad else 'ok':<12} {slug:<28} {'; '.join(bad) or why}")
    report(tallies, runs, args, time.monotonic() - started)


def report(tallies: dict[str, Tally], runs: int, args: argparse.Namespace, took: float) -> None:
    lines = [
        "| lesson | judged runs | inconclusive (played again) | answers agreed | contradicted |",
        "|---|---|---|---|---|",
    ]
    for slug, t in tallies.items():
        bad = "; ".join(sorted(set(t.contradicted)))[:200]
        lines.append(
            f"| `{slug}` | {t.judged} | {t.inconclusive} | {t.agreed} | "
            f"{len(t.contradicted)}{f': {bad}' if bad else ''} |"
        )
    judged = sum(t.judged for t in tallies.values())
    agreed = sum(t.agreed for t in tallies.values())
    against = sum(len(t.contradicted) for t in tallies.values())
    unmet = sum(t.unmet for t in tallies.values())
    summary = (
        f"{judged} judged runs of {len(tallies)} lessons ({runs} each asked), "
        f"{sum(t.inconclusive for t in tallies.values())} inconclusive and played again, "
        f"{agreed} checkpoint answers agreed with the run, **{against} contradicted**; "
        f"{unmet} judged runs missed their scenario's `expect`. {args.jobs} runs at a time on "
        f"{machine.cores()}, {took / 60:.1f} min, {machine.now()}."
    )
    table = "\n".join(lines)
    print("\n" + table + "\n\n" + summary)
    if args.no_doc:
        return
    section = (
        f"{BEGIN}\n## Do the lessons' answers hold on every run?\n\n"
        "`bench/lessons.py` plays every lesson's scenario live and checks each checkpoint's "
        "answer against the run's events (each answer's claim: lockviz/teaching/claims/). "
        "A run that could not keep its story is inconclusive: counted, played again, never "
        "counted as agreeing.\n\n"
        f"{table}\n\n{summary}\n\n"
        "Regenerate with `.venv/bin/python -m bench.lessons` (2 runs per lesson, a few "
        "minutes) or `--full` (10 runs per lesson, on a quiet machine).\n"
        f"{END}"
    )
    write_section(DOC, section, begin=BEGIN, end=END)


if __name__ == "__main__":
    main()
