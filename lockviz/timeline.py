"""A run's events as a text timeline, for the terminal (``manage.py run_scenario``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def describe(e: dict[str, Any]) -> str:
    """One event in words: ``alice → redis-1  acquire (lease 2000 ms)``."""
    kind = e["kind"]
    if kind == "request":
        args = []
        if e.get("op") == "write":
            args.append(f"value {e.get('value')!r} with token {e.get('token')}")
        elif "ttl_ms" in e and e["ttl_ms"] is not None:
            args.append(f"lease {e['ttl_ms']} ms")
        if e.get("unsafe"):
            args.append("plain DEL")
        return f"→ {e['to']}  {e['op']}" + (f" ({', '.join(args)})" if args else "")
    if kind == "reply":
        if e.get("op") == "write" and "accepted" in e:
            result = "accepted" if e["accepted"] else f"REJECTED ({e.get('reason')})"
        elif e.get("ok"):
            result = f"OK token {e['token']}" if "token" in e else "OK"
        else:
            result = e.get("error") or e.get("reason") or "no"
        return f"← {e['from']}  {e['op']}: {result}"
    simple = {
        "granted": lambda: _granted(e),
        "acquire_failed": lambda: f"gave up acquiring: {e.get('reason')}",
        "released": lambda: (
            "released"
            if e.get("ok")
            else f"released, but {e.get('reason', 'the lock was not ours')}"
        ),
        "extended": lambda: f"extended to {e.get('ttl_ms')} ms" if e.get("ok") else "extend failed",
        "lost": lambda: f"learned it lost the lock: {e.get('reason')}",
        "paused": lambda: f"FROZEN (SIGSTOP) for {e.get('ms')} ms",
        "resumed": lambda: "thawed (SIGCONT)",
        "crashed": lambda: "CRASHED (kill -9)",
        "restarted": lambda: "restarted",
        "expired": lambda: f"lease of {e.get('holder') or '?'} EXPIRED on the server",
        "deleted": lambda: f"lock key of {e.get('holder') or '?'} deleted",
        "clock_jumped": lambda: (
            f"wall clock jumped {e.get('ms'):+} ms (offset now {e.get('offset_ms'):+} ms)"
        ),
        "step": lambda: (
            f"step {e['index'] + 1}: {e['do']}" + (f" — {e['say']}" if e.get("say") else "")
        ),
        "run_started": lambda: f"run started: {e.get('title')}",
        "run_finished": lambda: "run finished",
        "run_failed": lambda: f"run FAILED: {e.get('error')}",
        "note": lambda: str(e.get("text")),
        "releasing": lambda: "leaves its critical section and releases",
        "session": lambda: f"ZooKeeper session {e.get('state')}",
        "woken": lambda: f"woken to re-check ({e.get('by')})",
        "renewal_started": lambda: f"watchdog renews every {e.get('interval_ms')} ms",
        "link": lambda: (
            f"links to its peers {', '.join(e['peers'])}: {e.get('mode')}"
            if e.get("peers")
            else f"link to {e.get('node')}: {e.get('mode')}"
            + (f" {e.get('ms')} ms" if e.get("mode") == "delay" else "")
        ),
        "clock_rate": lambda: f"own clock now runs at ×{e.get('rate')}",
    }
    return simple[kind]() if kind in simple else kind


def _granted(e: dict[str, Any]) -> str:
    token = f"token {e['token']}" if e.get("token") is not None else "no fencing token"
    lease = f"lease {e['ttl_ms']} ms" if e.get("ttl_ms") else "no lease"
    valid = f", valid {e['validity_ms']} ms" if e.get("validity_ms") else ""
    return f"believes it holds the lock ({token}, {lease}{valid})"


def render(events: Iterable[dict[str, Any]]) -> str:
    lines = []
    for e in events:
        lines.append(f"{e['t_ms']:>9.1f} ms  #{e['seq']:<3} {e['actor']:<9} {describe(e)}")
    return "\n".join(lines)


def verdict_text(verdict: dict[str, Any] | None, mismatches: list[str]) -> str:
    if verdict is None:
        return "No verdict: the run did not complete."
    lines = [
        f"mutual exclusion: {verdict['mutual_exclusion']}",
        f"stale writes accepted: {verdict['stale_writes_accepted']}",
        f"stale writes rejected: {verdict['stale_writes_rejected']}",
        f"data corrupted: {'yes' if verdict['data_corrupted'] else 'no'}",
    ]
    if verdict.get("liveness") == "stuck":
        lines.append(f"liveness: STUCK ({', '.join(verdict.get('stuck_clients', []))})")
    if verdict.get("acquire_failures"):
        lines.append(f"acquires that gave up: {verdict['acquire_failures']}")
    if verdict.get("wakeups"):
        lines.append(f"wake-ups of waiting clients: {verdict['wakeups']}")
    for o in verdict["overlaps"]:
        lines.append(
            f"two holders: {' & '.join(o['clients'])} from {o['start_ms']} to {o['end_ms']} ms"
        )
    lines.append(verdict["summary"])
    lines.extend(f"NOT AS EXPECTED: {m}" for m in mismatches)
    return "\n".join(lines)
