"""A run as the terminal shows it (``manage.py run_scenario``): its events as a text timeline,
then its verdict."""

from __future__ import annotations

from collections.abc import Iterable

from lockviz.lab.events import EventJson, lenient
from lockviz.lab.verdicts import VerdictJson
from lockviz.narrator.telling import Narrator
from lockviz.narrator.verdicts import headline


def render(events: Iterable[EventJson]) -> str:
    """A run as a text timeline: ``  2512.4 ms  #7   bob       believes it holds the lock``."""
    narrator, lines = Narrator(), []
    for e in events:
        event = lenient(e)
        said = narrator.words(event, e)
        if event is None:  # not an event of its kind: no time, number or actor to trust
            lines.append(f"{'?':>9}     #{'?':<3} {'?':<9} {said.phrase}")
            continue
        lines.append(f"{event.t_ms:>9.1f} ms  #{event.seq:<3} {event.actor:<9} {said.phrase}")
    return "\n".join(lines)


def verdict_text(
    verdict: VerdictJson | None, mismatches: list[str], storage: str = "fenced"
) -> str:
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
    lines.append(headline(verdict, storage=storage)[0])
    lines.append(verdict["summary"])
    lines.extend(f"NOT AS EXPECTED: {m}" for m in mismatches)
    return "\n".join(lines)
