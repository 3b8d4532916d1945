"""What a sequencer check costs: a write's round trip with the storage asking the lock service,
against the same write on a fenced storage, for each lock service that can be asked.

Each measurement is one live run: one client acquires the lock and writes ``--writes`` times,
150 ms apart; a write's time is its reply's ``t_ms`` minus its request's (the client's own view,
on the host's monotonic clock). Prints the median and the 90th percentile per backend and
storage kind, and for sequencers how many calls the storage made to the lock service per write.

    .venv/bin/python -m bench.sequencer            # every backend, 30 writes each
    .venv/bin/python -m bench.sequencer --writes 10 zookeeper
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from lockviz.lab.engine import RunEngine
from lockviz.lab.labs import LocalLab
from lockviz.scenarios.schema import parse

BACKENDS: dict[str, dict[str, Any]] = {
    "redis": {},
    "redlock": {"redis_nodes": 3},
    "zookeeper": {},
    "etcd": {},
    "postgres": {"variant": "session"},
}


def measure(backend: str, storage: str, writes: int) -> tuple[list[float], float]:
    steps: list[dict[str, Any]] = [{"at_ms": 0, "client": "alice", "do": "acquire"}]
    steps += [
        {"at_ms": 500 + 150 * i, "client": "alice", "do": "write", "value": f"v{i}"}
        for i in range(writes)
    ]
    scenario = parse({
        "format": 1, "title": f"cost of {storage} on {backend}", "backend": backend,
        "storage": storage, "ttl_ms": 60_000, "clients": ["alice"], "steps": steps,
        **BACKENDS[backend],
    })  # fmt: skip
    result = RunEngine(scenario, LocalLab()).run()
    if result.error:
        raise SystemExit(f"{backend}/{storage}: {result.error}")
    sent = {str(e["call"]): float(str(e["t_ms"])) for e in result.events
            if e["kind"] == "request" and e.get("op") == "write"}  # fmt: skip
    replies = [e for e in result.events if e["kind"] == "reply" and e.get("op") == "write"]
    took = [float(str(e["t_ms"])) - sent[str(e["call"])] for e in replies if str(e["call"]) in sent]
    checks = sum(1 for e in result.events if e["actor"] == "storage" and e["kind"] == "request")
    return took, checks / max(1, len(took))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("backends", nargs="*", default=list(BACKENDS))
    parser.add_argument("--writes", type=int, default=30)
    args = parser.parse_args()
    print("| lock service | fenced write: median (p90) | sequencer write: median (p90) | "
          "calls to the lock service per write |")  # fmt: skip
    print("|---|---|---|---|")
    for backend in args.backends:
        fenced, _ = measure(backend, "plain" if backend == "redlock" else "fenced", args.writes)
        checked, calls = measure(backend, "sequencer", args.writes)
        cells = [f"{statistics.median(t):.1f} ms ({_p90(t):.1f})" for t in (fenced, checked)]
        if backend == "redlock":
            cells[0] += " (plain: Redlock has no tokens)"
        print(f"| {backend} | {cells[0]} | {cells[1]} | {calls:g} |", flush=True)


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
